// read_file: errors that say why a file cannot be read.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "input/file.h"
#include "input/input_error.h"
#include "tests/scratch_dir.h"

using namespace wiresim::input;
namespace fs = std::filesystem;

namespace {

fs::path scratch() { return scratch_dir(); }

}  // namespace

TEST_CASE("a file reads whole; a missing one, a folder and an unreadable one say why") {
  const fs::path dir = scratch();
  const fs::path file = dir / "a.txt";
  std::ofstream(file, std::ios::binary) << std::string("x\0y\n", 4);
  CHECK(read_file(file.string()) == std::string("x\0y\n", 4));
  CHECK_THROWS_WITH_AS(read_file((dir / "none.yaml").string()),
                       ((dir / "none.yaml").string() + ": cannot read the file: No such file or directory").c_str(),
                       InputError);
  CHECK_THROWS_WITH_AS(read_file(dir.string()), (dir.string() + ": expected a file, got a folder").c_str(), InputError);
  CHECK_THROWS_WITH_AS(read_file(""), "expected a file name, got an empty one", InputError);
  // Permissions: root reads everything, so this part only runs as another user.
  if (::geteuid() != 0) {
    fs::permissions(file, fs::perms::none);
    CHECK_THROWS_WITH_AS(read_file(file.string()), (file.string() + ": cannot read the file: Permission denied").c_str(),
                         InputError);
  }
  fs::remove_all(dir);
}

TEST_CASE("InputError carries file:line:column") {
  const wiresim::input::InputError e("t.yaml", 14, 16, "links[3].bandwidth: expected a rate");
  CHECK(std::string(e.what()) == "t.yaml:14:16: links[3].bandwidth: expected a rate");
  CHECK(std::string(wiresim::input::InputError("just a message").what()) == "just a message");
}
