// Fuzz target: jobs YAML -> JobsSpec (scenarios/jobs.h; the scenarios it names are read too).
// The loader reads a path, so each input goes through a file of this process's own. Bad input must end in
// input::InputError; anything else that escapes is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "scenarios/jobs.h"
#include "input/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/wiresim_fuzz_jobs_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)wiresim::scenarios::load_jobs(path);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
