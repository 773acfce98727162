// Fuzz target: jobs YAML -> JobsSpec (scenarios/jobs.h; the scenarios it names are read too).
// The loader reads a path, so each input goes through a file of this process's own. Bad input must end in
// input::InputError; anything else that escapes is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenarios/jobs.h"
#include "fuzz/input_file.h"
#include "input/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const wiresim_fuzz::InputFile file("jobs.yaml");
  const std::string& path = file.write(data, size);
  try {
    (void)wiresim::scenarios::load_jobs(path);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
