// Every shipped scenario, validate and two collectives print what they printed when the
// outputs were last deliberately changed (tests/data/golden, rewritten by tools/golden): a
// refactoring must leave them byte-identical, and a change that moves a number must say so by
// rewriting them in the same commit.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "tests/sanitized.h"
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

// Under the sanitizers (tests/sanitized.h) `validate` over every data set is nearly all of this
// test's time (about 1,000 s there, 38 s in Release): there it runs on one data set of each
// kind of collective, algorithm, protocol and transport instead (1.5 s in Release), and each
// row it prints for a data set must be that data set's row in the golden output. The plain
// suite compares the whole output.
constexpr const char* kSanitizedValidateSets[] = {
    "a100_hgx8_allreduce_oci-bm-gpu4-ocitutorials.csv",       // ring LL/LL128/Simple
    "h100_2node16_ib_ndr_allreduce_nccl-tests-i309.csv",      // tree, ring, NVLS tree over IB
    "h100_hgx8_allreduce_nvls_together-nccl-tests.csv",       // NVLS
    "h100_hgx8_alltoall_xxrjun-nccl-tests-cluster.csv",       // all-to-all
    "h100_hgx8_sendrecv_xxrjun-nccl-tests-cluster.csv",       // send/receive
    "b200_hgx8_allgather_vultr-poc.csv",                      // all-gather
    "h100_hgx8_reducescatter_ring_together-nccl-tests.csv",   // reduce-scatter
    "mi300x_1node8_allreduce_amd-rocm-docs.csv",              // AMD
    "a40_pcie2_node_p2pdisable_allreduce_eugenesiow.csv",     // PCIe through host memory
    "h100_dgx4_p2pdisable_allreduce_eugenesiow.csv",          // tree over PCIe
    "gb200_1tray4_allreduce_oci.csv",                         // NVL72
    "h100_2node16_tcpxo_allgather_dstack-gcp-a3mega.csv",     // TCPXO
    "b200_2node16_ib_ndr_sendrecv_together-nccl-tests.csv",   // send/receive across nodes
    "mi355x_1node8_alltoall_prasadnair-alibaba.csv",          // all-to-all with LL
};

void check_sanitized_validate(const std::string& expected) {
  std::string args = "validate";
  for (const char* set : kSanitizedValidateSets) args += fmt::format(" validation/data/{}", set);
  const Run r = wiresim(args);
  REQUIRE(r.exit_code == 0);
  std::istringstream out(r.out);
  std::string line;
  int rows = 0;
  while (std::getline(out, line))
    for (const char* set : kSanitizedValidateSets)
      if (line.starts_with(std::string(set) + ' ')) {
        CHECK_MESSAGE(expected.find(line + '\n') != std::string::npos, "not a row of the golden output: ", line);
        ++rows;
      }
  CHECK(rows == static_cast<int>(std::size(kSanitizedValidateSets)));
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
    if (kSanitized && line == "validate") {
      check_sanitized_validate(slurp(expected_file));
      ++compared;
      continue;
    }
    const Run r = wiresim(line);
    REQUIRE(r.exit_code == 0);
    const std::string expected = slurp(expected_file);
    CHECK_MESSAGE(r.out == expected, first_difference(expected, r.out),
                  "\n(if the change is meant to move this output, run tools/golden and say why in the commit)");
    ++compared;
  }
  CHECK(compared >= 20);
}
