// `wiresim topo ...` end to end: outputs on shipped files, and bad input exits 2 with one
// line naming file:line:column.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tools/run_binary.h"

namespace {

namespace fs = std::filesystem;
using wiresim_test::expect_one_line_error;
using wiresim_test::lines;
using wiresim_test::Run;
using wiresim_test::scratch;
using wiresim_test::slurp;
using wiresim_test::wiresim;

}  // namespace

TEST_CASE("wiresim topo show, matrix and dot on shipped files") {
  const Run show = wiresim("topo show topologies/hgx-h100.yaml");
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("nvlink 450 GB/s (18 links)") != std::string::npos);
  CHECK(show.out.find("NVLink domains: 1 of 8 GPUs") != std::string::npos);
  const Run matrix = wiresim("topo matrix topologies/hgx-h100.yaml");
  CHECK(matrix.exit_code == 0);
  CHECK(matrix.out.find("GPU0\t X \tNV18\tNV18") != std::string::npos);
  const Run pcie = wiresim("topo matrix topologies/pcie-8gpu-2socket.yaml");
  CHECK(pcie.out.find("GPU0\t X \tPIX\tNODE\tNODE\tSYS") != std::string::npos);
  const Run cluster = wiresim("topo show topologies/cluster-h100-ib.yaml --set nodes=64");
  CHECK(cluster.exit_code == 0);
  CHECK(cluster.out.find("512 GPUs") != std::string::npos);
  const Run dot = wiresim("topo dot topologies/mi300x-8.yaml");
  CHECK(dot.exit_code == 0);
  CHECK(dot.out.starts_with("graph \"mi300x-8\""));
}

TEST_CASE("wiresim topo import writes a topology that prints the same matrix") {
  const std::string yaml = (scratch() / "h100.yaml").string();
  const Run import = wiresim("topo import tests/data/topo/topo_h100_dgx_8gpu_13nic.txt -o " + yaml);
  CHECK(import.exit_code == 0);
  const Run matrix = wiresim("topo matrix " + yaml);
  CHECK(matrix.exit_code == 0);
  CHECK(matrix.out.find("GPU0\t X \tNV18") != std::string::npos);
  CHECK(matrix.out.find("NIC8\tSYS\tSYS\tSYS\tSYS\tNODE") != std::string::npos);
}

TEST_CASE("bad input: exit code 2 and one line FILE:LINE:COL") {
  expect_one_line_error(wiresim("topo show tests/data/topo/bad_unknown_key.yaml"),
                        "tests/data/topo/bad_unknown_key.yaml:8:", "did you mean 'latency'?");
  expect_one_line_error(wiresim("topo show tests/data/topo/cycle_a.yaml"),
                        "cycle_b.yaml:2:10:", "include cycle");
  expect_one_line_error(wiresim("topo import tests/data/topo/bad_matrix.txt"),
                        "tests/data/topo/bad_matrix.txt:4:14:", "unknown label 'PIXX'");
  expect_one_line_error(wiresim("topo show topologies/cluster-h100-ib.yaml --set nodez=4"),
                        "--set nodez=4", "did you mean 'nodes'?");
  expect_one_line_error(wiresim("topo show topologies/cluster-h100-ib.yaml --set nodes=0"),
                        "cluster-h100-ib.yaml:", "expected a count from 1");
  expect_one_line_error(wiresim("topo matrix tests/data/topo/no_such.yaml"),
                        "tests/data/topo/no_such.yaml", "cannot read the file: No such file or directory");
}

// A NIC typed in bytes (400GB/s, 8x the NDR port it meant) is a warning at its place on stderr;
// the command still runs.
TEST_CASE("plausibility warnings: printed to stderr with file:line:column, not errors") {
  const fs::path file = scratch() / "nic-in-bytes.yaml";
  std::string text = slurp(WIRESIM_SOURCE_DIR "/topologies/cluster-h100-ib.yaml");
  const auto at = text.find("nic_link: {bandwidth: 400Gb/s");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string("nic_link: {bandwidth: 400Gb/s").size(), "nic_link: {bandwidth: 400GB/s");
  const auto include = text.find("include: hgx-h100.yaml");
  REQUIRE(include != std::string::npos);
  text.insert(include + 9, WIRESIM_SOURCE_DIR "/topologies/");
  std::ofstream(file) << text;
  const Run r = wiresim("topo show " + file.string());
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(!r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("nic-in-bytes.yaml:") != std::string::npos);
  CHECK(r.err.find(": warning: fabric.nic_link.bandwidth: 400 GB/s per cable is 3.2 Tb/s") != std::string::npos);
  CHECK(r.err.find("did you mean 400Gb/s (50 GB/s)?") != std::string::npos);
  // coll, run and sweep load the topology through the same path and say the same.
  CHECK(wiresim("coll all_reduce --sizes 1MiB --topo " + file.string()).err.find("warning") != std::string::npos);
}
