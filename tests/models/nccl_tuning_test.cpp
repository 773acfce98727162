// NCCL's own cost model (models/nccl_tuning.h) against the numbers worked by hand from
// src/graph/tuning.cc (NVIDIA/nccl 5067397) for the shipped HGX H100 IB cluster: 8 GPUs and 8 NDR
// NICs per node behind PCIe Gen5 x16 switches, which NCCL rates at 48 GB/s (kvDictPciGen), so its
// search settles at 48 GB/s (sm90SpeedArrayInter[0]) on one channel per NIC, not doubled (sm90,
// under 50 GB/s, over 4 channels).
#include <doctest/doctest.h>

#include <string>

#include "models/machine.h"
#include "models/nccl_tuning.h"
#include "models/tuner.h"
#include "test_machines.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

topo::LinkGraph cluster(const std::string& file, int nodes) {
  return topo::load_topology(testing::shipped(file), {{"nodes", std::to_string(nodes)}});
}

Problem all_reduce(const topo::LinkGraph& g, double bytes) {
  return Problem(Collective::all_reduce, sim::Bytes{bytes}, g.gpus());
}

double us(sim::Seconds t) { return t.count() * 1e6; }
double gbps(sim::BytesPerSec r) { return r.count() / 1e9; }

}  // namespace

TEST_CASE("NCCL's graph stand-in: one 48 GB/s channel per NIC on HGX H100 and B200 nodes") {
  const Params params = default_params();
  for (const char* file : {"cluster-h100-ib.yaml", "cluster-b200-ib.yaml"}) {
    CAPTURE(file);
    const topo::LinkGraph g = cluster(file, 4);
    const Machine m(g, params);
    const Problem p = all_reduce(g, 1 << 30);
    for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::nvls_tree}) {
      const auto graph = nccl_graph(m, p, a);
      REQUIRE(graph);
      CHECK(graph->channels == 8);
      CHECK(gbps(graph->speed) == doctest::Approx(48.0));
    }
  }
}

TEST_CASE("NCCL's latencies and bandwidths on 4 H100 nodes, by hand from tuning.cc") {
  const Params params = default_params();
  const topo::LinkGraph g = cluster("cluster-h100-ib.yaml", 4);
  const Machine m(g, params);
  const Problem p = all_reduce(g, 1 << 30);
  // 32 ranks: 62 steps, 6 of them across nodes. Ring Simple: base 8.4 + 56 x max(3.4, 3 x 1.0 net
  // overhead) + 6 x 14; bus 8 x 48, algorithm bandwidth x 32 / 62.
  const auto ring = nccl_cost(m, p, Algorithm::ring, Protocol::simple);
  REQUIRE(ring);
  CHECK(us(ring->latency) == doctest::Approx(8.4 + 56 * 3.4 + 6 * 14.0));
  CHECK(gbps(ring->bandwidth) == doctest::Approx(384.0 * 32 / 62));
  // Ring LL128: base 14 + 56 x 1.9 + 6 x 4; bus min(384 x 0.92, 8 x 36.7).
  const auto ll128 = nccl_cost(m, p, Algorithm::ring, Protocol::ll128);
  REQUIRE(ll128);
  CHECK(us(ll128->latency) == doctest::Approx(14.0 + 56 * 1.9 + 6 * 4.0));
  CHECK(gbps(ll128->bandwidth) == doctest::Approx(8 * 36.7 * 32 / 62));
  // Tree LL128: base 14 + 2 (7 x 1.25 + log2(4) x 8.5); bus min(min(384 x .92, 8 x 36) x 120/128,
  // 8 x 29), halved.
  const auto tree = nccl_cost(m, p, Algorithm::tree, Protocol::ll128);
  REQUIRE(tree);
  CHECK(us(tree->latency) == doctest::Approx(14.0 + 2 * (7 * 1.25 + 2 * 8.5)));
  CHECK(gbps(tree->bandwidth) == doctest::Approx(8 * 29.0 * 0.5));
  // NVLS tree: 25 + 2 log2(4) x 20.9; per channel min(48 x 0.85 x 7/8 x 2, 48, 45.5).
  const auto nvls_tree = nccl_cost(m, p, Algorithm::nvls_tree, Protocol::simple);
  REQUIRE(nvls_tree);
  CHECK(us(nvls_tree->latency) == doctest::Approx(25.0 + 4 * 20.9));
  CHECK(gbps(nvls_tree->bandwidth) == doctest::Approx(8 * 45.5 * 32 / 62));
  // On 2 nodes the NVLS tree's inter-node speed doubles and the ceiling is 57.7.
  const topo::LinkGraph g2 = cluster("cluster-h100-ib.yaml", 2);
  const Machine m2(g2, params);
  const auto two = nccl_cost(m2, all_reduce(g2, 1 << 30), Algorithm::nvls_tree, Protocol::simple);
  REQUIRE(two);
  CHECK(gbps(two->bandwidth) == doctest::Approx(8 * 57.7 * 16 / 30));
  // ncclTopoGetAlgoTime: the ring's Simple latency x 1.4 once it is on its plateau.
  const Problem big = all_reduce(g, 8.0 * (1ull << 30));
  const auto t = nccl_time(m, big, Choice{Algorithm::ring, Protocol::simple, 8});
  REQUIRE(t);
  CHECK(us(t->time) == doctest::Approx(1.4 * (8.4 + 56 * 3.4 + 6 * 14.0) + big.size.count() / (1000 * 384.0 * 32 / 62)));
  // The tree's correction factor: LL128 at 4 MiB (log2(4 MiB / 64) = 16) runs at 0.8.
  const Problem mid = all_reduce(g, 4.0 * (1 << 20));
  const auto tt = nccl_time(m, mid, Choice{Algorithm::tree, Protocol::ll128, 8});
  REQUIRE(tt);
  CHECK(us(tt->time) == doctest::Approx(us(tree->latency) + mid.size.count() / (1000 * 116.0 * 0.8)));
}

