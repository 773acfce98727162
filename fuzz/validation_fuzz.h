// What the validation fuzz targets share: the validation map and data-set readers, which are
// still inside tools/cmd_validate.cpp (its anonymous namespace). Including that file reaches
// them without a change to the command; when they move to a library of their own, the two
// targets call it instead. Each input goes through a file of this process's own, as the
// readers take paths.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "tools/cmd_validate.cpp"

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
