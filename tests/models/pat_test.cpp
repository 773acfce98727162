// PAT (models/pat.cpp): where NCCL enables it, its rounds by hand, the NIC bound, its closed form
// against the simulation, and the tuner's use of it. One GPU per node of the shipped HGX H100
// IB cluster: each rank has one 400 Gb/s NIC (rail 0), and up to 32 nodes share one leaf.
#include <doctest/doctest.h>

#include <string>

#include "models/plan.h"
#include "models/run.h"
#include "models/tuner.h"
#include "test_machines.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

topo::LinkGraph cluster(int nodes) {
  return topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", std::to_string(nodes)}});
}

// The first GPU of every node.
std::vector<topo::DeviceId> one_per_node(const topo::LinkGraph& g, int nodes) {
  std::vector<topo::DeviceId> out;
  for (int k = 0; k < nodes; ++k) out.push_back(g.gpus()[static_cast<std::size_t>(k) * 8]);
  return out;
}

}  // namespace

TEST_CASE("pat runs all_gather and reduce_scatter with one GPU per node, Simple only, and says why not elsewhere") {
  const topo::LinkGraph g = cluster(2);
  const Machine m(g, default_params());
  const Problem whole{Collective::all_gather, sim::Bytes{1 << 20}, g.gpus(), 0};
  const auto two_per_node = why_not(m, whole, Algorithm::pat, Protocol::simple);
  REQUIRE(two_per_node.has_value());
  CHECK(two_per_node->find("one GPU per node") != std::string::npos);
  const Problem one_node{Collective::all_gather, sim::Bytes{1 << 20}, {g.gpus()[0], g.gpus()[1]}, 0};
  REQUIRE(why_not(m, one_node, Algorithm::pat, Protocol::simple).has_value());
  CHECK(why_not(m, one_node, Algorithm::pat, Protocol::simple)->find("between nodes") != std::string::npos);
  for (const Collective op : {Collective::all_gather, Collective::reduce_scatter}) {
    const Problem p{op, sim::Bytes{1 << 20}, one_per_node(g, 2), 0};
    CHECK_FALSE(why_not(m, p, Algorithm::pat, Protocol::simple).has_value());
    CHECK(why_not(m, p, Algorithm::pat, Protocol::ll).has_value());
    CHECK(why_not(m, p, Algorithm::pat, Protocol::ll128).has_value());
  }
  const Problem reduce{Collective::all_reduce, sim::Bytes{1 << 20}, one_per_node(g, 2), 0};
  CHECK(why_not(m, reduce, Algorithm::pat, Protocol::simple).has_value());
}

TEST_CASE("pat's rounds by hand: 4 nodes, all_gather of 4 MiB on one channel") {
  // NCCL's PAT chunk: 512 KiB halved while chunk x 1 channel x 32 > 4 MiB, so 128 KiB; each
  // rank's 1 MiB block is 8 chunks. n = 4: round 1 sends the rank's own piece to the rank 2
  // below (the pieces at offset 2), round 2 sends two pieces (offsets 1 and 3: its own and the
  // one round 1 brought) to the rank 1 below. Every send crosses two NICs at 50 GB/s x 0.96
  // and nothing else shares them; a round waits for the previous one's data (the NET step
  // latency), the next chunk's first round only for the rank's last send.
  const topo::LinkGraph g = cluster(4);
  const Machine m(g, default_params());
  const Problem p{Collective::all_gather, sim::Bytes{4 << 20}, one_per_node(g, 4), 0};
  const Choice c{Algorithm::pat, Protocol::simple, 1};
  const Params& params = m.params();
  const double base = params.base_latency(Algorithm::pat, Protocol::simple).count() + m.arch().launch_overhead.count();
  const double o = params.protocol(Protocol::simple).overhead.count();
  const double step = params.step_latency(Algorithm::pat, Protocol::simple, TierClass::net).count();
  const double rate = 50e9 * 0.96, chunk = 128 * 1024;
  const double by_hand = base + 8 * ((o + chunk / rate) + step + (o + 2 * chunk / rate)) + step;
  const Outcome sim_run = run_collective(m, p, c, Method::simulate);
  CHECK(sim_run.time.count() == rel_approx(by_hand).epsilon(1e-6));
  CHECK(run_collective(m, p, c, Method::analytic).time.count() == rel_approx(by_hand).epsilon(1e-6));
}

TEST_CASE("pat: no rank gathers faster than its NIC, and the closed form is the simulation where rounds share no link") {
  // Each rank receives (n - 1)/n of the output through its one NIC. Up to 32 nodes every
  // rank's NIC hangs off one leaf (rail 0), so a round's sends share nothing and the closed
  // form plays exactly the simulation's chain. Non-powers of two (3, 5, 6 nodes) skip the
  // offsets past n. (At 64 nodes two leaves share spines, ECMP flows meet, and the
  // simulation is up to 13 % slower at 1 GiB: docs/models.md.)
  for (const int nodes : {2, 3, 4, 5, 6, 8, 16}) {
    const topo::LinkGraph g = cluster(nodes);
    const Machine m(g, default_params());
    for (const Collective op : {Collective::all_gather, Collective::reduce_scatter})
      for (const double size : {1024.0, 1048576.0, 16777216.0, 1073741824.0}) {
        CAPTURE(nodes);
        CAPTURE(to_string(op));
        CAPTURE(size);
        const Problem p{op, sim::Bytes{size}, one_per_node(g, nodes), 0};
        const Choice c{Algorithm::pat, Protocol::simple, m.arch().channels};
        const auto [closed, sim] = testing::closed_and_simulated(m, p, c);
        CHECK(closed == rel_approx(sim).epsilon(1e-6));
        CHECK(sim >= (nodes - 1.0) / nodes * size / 50e9);
      }
  }
}

TEST_CASE("the tuner takes pat where its closed form is fastest, and that pick simulates within 2 % of the best") {
  // 16 nodes, one GPU each: the ring's 15 steps pay 15 NET latencies, pat's 4 rounds four; at
  // 16 MiB pat is the fastest candidate, at 8 KiB the ring with LL.
  const topo::LinkGraph g = cluster(16);
  const Machine m(g, default_params());
  for (const double size : {8192.0, 16777216.0}) {
    CAPTURE(size);
    const Problem p{Collective::all_gather, sim::Bytes{size}, one_per_node(g, 16), 0};
    const Decision d = tune(m, p, TunerOptions{});
    CHECK((d.best.algorithm == Algorithm::pat) == (size > 1e6));
    const double picked = run_collective(m, p, d.best, Method::simulate).time.count();
    double best = INFINITY;
    for (const auto& cand : d.candidates)
      if (cand.time) best = std::min(best, run_collective(m, p, cand.choice, Method::simulate).time.count());
    CHECK(picked <= best * 1.02);
  }
}
