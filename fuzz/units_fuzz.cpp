// Fuzz target: the unit parsers of sim/units.h and the formatters they feed, and the input
// module's FLOP/s parser and dtype table. A parser may only throw std::invalid_argument;
// what it accepts must format back without trouble.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "input/dtype.h"
#include "input/units.h"
#include "sim/units.h"

namespace {

template <typename F>
void parse(F f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wiresim::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  parse([&] { (void)format_size(parse_size(text)); });
  parse([&] { (void)format_rate(parse_rate(text)); });
  parse([&] { (void)parse_rate_text(text); });
  parse([&] {
    const Seconds t = parse_time(text);
    (void)format_time(t);
    if (t.count() >= 0 && t.count() < 1e6) (void)to_sim_time(t);
  });
  parse([&] { (void)wiresim::input::parse_flops(text); });
  (void)wiresim::input::dtype_size(text);
  return 0;
}
