// Fuzz target: the all_to_all traffic matrix of `coll --matrix` (input/traffic_matrix.h).
// The first byte picks the rank count (1 to 16), the rest is the file. Bad input must end in
// InputError; anything else that escapes is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "input/traffic_matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int n = 1 + data[0] % 16;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto m = wiresim::input::parse_traffic_matrix(text, "fuzz.csv", n);
    if (m.size() != static_cast<std::size_t>(n) * n) __builtin_trap();
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
