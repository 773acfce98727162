// Fuzz target: the input module's YAML reader (input/yaml.h, input/document.h) and its typed
// reads, on their own: aliases, anchors, nesting and every unit parser a file reaches. Bad
// input must end in InputError; anything else that escapes is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/document.h"
#include "input/dtype.h"
#include "input/input_error.h"
#include "input/units.h"

namespace {

using wiresim::input::InputError;
using wiresim::input::Value;

template <typename Read>
void attempt(Read read) {
  try {
    (void)read();
  } catch (const InputError&) {
  }
}

// Every typed read on every scalar: none may throw anything but InputError.
void read_all(const Value& v, int depth) {
  namespace in = wiresim::input;
  if (v.kind == Value::Kind::scalar) {
    attempt([&] { return in::as_count(v, "x", -1'000'000, 1'000'000); });
    attempt([&] { return in::as_number(v, "x"); });
    attempt([&] { return in::as_bool(v, "x"); });
    attempt([&] { return in::as_size(v, "x"); });
    attempt([&] { return in::as_rate(v, "x"); });
    attempt([&] { return in::as_time(v, "x"); });
    attempt([&] { return in::as_flops(v, "x"); });
    attempt([&] { return in::as_dtype(v, "x"); });
  }
  if (depth > 100) return;
  for (const auto& item : v.items) read_all(item, depth + 1);
  for (const auto& e : v.entries) read_all(e.value, depth + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    read_all(wiresim::input::read_yaml_text(text, "fuzz.yaml"), 0);
  } catch (const InputError&) {
  }
  try {
    // A folder that does not exist: `include:` cannot reach real files.
    (void)wiresim::input::read_document_text(text, "/nonexistent/fuzz.yaml", {{"nodes", "2"}});
  } catch (const InputError&) {
  }
  return 0;
}
