// The error surface: every command that reads a file, given garbage (an empty file, random
// bytes, a folder, a missing file, a YAML bomb of aliases, deep nesting), exits 2 with one
// line on stderr that names the file, and prints nothing on stdout. Never a crash, a hang,
// an out-of-memory kill or a stack trace.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/tools/run_binary.h"

namespace {

using namespace wiresim_test;

// Commands that read one file, with {} where the file goes. run and sweep join the list
// once they take a file (`wiresim CMD --help` shows a positional argument); validate,
// which also takes folders, has its own case below.
std::vector<std::string> commands() {
  std::vector<std::string> cmds{"topo show {}",
                                "topo matrix {}",
                                "topo dot {}",
                                "topo import {}",
                                "coll all_reduce --topo {}",
                                "coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB --params {}",
                                "calibrate log {}",
                                "calibrate fit {}"};
  for (const std::string cmd : {"run", "sweep"})
    if (wiresim(cmd + " --help").out.find("Positionals:") != std::string::npos) cmds.push_back(cmd + " {}");
  return cmds;
}

std::string with_file(std::string cmd, const std::string& file) {
  return cmd.replace(cmd.find("{}"), 2, "'" + file + "'");
}

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// Each command on `file`: exit 2, nothing on stdout, one line on stderr naming the file.
void expect_refused(const fs::path& file) {
  for (const auto& cmd : commands()) {
    const Run r = wiresim(with_file(cmd, file.string()));
    CAPTURE(cmd);
    expect_one_line_error(r, file.filename().string(), "");
  }
}

}  // namespace

TEST_CASE("garbage: an empty file") { expect_refused(write("empty.yaml", "")); }

TEST_CASE("garbage: random bytes, NULs included") {
  std::mt19937 rng(9);
  std::string bytes(4096, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng());
  expect_refused(write("binary.yaml", bytes));
}

TEST_CASE("garbage: a folder") {
  const fs::path dir = scratch() / "folder.yaml";
  fs::create_directories(dir);
  expect_refused(dir);
}

TEST_CASE("garbage: a missing file") { expect_refused(scratch() / "missing.yaml"); }

TEST_CASE("garbage: a YAML bomb of aliases (10^12 values once expanded)") {
  // Each level names the one below ten times: a 1 KiB text that expands exponentially.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 12; ++i) {
    std::string name(1, 'a');
    name += std::to_string(i);
    text += name;
    text += ": &";
    text += name;
    text += " [";
    for (int k = 0; k < 10; ++k) {
      text += k ? ", *a" : "*a";
      text += std::to_string(i - 1);
    }
    text += "]\n";
  }
  text += "node: *a12\n";
  const fs::path bomb = write("bomb.yaml", text);
  expect_refused(bomb);
  expect_one_line_error(wiresim(with_file("topo show {}", bomb.string())), "bomb.yaml:", "aliases");
}

