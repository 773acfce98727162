// Fuzz target: a model parameter file (`--params`, models/params.h). Bad input must end in
// InputError; anything else that escapes is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "models/params.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = wiresim::models::parse_params(text, "fuzz.yaml");
    (void)p.arch("hopper");
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
