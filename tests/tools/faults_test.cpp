// --fail and --degrade: what losing a NIC costs, by hand, and the errors a planner gets.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/approx.h"
#include "tests/tools/run_binary.h"

using namespace wiresim_test;

namespace {

double ring_1gib_us(const std::string& extra) {
  const Run r = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1GiB --algo ring "
                        "--format json " + extra);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out)["results"][0]["time_us"].get<double>();
}

// The ring's ranks: the 8 GPUs of each listed node, node after node.
std::string nodes_ranks(std::initializer_list<int> nodes) {
  std::string out;
  for (int n : nodes)
    for (int g = 0; g < 8; ++g) {
      if (!out.empty()) out += ',';
      out += std::to_string(8 * n + g);
    }
  return out;
}

// 16 H100 nodes on a 2:1 oversubscribed rail-optimised fabric of radix-12 leaves: per rail,
// nodes 0-7 on one leaf and 8-15 on another, each leaf with 4 uplinks, one to each of 4 spines.
double oversubscribed_ring_us(std::initializer_list<int> nodes, const std::string& fail) {
  const Run r = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=16 --set leaf_radix=12 "
                        "--set oversubscription=2 --sizes 1GiB --algo ring --format json --ranks " +
                        nodes_ranks(nodes) + (fail.empty() ? "" : " --fail '" + fail + "'"));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out)["results"][0]["time_us"].get<double>();
}

}  // namespace

TEST_CASE("a spine down on an oversubscribed fabric slows cross-leaf traffic only") {
  // Nodes 0-3 share every rail's leaf: their ring never climbs to a spine, so no spine failure
  // changes its time, to the last digit.
  const double same_leaf = oversubscribed_ring_us({0, 1, 2, 3}, "");
  for (const char* down : {"spine0", "spine[01]", "spine[012]"}) {
    CAPTURE(down);
    CHECK(oversubscribed_ring_us({0, 1, 2, 3}, down) == same_leaf);
  }
  // Nodes 0, 8, 1, 9, 2, 10, 3, 11 alternate leaves: per rail, four flows leave each leaf for
  // the other, as much as its four uplinks carry. With one spine left they share one 50 GB/s
  // uplink: the network part takes 4x a NIC-bound ring's (same_leaf's), and the NVLink part
  // and the pipeline fill do not grow, so the whole is a little under 4x.
  const double crossing_healthy = oversubscribed_ring_us({0, 8, 1, 9, 2, 10, 3, 11}, "");
  const double crossing_one_spine = oversubscribed_ring_us({0, 8, 1, 9, 2, 10, 3, 11}, "spine[012]");
  CHECK(crossing_one_spine / same_leaf > 3.6);
  CHECK(crossing_one_spine / same_leaf < 4.05);
  CHECK(crossing_one_spine > crossing_healthy);
  // Healthy, the crossing ring is already slower than the same-leaf one: ECMP hashes some of
  // a leaf's four flows onto one spine (routes.h), as static hashing does.
  CHECK(crossing_healthy > same_leaf);
}

TEST_CASE("a 2-node H100 ring all_reduce with one NIC failed takes about twice as long: one NIC carries two rails") {
  // By hand: the ring's cross-node bytes are spread evenly over the node's 8 NICs, and at 1 GiB
  // the NICs bound it (busbw ~358 of 8 x 50 x 0.96 = 384 GB/s). Without node0.nic0 its share
  // leaves through another NIC of node 0, which then carries two shares: the network part of
  // the time doubles, so the whole nearly does (the NVLink part and the fill do not).
  const double healthy = ring_1gib_us("");
  const double one_down = ring_1gib_us("--fail node0.nic0");
  CHECK(one_down / healthy > 1.8);
  CHECK(one_down / healthy < 2.05);
  // A NIC at half its rate costs the same as one carrying two shares: the same bottleneck.
  CHECK(ring_1gib_us("--degrade node0.nic0=50%") == rel_approx(one_down).epsilon(1e-9));
  // A rail is a pattern: rail 2 down is node 0's and node 1's NIC 2 down (and their leaf), and
  // at half its rate it costs what one NIC carrying two shares does.
  CHECK(ring_1gib_us("--fail rail2") == rel_approx(ring_1gib_us("--fail node0.nic2 --fail node1.nic2")).epsilon(1e-12));
  CHECK(ring_1gib_us("--degrade rail2=50%") == rel_approx(one_down).epsilon(1e-9));
  // A second NIC down on the same node: slower again.
  CHECK(ring_1gib_us("--fail node0.nic0 --fail node0.nic1") > 1.3 * one_down);
}

