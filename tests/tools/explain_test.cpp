// run --explain says what bounds a step and how each group's GPUs exchange; coll --ranks and
// --gpus-per-node examine one group alone.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/run_binary.h"

using namespace wiresim_test;

TEST_CASE("run --explain: a TP 4 group across two sockets is named as staged through host memory") {
  const Run sys = wiresim("run scenarios/llama8b-tp4-pcie-sys.yaml --explain");
  REQUIRE(sys.exit_code == 0);
  CHECK(sys.out.find("bound by communication") != std::string::npos);
  CHECK(sys.out.find("tp_all_reduce over GPUs 0,2,4,6: P2P/PCIe x2, SHM x2") != std::string::npos);
  CHECK(sys.out.find("staged through host memory") != std::string::npos);
  // The same group under one PCIe switch: peer to peer all round, no staging.
  const Run sw = wiresim("run scenarios/llama8b-tp4-pcie-switch.yaml --explain");
  REQUIRE(sw.exit_code == 0);
  CHECK(sw.out.find("tp_all_reduce over GPUs 0,1,2,3: P2P/PCIe x4") != std::string::npos);
  CHECK(sw.out.find("host memory") == std::string::npos);
  // JSON carries the groups in every run; pipeline sends across nodes go over the network.
  const Run pp = wiresim("run scenarios/llama70b-2node-tp8-pp2.yaml --format json");
  REQUIRE(pp.exit_code == 0);
  bool net = false;
  const auto j = nlohmann::json::parse(pp.out);
  for (const auto& g : j["groups"])
    if (g["kind"] == "pp_send_recv") net = g["transports"] == "NET x8" && g["host_memory_staging"] == false;
  CHECK(net);
}

TEST_CASE("coll --ranks and --gpus-per-node pick the GPUs of one group") {
  const Run r = wiresim("coll all_reduce --topo topologies/pcie-l40s-8gpu-2switch.yaml --ranks 0,2,4,6 --sizes 64MiB "
                        "--format json");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["gpus"] == 4);
  // Ranks 0,2,4,6 cross the sockets; 0,1,2,3 share a switch: the crossing group is slower.
  const Run near = wiresim("coll all_reduce --topo topologies/pcie-l40s-8gpu-2switch.yaml --ranks 0,1,2,3 --sizes 64MiB "
                           "--format json");
  REQUIRE(near.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["results"][0]["time_us"].get<double>() >
        1.5 * nlohmann::json::parse(near.out)["results"][0]["time_us"].get<double>());
  const Run per_node = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --gpus-per-node 2 "
                               "--sizes 1MiB --format json");
  REQUIRE(per_node.exit_code == 0);
  CHECK(nlohmann::json::parse(per_node.out)["gpus"] == 4);
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --ranks 0,9"), "--ranks", "GPU 9");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --ranks 1,1"), "--ranks", "twice");
  expect_one_line_error(wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --ranks 0,1 --gpus 2"), "--ranks",
                        "one of them");
}

TEST_CASE("coll --pick nccl runs what NCCL's own cost model ranks first, and --explain shows its costs") {
  // 64 MiB on 4 H100 nodes: the closed form's fastest is the LL128 ring; NCCL's model (tuning.cc,
  // tests/models/nccl_tuning_test.cpp) ranks the NVLS tree first.
  const std::string base = "coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=4 --sizes 64MiB";
  const Run fastest = wiresim(base + " --format json");
  REQUIRE(fastest.exit_code == 0);
  const auto f = nlohmann::json::parse(fastest.out)["results"][0];
  CHECK(f["algo"] == "ring");
  const Run nccl = wiresim(base + " --pick nccl --format json");
  REQUIRE(nccl.exit_code == 0);
  const auto n = nlohmann::json::parse(nccl.out)["results"][0];
  CHECK(n["algo"] == "nvls_tree");
  // The closed form's pick is the faster of the two in the simulation too.
  CHECK(f["time_us"].get<double>() < n["time_us"].get<double>());
  bool ranked = false;
  for (const auto& c : n["candidates"]) ranked = ranked || c.contains("ranked_us");
  CHECK(ranked);
  const Run explain = wiresim(base + " --pick nccl --explain");
  REQUIRE(explain.exit_code == 0);
  CHECK(explain.out.find("NCCL's model: 108.6 us + bytes / 187.9 GB/s (8 channels x 48.0 GB/s)") != std::string::npos);
  expect_one_line_error(wiresim(base + " --pick best"), "--pick", "fastest or nccl");
  expect_one_line_error(wiresim("validate --pick best"), "--pick", "fastest or nccl");
}
