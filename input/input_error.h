// InputError: bad user input, with the place it was found.
//
// Readers of files throw InputError{file, line, column, message}; line and column are
// 1-based (yaml-cpp marks are 0-based: add 1). A command-line argument has no file:
// leave file empty. tools/ catches it once, prints what() as one line and exits 2.
//
//   throw InputError("topologies/x.yaml", 14, 16, "links[3].bandwidth: expected a rate ...");
//   // what(): "topologies/x.yaml:14:16: links[3].bandwidth: expected a rate ..."
#pragma once

#include <stdexcept>
#include <string>

namespace wiresim::input {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, std::string message)
      : std::runtime_error(compose(file, line, column, message)),
        file_(std::move(file)), line_(line), column_(column), message_(std::move(message)) {}
  // An error with no position (a command-line value, say).
  explicit InputError(std::string message) : InputError("", 0, 0, std::move(message)) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  static std::string compose(const std::string& file, int line, int column,
                             const std::string& message) {
    if (file.empty()) return message;
    if (line <= 0) return file + ": " + message;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
  }
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

}  // namespace wiresim::input
