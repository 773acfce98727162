// Fuzz target: nccl-tests output -> NcclTestsLog (calibrate/nccl_tests_log.h). Bad input
// must end in input::InputError; anything else that escapes is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/nccl_tests_log.h"
#include "input/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)wiresim::calibrate::looks_like_nccl_tests_log(text);
  try {
    const auto log = wiresim::calibrate::parse_nccl_tests_log(text, "fuzz.txt");
    (void)log.rank_count();
    (void)log.host_count();
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