TEST_CASE("garbage: deep nesting") {
  const std::string depth(100'000, '[');
  const fs::path seq = write("deep_sequence.yaml", "node: " + depth + std::string(100'000, ']') + "\n");
  expect_refused(seq);
  expect_one_line_error(wiresim(with_file("topo show {}", seq.string())), "deep_sequence.yaml:", "nested deeper");
  std::string maps = "node: ";
  for (int i = 0; i < 50'000; ++i) maps += "{a: ";
  maps += "1" + std::string(50'000, '}') + "\n";
  expect_refused(write("deep_map.yaml", maps));
}

// Every YAML reader, given an alias that names a value containing it (a 14-byte file that
// once crashed `topo show` and `run` with a stack overflow) or a chain of aliases nested past
// the reader's depth: one located line, exit 2.
TEST_CASE("garbage: a YAML alias that contains itself, and aliases nested too deep, in every YAML reader") {
  const fs::path cycle = write("cycle.yaml", "a: &a [x, *a]\n");
  std::string chain = "l0: &l0 [x]\n";
  for (int k = 1; k <= 80; ++k) chain += fmt::format("l{}: &l{} [*l{}]\n", k, k, k - 1);
  const fs::path deep = write("alias_chain.yaml", chain);
  const std::vector<std::string> readers{
      "topo show {}",                                                                    // topology
      "run {}",                                                                          // scenario
      "sweep --topo topologies/hgx-h100.yaml --model {}",                                // model file
      "coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB --params {}",         // parameters
      "coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB --overlay {}",        // overlay
      "validate --map {} validation/data",                                               // validation map
      "plan --model scenarios/models/llama-70b.yaml --catalog {}"};                      // hardware catalogue
  for (const auto& cmd : readers) {
    CAPTURE(cmd);
    expect_one_line_error(wiresim(with_file(cmd, cycle.string())), "cycle.yaml:1:4:",
                          "an alias names a value that contains it");
    expect_one_line_error(wiresim(with_file(cmd, deep.string())), "alias_chain.yaml:", "nested deeper than 64 levels");
  }
}

// A count of GPUs is a count: 0 is refused, not read as "all of them".
TEST_CASE("--gpus 0 is an error, not every GPU") {
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --gpus 0"), "--gpus", "got 0");
  expect_one_line_error(
      wiresim("sweep --topo topologies/hgx-h100.yaml --model scenarios/models/llama-70b.yaml --gpus 0"), "--gpus",
      "got 0");
}

// --sizes takes a range or a list of sizes, and says which when given a mix or a bad cell.
TEST_CASE("--sizes: a list gives one row per size, in its order; a range and a list mixed are refused") {
  const Run list = wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 16MiB,64KiB,1GiB --format csv");
  REQUIRE(list.exit_code == 0);
  std::vector<std::string> sizes;
  std::istringstream rows(list.out);
  std::string row;
  std::getline(rows, row);   // the header
  while (std::getline(rows, row))
    if (!row.empty() && row[0] != '#') sizes.push_back(row.substr(0, row.find(',')));
  CHECK(sizes == std::vector<std::string>{"16777216", "65536", "1073741824"});
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB:1GiB,2GiB"), "--sizes",
                        "not both");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB,,2GiB"), "--sizes", "");
  // A range from 0 B would never grow; one size of 0 B is below one element, like 1B.
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 0B:1MiB"), "--sizes",
                        "a range starts above 0 B");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 0B"), "--sizes",
                        "below one element");
}

// validate skips a bad data set among good ones (with its reason in the report), but a run in
// which nothing could be validated is bad input: one line, exit 2.
TEST_CASE("garbage: validate given files that are not data sets") {
  std::vector<fs::path> files{write("empty.csv", ""), write("binary.csv", std::string("\x00\xff\x13\n", 4)),
                              scratch() / "missing.csv"};
  for (const auto& f : files) expect_one_line_error(wiresim(with_file("validate {}", f.string())), f.filename().string(), "");
}

// Absurd requests are refused before anything big is built, saying what and how much;
// never an out-of-memory kill.
TEST_CASE("absurd requests: refused up front with the estimate and the limit") {
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1e18B"), "--sizes", "1 PB");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB,1e18B"), "--sizes", "1 PB");
  // 10 million GPUs.
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=1250000"),
                        "nodes", "100000");
  // 16,000 GPUs: the topology builds, the plan of some 8e9 transfers would need 1.5 TiB at
  // full detail (--aggregate 1; by default coll aggregates instead: tools/coll_scale_test).
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2000 "
                                "--sizes 1GiB --algo ring --aggregate 1"),
                        "--max-memory", "the limit is 8 GiB");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 400TB --algo ring --aggregate 1"),
                        "--max-memory", "GiB of memory");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --aggregate 0"), "--aggregate",
                        "expected 1 or more");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --aggregate lots"), "--aggregate",
                        "expected auto or a whole number");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1GiB --algo ring --proto ll "
                                "--max-events 1e4"),
                        "--max-events", "the limit is 1e+04");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --max-memory lots"),
                        "--max-memory", "");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --max-events -3"),
                        "--max-events", "expected a count");
}

TEST_CASE("a forced algorithm is refused for why it cannot run on these ranks; a forced protocol is named") {
  // Not for the first protocol the tuner tried: pat on one node is refused for the node.
  const Run pat = wiresim("coll all_gather --topo topologies/hgx-h100.yaml --algo pat");
  expect_one_line_error(pat, "--algo pat:", "pat runs between nodes");
  CHECK(pat.err.find("--proto") == std::string::npos);
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --algo nvls --proto ll"),
                        "--algo nvls --proto ll:", "Simple protocol only");
}
