// --fail and --degrade: what losing a NIC costs, by hand, and the errors a planner gets.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace

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
  CHECK(ring_1gib_us("--degrade node0.nic0=50%") == doctest::Approx(one_down).epsilon(1e-9));
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
