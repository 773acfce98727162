#include "input/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::input {
namespace {

[[noreturn]] void fail_with_errno(const std::string& path, int error) {
  throw InputError(path, 0, 0, fmt::format("cannot read the file: {}", std::generic_category().message(error)));
}

// Closes the descriptor on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

}  // namespace

std::string read_file(const std::string& path) {
  if (path.empty()) throw InputError("expected a file name, got an empty one");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_with_errno(path, errno);
  const Descriptor guard{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail_with_errno(path, errno);
  if (S_ISDIR(info.st_mode)) throw InputError(path, 0, 0, "expected a file, got a folder");
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      fail_with_errno(path, errno);
    }
    text.append(buffer, static_cast<std::size_t>(got));
    if (static_cast<long long>(text.size()) > kMaxFileBytes)
      throw InputError(path, 0, 0, fmt::format("the file is larger than {} GiB; expected a text input",
                                               kMaxFileBytes >> 30));
  }
  return text;
}

std::string beside(const std::string& file, const std::string& relative) {
  const std::filesystem::path p(relative);
  if (p.is_absolute()) return relative;
  return (std::filesystem::path(file).parent_path() / p).lexically_normal().string();
}

}  // namespace wiresim::input
