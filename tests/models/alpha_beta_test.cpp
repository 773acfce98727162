// The closed form against the event-driven simulation on shipped topologies.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "models/alpha_beta.h"
#include "models/plan.h"
#include "models/run.h"
#include "test_machines.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

struct Case {
  Collective op;
  Algorithm algo;
  Protocol proto;
};

// NCCL fixes a point-to-point operation's protocol (LL up to 16 KiB a channel, else Simple):
// a direct case runs with that one whatever it names.
double relative_gap(const Machine& m, const Problem& p, Choice c) {
  if (c.algorithm == Algorithm::direct)
    c.protocol = p2p_protocol(m, p, p2p_largest_send(p));
  const double simulated = run_collective(m, p, c, Method::simulate).time.count();
  const double formula = estimate(m, p, c).time.count();
  return std::abs(simulated - formula) / simulated;
}

const std::vector<double> kSizes{4096.0, 1048576.0, 67108864.0, 1073741824.0};

}  // namespace

TEST_CASE("with no contention the simulation equals the closed form within 0.1% (hgx-h100)") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  const std::vector<Case> cases{
      {Collective::all_reduce, Algorithm::ring, Protocol::ll},
      {Collective::all_reduce, Algorithm::ring, Protocol::ll128},
      {Collective::all_reduce, Algorithm::ring, Protocol::simple},
      {Collective::all_gather, Algorithm::ring, Protocol::simple},
      {Collective::reduce_scatter, Algorithm::ring, Protocol::ll128},
      {Collective::broadcast, Algorithm::ring, Protocol::simple},
      {Collective::reduce, Algorithm::ring, Protocol::ll},
      {Collective::all_gather, Algorithm::nvls, Protocol::simple},
      {Collective::reduce_scatter, Algorithm::nvls, Protocol::simple},
      {Collective::all_reduce, Algorithm::one_shot, Protocol::ll},
      {Collective::all_reduce, Algorithm::two_shot, Protocol::simple},
      {Collective::all_to_all, Algorithm::direct, Protocol::simple},
      {Collective::all_to_all, Algorithm::pairwise, Protocol::ll128},
      {Collective::send_recv, Algorithm::direct, Protocol::simple},
  };
  for (const auto& c : cases)
    for (double size : kSizes) {
      const Problem p{c.op, sim::Bytes{size}, g.gpus(), 0};
      const double gap = relative_gap(m, p, Choice{c.algo, c.proto, 16});
      CHECK_MESSAGE(gap < 1e-3, fmt::format("{} {} {} at {} B: {:.3f}%", to_string(c.op), to_string(c.algo),
                                            to_string(c.proto), size, 100 * gap));
    }
}

TEST_CASE("the tree's closed form adds phases the simulation overlaps: within 6%") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  for (auto proto : all_protocols())
    for (double size : kSizes) {
      const Problem p{Collective::all_reduce, sim::Bytes{size}, g.gpus(), 0};
      const double gap = relative_gap(m, p, Choice{Algorithm::tree, proto, 16});
      CHECK_MESSAGE(gap < 0.06, fmt::format("tree {} at {} B: {:.2f}%", to_string(proto), size, 100 * gap));
    }
}

TEST_CASE("NVLS all_reduce: the closed form's period is the two streams' overlap the simulation plays") {
  // H100: the step overhead (3.5 us) is short beside a loop's bytes, so both streams run at
  // once nearly all the time. B200: the overhead (12.1 us) is longer than the wire, so each
  // loop's reduce-scatters and all-gathers first run alone at B/n for tau - d, then together at
  // B/(n+1); the additive form (n+1) part/B + tau was 5.5% slow at 1 GiB. Within 0.2% at the
  // sizes below; the largest gap is at 2 loops (4 MiB on B200, its second loop a third of the
  // first: -2.2%), where the formula spreads the bytes evenly over the loops; 64 MiB on B200 (11
  // loops) is 0.10% off.
  for (const char* name : {"hgx-h100.yaml", "hgx-b200.yaml"}) {
    const topo::LinkGraph g = topo::load_topology(testing::shipped(name));
    const Machine m(g, default_params());
    for (double size : kSizes) {
      const Problem p{Collective::all_reduce, sim::Bytes{size}, g.gpus(), 0};
      const double gap = relative_gap(m, p, Choice{Algorithm::nvls, Protocol::simple, 16});
      CHECK_MESSAGE(gap < 2e-3, fmt::format("{}: nvls at {} B: {:.3f}%", name, size, 100 * gap));
    }
  }
}

TEST_CASE("closed form and simulation agree on a PCIe box and an xGMI mesh") {
  for (const char* name : {"pcie-8gpu-2socket.yaml", "mi300x-8.yaml", "hgx-a100.yaml"}) {
    const topo::LinkGraph g = topo::load_topology(testing::shipped(name));
    const Machine m(g, default_params());
    for (const Case& c : std::vector<Case>{{Collective::all_reduce, Algorithm::ring, Protocol::simple},
                                           {Collective::all_gather, Algorithm::ring, Protocol::ll},
                                           {Collective::send_recv, Algorithm::direct, Protocol::simple}})
      for (double size : kSizes) {
        const Problem p{c.op, sim::Bytes{size}, g.gpus(), 0};
        const double gap = relative_gap(m, p, Choice{c.algo, c.proto, 16});
        CHECK_MESSAGE(gap < 1e-3, fmt::format("{}: {} {} {} at {} B: {:.3f}%", name, to_string(c.op),
                                              to_string(c.algo), to_string(c.proto), size, 100 * gap));
      }
  }
}
