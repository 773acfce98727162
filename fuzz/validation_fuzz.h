// What the validation fuzz targets share: the validation map and data-set readers of the
// accuracy library (accuracy/dataset.h). Each input goes through a file of this process's own,
// as the readers take paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "accuracy/dataset.h"
#include "fuzz/input_file.h"
#include "input/input_error.h"

namespace wiresim_fuzz {

// Writes the input to a file named ...suffix and reads it; bad input must end in InputError.
template <typename Read>
int read_as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix, Read read) {
  static const InputFile file("validation" + suffix);   // one suffix a target
  const std::string& path = file.write(data, size);
  try {
    (void)read(path);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}

}  // namespace wiresim_fuzz
