// The --matrix reader: n lines of n sizes, errors at their line and column.
#include <doctest/doctest.h>

#include <string>

#include "input/input_error.h"
#include "input/traffic_matrix.h"

using namespace wiresim::input;

TEST_CASE("a traffic matrix reads row-major, comments and blank lines skipped, the diagonal zeroed") {
  const std::string text = "# bytes rank i sends rank j\n1MiB, 2MiB\n\n 4KiB ,8B  # rank 1\r\n";
  // Rank 0 sends rank 1 2 MiB; rank 1 sends rank 0 4 KiB; what a rank sends itself is 0.
  CHECK(parse_traffic_matrix(text, "m.csv", 2) == std::vector<double>{0, 2097152, 4096, 0});
  // Blanks separate the cells of a line without commas; a bad cell is still found where it is.
  CHECK(parse_traffic_matrix("0B 2MiB\n\t4KiB   8B\n", "m.txt", 2) == std::vector<double>{0, 2097152, 4096, 0});
  CHECK_THROWS_WITH_AS(parse_traffic_matrix("1MiB 1MiB\n1MiB  7\n", "m.txt", 2),
                       "m.txt:2:7: expected a size with a unit (8B, 4KiB, 64MB, 1GiB), got '7' with no unit",
                       InputError);
}

TEST_CASE("a matrix of the wrong shape or with a bad cell is refused where it is") {
  CHECK_THROWS_WITH_AS(parse_traffic_matrix("1MiB,1MiB,1MiB\n1MiB,1MiB\n", "m.csv", 2),
                       "m.csv:1:11: expected 2 columns, found more", InputError);
  CHECK_THROWS_WITH_AS(parse_traffic_matrix("1MiB\n1MiB,1MiB\n", "m.csv", 2), "m.csv:1:1: expected 2 columns, found 1",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_traffic_matrix("1MiB,1MiB\n1MiB,1MiB\n1MiB,1MiB\n", "m.csv", 2),
                       "m.csv:3:1: expected 2 rows (one per rank), found more", InputError);
  CHECK_THROWS_WITH_AS(parse_traffic_matrix("1MiB,1MiB\n", "m.csv", 2), "m.csv:2:1: expected 2 rows (one per rank), found 1",
                       InputError);
  // The cell "7" has no unit: column 7 of line 2 (after "1MiB, ").
  try {
    parse_traffic_matrix("1MiB,1MiB\n1MiB, 7\n", "m.csv", 2);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(e.column() == 7);
    CHECK(e.message().find("with no unit") != std::string::npos);
  }
}
