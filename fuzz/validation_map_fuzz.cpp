// Fuzz target: validation/map.yaml, which data set stands for which machine (`validate
// --map`). Bad input must end in InputError; anything else that escapes is a bug.
#include "fuzz/validation_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wiresim_fuzz::read_as_file(data, size, ".yaml", wiresim::accuracy::read_map);
}
