// A folder of this test process's own under the system's temporary directory, for the files a
// test writes: made at the first call, removed with everything in it when the process exits
// normally (a crash leaves it for a look).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

inline std::filesystem::path scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir{std::filesystem::temp_directory_path() / ("wiresim_test_" + std::to_string(::getpid()))};
  std::filesystem::create_directories(dir.path);
  return dir.path;
}
