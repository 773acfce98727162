// For loaders that read a path: a file of this fuzzing process's own under /tmp that each input
// is written to, removed when the process exits normally (libFuzzer's time limit included).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace wiresim_fuzz {

class InputFile {
 public:
  explicit InputFile(const std::string& name)
      : path_("/tmp/wiresim_fuzz_" + std::to_string(::getpid()) + "_" + name) {}
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { std::remove(path_.c_str()); }

  // The input's bytes as the file's whole content; its path.
  const std::string& write(const std::uint8_t* data, std::size_t size) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace wiresim_fuzz
