// Fuzz target: a validation data set, an nccl-tests CSV (`wiresim validate FILE.csv`). Bad
// input must end in InputError; anything else that escapes is a bug.
#include "fuzz/validation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wiresim_fuzz::read_as_file(data, size, ".csv", wiresim::accuracy::read_data);
}
