// Runs the built `wiresim` (WIRESIM_BINARY) from the source folder, as a user would, and
// captures its exit code, stdout and stderr; shared by the tests of tests/tools/.
//
//   const Run r = wiresim("topo show topologies/hgx-h100.yaml");
//   CHECK(r.exit_code == 0);
//   expect_one_line_error(wiresim("topo show nope.yaml"), "nope.yaml", "cannot read");
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/scratch_dir.h"

namespace wiresim_test {

namespace fs = std::filesystem;

struct Run {
  int exit_code;  // -1 when killed by a signal (a crash, an out-of-memory kill)
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder of this test process's own, for inputs and outputs.
inline fs::path scratch() { return scratch_dir(); }

// `args` goes through the shell, so quote what needs quoting.
inline Run wiresim(const std::string& args) {
  const fs::path dir = scratch();
  const std::string cmd = std::string("cd " WIRESIM_SOURCE_DIR " && " WIRESIM_BINARY " ") + args +
                          " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

inline int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline void expect_one_line_error(const Run& r, const std::string& where, const std::string& says) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(where) != std::string::npos);
  CHECK(r.err.find(says) != std::string::npos);
}

}  // namespace wiresim_test