TEST_CASE("--fail and --degrade: named in the output; bad patterns, shares and cut-off nodes are one line") {
  const Run r = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1MiB --fail node0.nic0");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# faults: failed 4 links (node0.nic0)") != std::string::npos);
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --fail nic9"), "--fail",
                        "names no device or link");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --degrade 'spine*=0'"),
                        "--degrade", "(0, 1]");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --degrade spine"), "--degrade",
                        "PATTERN=SHARE");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1MiB "
                                "--fail 'node1.nic*'"),
                        "node1", "cannot reach other nodes");
}

TEST_CASE("a faults: section in a scenario is --fail on the command line, and the two add up") {
  const auto step_ms = [](const std::string& args) {
    const Run r = wiresim("run " + args + " --format json");
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["step_time_ms"].get<double>();
  };
  const double healthy = step_ms("scenarios/llama70b-2node-tp16.yaml");
  const double from_file = step_ms("scenarios/llama70b-2node-tp16-nic-down.yaml");
  CHECK(from_file > healthy);
  CHECK(from_file == step_ms("scenarios/llama70b-2node-tp16.yaml --fail node0.nic0"));
  // The file's failure and the command line's together: both NICs down.
  CHECK(step_ms("scenarios/llama70b-2node-tp16-nic-down.yaml --fail node0.nic1") ==
        step_ms("scenarios/llama70b-2node-tp16.yaml --fail node0.nic0 --fail node0.nic1"));
}

TEST_CASE("sweep names its faults and transport in every output: the table, the CSV's stderr, the JSON and the report") {
  // A what-if sweep whose report did not say that node 0's NIC 0 was down would read as the
  // healthy machine's ranking.
  const std::string base = "sweep --topo topologies/cluster-h100-ib.yaml --set nodes=2 --model "
                           "scenarios/models/llama-70b.yaml --tokens 4096 --threads 1 --fail node0.nic0 --gdr off";
  const std::string transport = "gdr off: no GPUDirect RDMA";
  const fs::path report = scratch() / "faults-sweep.html";
  const Run table = wiresim(base + " --report " + report.string());
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("\n# faults: failed 4 links (node0.nic0)\n") != std::string::npos);
  CHECK(table.out.find(transport) != std::string::npos);
  const std::string html = slurp(report);
  CHECK(html.find("<li>faults: failed 4 links (node0.nic0)</li>") != std::string::npos);
  CHECK(html.find(transport) != std::string::npos);
  const Run csv = wiresim(base + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.err.find("# faults: failed 4 links (node0.nic0)") != std::string::npos);
  CHECK(csv.out.find("faults") == std::string::npos);
  const Run json = wiresim(base + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["faults"] == "failed 4 links (node0.nic0)");
  CHECK(j["transport"].get<std::string>().find(transport) != std::string::npos);
  // Healthy and by default, nothing is said.
  const Run healthy = wiresim("sweep --topo topologies/cluster-h100-ib.yaml --set nodes=2 --model "
                              "scenarios/models/llama-70b.yaml --tokens 4096 --threads 1 --format json");
  REQUIRE(healthy.exit_code == 0);
  const auto h = nlohmann::json::parse(healthy.out);
  CHECK_FALSE(h.contains("faults"));
  CHECK_FALSE(h.contains("transport"));
}

TEST_CASE("run, coll and jobs name their faults apart from the transport, the CSVs on stderr") {
  const Run run_json = wiresim("run scenarios/llama70b-2node-tp16.yaml --fail node0.nic0 --gdr off --format json");
  REQUIRE(run_json.exit_code == 0);
  const auto r = nlohmann::json::parse(run_json.out);
  CHECK(r["faults"] == "failed 4 links (node0.nic0)");
  CHECK(r["transport"].get<std::string>().find("faults") == std::string::npos);
  CHECK(r["transport"].get<std::string>().find("gdr off") != std::string::npos);
  const Run run_csv = wiresim("run scenarios/llama70b-2node-tp16.yaml --fail node0.nic0 --format csv");
  REQUIRE(run_csv.exit_code == 0);
  CHECK(run_csv.err.find("# faults: failed 4 links (node0.nic0)") != std::string::npos);
  CHECK(run_csv.out.find("faults") == std::string::npos);
  const Run coll_csv = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1MiB "
                               "--fail node0.nic0 --format csv");
  REQUIRE(coll_csv.exit_code == 0);
  CHECK(coll_csv.err.find("# faults: failed 4 links (node0.nic0)") != std::string::npos);
  const Run jobs = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --fail node0.nic0 --model analytic --format json");
  REQUIRE(jobs.exit_code == 0);
  CHECK(nlohmann::json::parse(jobs.out)["faults"] == "failed 4 links (node0.nic0)");
  // The jobs table names each condition on a line of its own, as the other tables do.
  const Run table = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --fail node0.nic0 --gdr off --model analytic");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("2 jobs, model analytic\n# transport: gdr off") != std::string::npos);
  CHECK(table.out.find("\n# faults: failed 4 links (node0.nic0)\n") != std::string::npos);
}