TEST_CASE("--pick nccl: what NCCL's model ranks first, where the closed form's fastest differs") {
  const Params params = default_params();
  const topo::LinkGraph g = cluster("cluster-h100-ib.yaml", 4);
  const Machine m(g, params);
  TunerOptions nccl;
  nccl.rank = *parse_ranking("nccl");
  TunerOptions fastest;
  fastest.rank = *parse_ranking("fastest");
  CHECK_FALSE(parse_ranking("best"));
  // 64 MiB: NCCL's model puts the NVLS tree (108.6 us + S / 187.9 GB/s) ahead of ring LL128
  // (144.4 us + S / 151.5 GB/s); wiresim's closed form finds the LL128 ring faster.
  const Problem mid = all_reduce(g, 64.0 * (1 << 20));
  const Decision by_nccl = tune(m, mid, nccl);
  CHECK(by_nccl.best.algorithm == Algorithm::nvls_tree);
  const Decision by_cf = tune(m, mid, fastest);
  CHECK(by_cf.best.algorithm == Algorithm::ring);
  CHECK(by_cf.best.protocol == Protocol::ll128);
  for (const Candidate& c : by_nccl.candidates)
    if (c.time) CHECK(c.ranked.has_value());
  for (const Candidate& c : by_cf.candidates) CHECK_FALSE(c.ranked.has_value());
  // 8 GiB: the ring's bandwidth (198.2 GB/s) beats the NVLS tree's (187.9) once past
  // (395.9 - 108.6) / (1/187.9 - 1/198.2) bytes, about 1.0 GiB.
  CHECK(tune(m, all_reduce(g, 8.0 * (1ull << 30)), nccl).best.algorithm == Algorithm::ring);
  CHECK(tune(m, all_reduce(g, 512.0 * (1 << 20)), nccl).best.algorithm == Algorithm::nvls_tree);
  // 2 MiB: the tree with LL128 (65.5 us + S / (116 x 0.8) GB/s).
  const Decision small = tune(m, all_reduce(g, 2.0 * (1 << 20)), nccl);
  CHECK(small.best.algorithm == Algorithm::tree);
  CHECK(small.best.protocol == Protocol::ll128);
}

TEST_CASE("NCCL's model is left out where its graph is not modelled: the closed form picks") {
  const Params params = default_params();
  TunerOptions nccl;
  nccl.rank = nccl_time;
  // One node: NCCL's intra-node search is not modelled.
  const topo::LinkGraph one = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m1(one, params);
  for (double bytes : {64.0 * 1024, 64.0 * (1 << 20)}) {
    const Problem p = all_reduce(one, bytes);
    CHECK_FALSE(nccl_graph(m1, p, Algorithm::ring));
    const Decision d = tune(m1, p, nccl);
    const Decision f = tune(m1, p, TunerOptions{});
    CHECK(d.best.algorithm == f.best.algorithm);
    CHECK(d.best.protocol == f.best.protocol);
  }
  // AMD GPUs: RCCL's tuner is its own.
  const topo::LinkGraph amd = cluster("cluster-mi300x-roce.yaml", 2);
  const Machine ma(amd, params);
  CHECK_FALSE(nccl_graph(ma, all_reduce(amd, 1 << 20), Algorithm::ring));
  CHECK_FALSE(nccl_cost(ma, all_reduce(amd, 1 << 20), Algorithm::ring, Protocol::simple));
}
