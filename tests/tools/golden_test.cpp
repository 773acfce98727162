// Every shipped scenario, validate and two collectives print what they printed when the
// outputs were last deliberately changed (tests/data/golden, rewritten by tools/golden): a
// refactoring must leave them byte-identical, and a change that moves a number must say so by
// rewriting them in the same commit.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "tests/tools/run_binary.h"

using namespace wiresim_test;

namespace {

// The first line where `a` and `b` differ, both sides, for the message.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ga = static_cast<bool>(std::getline(x, la)), gb = static_cast<bool>(std::getline(y, lb));
    if (!ga && !gb) return "the same lines (a difference in the final newline)";
    if (!ga || !gb || la != lb)
      return fmt::format("line {}:\n  expected: {}\n  printed:  {}", n, ga ? la : "(end)", gb ? lb : "(end)");
  }
}

}  // namespace

TEST_CASE("golden outputs: shipped scenarios, validate and coll print what tests/data/golden holds") {
  const fs::path dir = fs::path(WIRESIM_SOURCE_DIR) / "tests/data/golden";
  std::ifstream commands(dir / "commands.txt");
  REQUIRE(commands);
  std::string line;
  int n = 0, compared = 0;
  while (std::getline(commands, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const fs::path expected_file = dir / fmt::format("{:02d}.out", n);
    CAPTURE(line);
    REQUIRE_MESSAGE(fs::exists(expected_file), "no ", expected_file.string(), ": run tools/golden");
    const Run r = wiresim(line);
    REQUIRE(r.exit_code == 0);
    const std::string expected = slurp(expected_file);
    CHECK_MESSAGE(r.out == expected, first_difference(expected, r.out),
                  "\n(if the change is meant to move this output, run tools/golden and say why in the commit)");
    ++compared;
  }
  CHECK(compared >= 20);
}
