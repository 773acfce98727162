// Bad input: every error is an InputError at file:line:column that says what is wrong and
// what was expected. One case (or more) per error class.
#include <doctest/doctest.h>

#include <string>

#include "input/input_error.h"
#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/import.h"

using namespace wiresim::topo;
using wiresim::input::InputError;

namespace {

// A valid two-GPU box; each case below edits one line of it.
const std::string kGood =
    "name: t\n"                                                                              // 1
    "node:\n"                                                                                // 2
    "  devices:\n"                                                                           // 3
    "    gpu: {kind: gpu, count: 2, model: H100, arch: hopper, memory_bandwidth: 3.35TB/s}\n"  // 4
    "    nvswitch: {kind: nvswitch, multicast: true}\n"                                      // 5
    "  links:\n"                                                                             // 6
    "    - {from: gpu, to: nvswitch, tier: nvlink, count: 18, link_bandwidth: 25GB/s, latency: 250ns}\n";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

InputError error_of(const std::string& yaml, const Overrides& overrides = {}) {
  try {
    load_topology_text(yaml, "t.yaml", overrides);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for:\n" << yaml);
  return InputError("");
}

// Expects an error at `line`, at the column where `at` starts on that line.
void expect(const std::string& yaml, int line, const std::string& at, const std::string& says) {
  const InputError e = error_of(yaml);
  const std::string what = e.what();
  CAPTURE(what);
  std::size_t start = 0;
  for (int l = 1; l < line; ++l) start = yaml.find('\n', start) + 1;
  const std::string text = yaml.substr(start, yaml.find('\n', start) - start);
  REQUIRE(text.find(at) != std::string::npos);
  CHECK(e.file() == "t.yaml");
  CHECK(e.line() == line);
  CHECK(e.column() == static_cast<int>(text.find(at)) + 1);
  CHECK(e.message().find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("the good file loads, also with the short form 'kind: count'") {
  CHECK(load_topology_text(kGood, "t.yaml").gpus().size() == 2);
  const LinkGraph g = load_topology_text(replace(kGood, "    nvswitch:", "    cpu: 2\n    nvswitch:"), "t.yaml");
  CHECK(g.find("cpu1").has_value());
  expect(replace(kGood, "    nvswitch:", "    host: 2\n    nvswitch:"), 5, "2", "needs a name that is a kind");
}

TEST_CASE("unknown keys name the nearest known key") {
  expect(replace(kGood, "latency:", "latncy:"), 7, "latncy", "unknown key 'latncy'; did you mean 'latency'?");
  expect(replace(kGood, "name: t", "nmae: t"), 1, "nmae", "did you mean 'name'?");
  expect(replace(kGood, "multicast: true", "multicst: true"), 5, "multicst", "did you mean 'multicast'?");
  expect(replace(kGood, "tier: nvlink", "tier: nvlnk"), 7, "nvlnk", "unknown tier 'nvlnk'; did you mean 'nvlink'?");
  expect(replace(kGood, "kind: nvswitch", "kind: nvswich"), 5, "nvswich", "did you mean 'nvswitch'?");
  expect(replace(kGood, "arch: hopper", "arch: hoper"), 4, "hoper", "did you mean 'hopper'?");
  expect(replace(kGood, "to: nvswitch,", "to: nvswitc,"), 7, "nvswitc", "no device group 'nvswitc'; did you mean 'nvswitch'?");
}

TEST_CASE("an NVMe drive's read rate: a rate with a unit, on nvme devices only") {
  const std::string drives = replace(kGood, "    nvswitch:", "    nvme: {kind: nvme, count: 2, read: 7GB/s}\n    nvswitch:");
  const LinkGraph g = load_topology_text(drives, "t.yaml");
  REQUIRE(g.find("nvme1").has_value());
  CHECK(g.device(*g.find("nvme1")).read_bandwidth.count() == rel_approx(7e9));
  expect(replace(drives, "read: 7GB/s", "read: 7"), 5, "7", "expected a rate with a unit");
  expect(replace(kGood, "memory_bandwidth: 3.35TB/s", "memory_bandwidth: 3.35TB/s, read: 7GB/s"), 4, "7GB/s",
         "read: applies to nvme devices only, not to a gpu");
}

TEST_CASE("a CPU's vendor: intel, amd or arm, on cpu devices only") {
  const std::string hosts = replace(kGood, "    nvswitch:", "    cpu: {kind: cpu, count: 2, vendor: amd}\n    nvswitch:");
  const LinkGraph g = load_topology_text(hosts, "t.yaml");
  REQUIRE(g.find("cpu1").has_value());
  CHECK(g.device(*g.find("cpu1")).vendor == "amd");
  CHECK(g.device(*g.find("gpu0")).vendor.empty());
  expect(replace(hosts, "vendor: amd", "vendor: amdd"), 5, "amdd", "unknown CPU vendor 'amdd'; did you mean 'amd'?");
  expect(replace(kGood, "memory_bandwidth: 3.35TB/s", "memory_bandwidth: 3.35TB/s, vendor: intel"), 4, "intel",
         "vendor: applies to cpu devices only, not to a gpu");
}

TEST_CASE("missing fields say which") {
  expect(replace(kGood, ", latency: 250ns", ""), 7, "{from", "missing 'latency'");
  expect(replace(kGood, ", link_bandwidth: 25GB/s", ""), 7, "{from", "missing 'bandwidth'");
  expect(replace(kGood, ", memory_bandwidth: 3.35TB/s", ""), 4, "{kind", "missing 'memory_bandwidth'");
  expect("name: t\n", 1, "name", "missing 'node'");
}

TEST_CASE("wrong types say what was expected") {
  expect(replace(kGood, "count: 18", "count: many"), 7, "many", "expected a whole number");
  expect(replace(kGood, "count: 18", "count: 1.5"), 7, "1.5", "expected a whole number");
  expect(replace(kGood, "count: 2,", "count: -2,"), 4, "-2", "expected a count from 0");
  expect(replace(kGood, "multicast: true", "multicast: maybe"), 5, "maybe", "expected true or false");
  expect(replace(replace(kGood, "  links:\n", "  links: {}\n"), "    - {from", "#"), 6, "{}", "expected a list");
  expect(replace(kGood, "memory_bandwidth: 3.35TB/s", "memory_bandwidth: [1]"), 4, "[1]", "expected a rate with a unit");
}

TEST_CASE("bandwidths and latencies must be positive and carry a known unit") {
  expect(replace(kGood, "25GB/s", "0GB/s"), 7, "0GB/s", "expected a positive rate");
  expect(replace(kGood, "25GB/s", "-25GB/s"), 7, "-25GB/s", "that is not negative");
  expect(replace(kGood, "25GB/s", "25"), 7, "25,", "expected a rate with a unit");
  expect(replace(kGood, "25GB/s", "25GX/s"), 7, "25GX/s", "unknown rate");
  expect(replace(kGood, "250ns", "0ns"), 7, "0ns", "expected a positive time");
  expect(replace(kGood, "250ns", "250"), 7, "250}", "expected a time with a unit");
  expect(replace(kGood, "250ns", "3min"), 7, "3min", "unknown time unit");
}

TEST_CASE("duplicate names and duplicate links") {
  expect(replace(kGood, "    nvswitch:", "    gpu: {kind: nic}\n    nvswitch:"), 5, "gpu", "duplicate key 'gpu'");
  expect(kGood + "    - {from: nvswitch, to: gpu, tier: nvlink, bandwidth: 5GB/s, latency: 1us}\n", 8, "{from",
         "a second link between the same two devices");
  expect(replace(kGood, "    gpu: {", "    gpu1: {"), 4, "gpu1", "does not end in a digit");
}

TEST_CASE("a GPU that cannot reach the others") {
  const std::string island =
      replace(kGood, "    nvswitch:", "    spare: {kind: gpu, model: L40S, arch: ada, memory_bandwidth: 864GB/s}\n    nvswitch:");
  expect(island, 5, "spare", "spare0 cannot reach gpu0");
}

TEST_CASE("references, patterns, nodes and fabrics") {
  expect(replace(kGood, "from: gpu,", "from: \"gpu[5]\","), 7, "\"gpu[5]\"", "with 0 <= i < 2");
  expect(replace(kGood, "tier: nvlink,", "tier: nvlink, pattern: ring,"), 7, "ring", "unknown 'ring'");
  expect(kGood + "nodes: 2\n", 8, "2", "needs a 'fabric:'");
  expect(replace(kGood, "tier: nvlink", "tier: ib"), 7, "ib", "network tier");
}

TEST_CASE("parameters: unknown references and unknown --set names") {
  const std::string with_params = "parameters: {gpus: 2}\n" + replace(kGood, "count: 2,", "count: \"${gpus}\",");
  CHECK(load_topology_text(with_params, "t.yaml", {{"gpus", "4"}}).gpus().size() == 4);
  const InputError bad_set = error_of(with_params, {{"gpu", "4"}});
  CHECK(std::string(bad_set.what()).find("no parameter 'gpu'; did you mean 'gpus'?") != std::string::npos);
  // A bad value from --set is reported where it lands, saying where it came from. (In a
  // flow mapping {...} a ${parameter} needs quotes: YAML reads '{' there as syntax.)
  const InputError bad_value = error_of(with_params, {{"gpus", "two"}});
  CHECK(bad_value.line() == 5);
  CHECK(std::string(bad_value.what()).find("${gpus} = 'two' from --set") != std::string::npos);
  expect(replace(kGood, "count: 2,", "count: \"${gpuz}\","), 4, "\"${gpuz}\"", "unknown parameter '${gpuz}'");
  CHECK_THROWS_AS(parse_overrides({"nodes"}), InputError);
  CHECK(parse_overrides({"nodes=64"}).at("nodes") == "64");
}

TEST_CASE("YAML syntax errors and include cycles") {
  const InputError syntax = error_of(replace(kGood, "multicast: true}", "multicast: true"));
  CHECK(syntax.line() > 0);
  CHECK(syntax.message().find("not valid YAML") != std::string::npos);
  const std::string dir = WIRESIM_SOURCE_DIR "/tests/data/topo/";
  try {
    load_topology(dir + "cycle_a.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == dir + "cycle_b.yaml");
    CHECK(e.line() == 2);
    CHECK(e.column() == 10);
    CHECK(e.message().find("include cycle: cycle_a.yaml -> cycle_b.yaml -> cycle_a.yaml") != std::string::npos);
  }
  CHECK_THROWS_AS(load_topology(dir + "no_such_file.yaml"), InputError);
}

TEST_CASE("matrices that cannot be parsed") {
  const auto error = [](const std::string& text) {
    try {
      parse_topo_matrix(text, "m.txt");
    } catch (const InputError& e) {
      return e;
    }
    FAIL("no error");
    return InputError("");
  };
  const std::string good = "\tGPU0\tGPU1\tNIC0\n"
                           "GPU0\t X \tNV4\tPIX\n"
                           "GPU1\tNV4\t X \tPIX\n"
                           "NIC0\tPIX\tPIX\t X \n";
  CHECK(parse_topo_matrix(good, "m.txt").labels[0][1] == "NV4");
  CHECK(error("hello\n").message().find("no `nvidia-smi topo -m` header") != std::string::npos);
  const InputError label = error(replace(good, "GPU1\tNV4\t X \tPIX", "GPU1\tNV4\t X \tPIXX"));
  CHECK(label.line() == 3);
  CHECK(label.column() == 14);
  CHECK(label.message().find("unknown label 'PIXX'") != std::string::npos);
  const InputError short_row = error(replace(good, "GPU1\tNV4\t X \tPIX", "GPU1\tNV4\t X"));
  CHECK(short_row.message().find("row GPU1 has 2 labels, expected 3") != std::string::npos);
  CHECK(error(replace(good, "GPU1\tNV4", "GPU1\tNV2")).message().find("expected a symmetric matrix") !=
        std::string::npos);
  CHECK(error(replace(good, "NIC0\tPIX\tPIX\t X \n", "")).message().find("expected the row of NIC0") !=
        std::string::npos);
  CHECK(error(replace(good, "GPU0\t X \tNV4\tPIX", "GPU0\t X \tNV4\tNV4")).message().find("not both GPUs") !=
        std::string::npos);
  // Labels that no PCIe tree produces: NIC0 PIX to both GPUs, but the GPUs PXB to each other.
  const std::string odd = "\tGPU0\tGPU1\tNIC0\n"
                          "GPU0\t X \tPXB\tPIX\n"
                          "GPU1\tPXB\t X \tPIX\n"
                          "NIC0\tPIX\tPIX\t X \n";
  try {
    import_topology(parse_topo_matrix(odd, "odd.txt"), ImportOptions{});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message().find("reads PXB, but the PCIe tree") != std::string::npos);
    CHECK(e.line() == 2);
  }
}
