// What the validation fuzz targets share: the validation map and data-set readers of the
// accuracy library (accuracy/dataset.h). Each input goes through a file of this process's own,
// as the readers take paths.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "accuracy/dataset.h"
#include "input/input_error.h"

namespace wiresim_fuzz {

// Writes the input to a file named ...suffix and reads it; bad input must end in InputError.
template <typename Read>
int read_as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix, Read read) {
  const std::string path = "/tmp/wiresim_fuzz_validation_" + std::to_string(::getpid()) + suffix;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)read(path);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}

}  // namespace wiresim_fuzz
