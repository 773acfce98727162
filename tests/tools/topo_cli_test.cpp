// `wiresim topo ...` end to end: outputs on shipped files, and bad input exits 2 with one
// line naming file:line:column.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Run {
  int exit_code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("wiresim_topo_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

Run wiresim(const std::string& args) {
  const fs::path dir = scratch();
  const std::string cmd = std::string("cd " WIRESIM_SOURCE_DIR " && " WIRESIM_BINARY " ") + args +
                          " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_one_line_error(const Run& r, const std::string& where, const std::string& says) {
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(where) != std::string::npos);
  CHECK(r.err.find(says) != std::string::npos);
}

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
                        "tests/data/topo/no_such.yaml", "cannot read");
}
