// models/limits.h: the plan-size estimate made before expanding agrees with the plan that
// expand() builds (within a factor of two), and absurd requests are refused up front with
// the estimate and the limit in the message.
#include <doctest/doctest.h>

#include <string>

#include "models/limits.h"
#include "models/machine.h"
#include "models/params.h"
#include "models/plan.h"
#include "input/input_error.h"
#include "test_machines.h"
#include "topologies/builder.h"

namespace {

using namespace wiresim;
using namespace wiresim::models;

Problem problem_on(const topo::LinkGraph& g, Collective op, const char* size) {
  Problem p;
  p.op = op;
  p.size = sim::parse_size(size);
  p.ranks.assign(g.gpus().begin(), g.gpus().end());
  return p;
}

void expect_estimate_close(const Machine& m, const Problem& p, Choice c) {
  // NCCL fixes a send_recv's protocol (LL up to 16 KiB a channel, else Simple).
  if (c.algorithm == Algorithm::direct && p.op == Collective::send_recv) c.protocol = p2p_protocol(m, p, p2p_largest_send(p));
  const double real = static_cast<double>(expand(m, p, c).dag.size());
  const double guess = estimate_plan(m, p, c).nodes;
  CAPTURE(to_string(p.op));
  CAPTURE(to_string(c.algorithm));
  CAPTURE(p.size.count());
  CAPTURE(real);
  CAPTURE(guess);
  CHECK(guess >= real / 2);
  CHECK(guess <= real * 2);
}

}  // namespace

TEST_CASE("the estimate is within a factor of two of the plan, for every algorithm") {
  const auto box = topo::load_topology(WIRESIM_SOURCE_DIR "/topologies/hgx-h100.yaml");
  const Machine m(box, default_params());
  for (const char* size : {"8B", "1MiB", "256MiB"}) {
    for (auto op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                    Collective::broadcast, Collective::reduce})
      expect_estimate_close(m, problem_on(box, op, size), Choice{Algorithm::ring, Protocol::simple, 16});
    expect_estimate_close(m, problem_on(box, Collective::all_reduce, size), Choice{Algorithm::ring, Protocol::ll, 16});
    expect_estimate_close(m, problem_on(box, Collective::all_reduce, size), Choice{Algorithm::nvls, Protocol::simple, 16});
    expect_estimate_close(m, problem_on(box, Collective::all_reduce, size), Choice{Algorithm::one_shot, Protocol::ll, 16});
    expect_estimate_close(m, problem_on(box, Collective::all_reduce, size), Choice{Algorithm::two_shot, Protocol::ll, 16});
    expect_estimate_close(m, problem_on(box, Collective::all_to_all, size), Choice{Algorithm::pairwise, Protocol::simple, 16});
    expect_estimate_close(m, problem_on(box, Collective::send_recv, size), Choice{Algorithm::direct, Protocol::simple, 16});
  }
  const auto cluster = topo::load_topology(WIRESIM_SOURCE_DIR "/topologies/cluster-h100-ib.yaml", {{"nodes", "2"}});
  const Machine mc(cluster, default_params());
  for (const char* size : {"8B", "64MiB"}) {
    expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::ring, Protocol::simple, 16});
    expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::tree, Protocol::simple, 16});
    // LL and LL128 trees forward as they receive (ProtocolParams::tree_cut_through, shipped on).
    expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::tree, Protocol::ll128, 16});
    expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::tree, Protocol::ll, 16});
    expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::hierarchical, Protocol::simple, 16});
    expect_estimate_close(mc, problem_on(cluster, Collective::all_to_all, size), Choice{Algorithm::pairwise, Protocol::simple, 16});
    if (std::string(size) != "8B")
      expect_estimate_close(mc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::nvls_tree, Protocol::simple, 16});
  }
  // Sends that forward as they receive are four nodes each (ProtocolParams::cut_through).
  Params cut = default_params();
  cut.protocols[static_cast<int>(Protocol::ll128)].cut_through = true;
  const Machine mt(box, cut);
  const Machine mtc(cluster, cut);
  for (const char* size : {"8B", "1MiB", "256MiB"}) {
    for (auto op : {Collective::all_reduce, Collective::broadcast})
      expect_estimate_close(mt, problem_on(box, op, size), Choice{Algorithm::ring, Protocol::ll128, 16});
    expect_estimate_close(mtc, problem_on(cluster, Collective::all_reduce, size), Choice{Algorithm::hierarchical, Protocol::ll128, 16});
  }
  // Where the switches reduce: collnet, and nvls across nodes (sharp.h's stage per part).
  const auto sharp = testing::cluster("cluster-h100-ib.yaml", 4);
  const Machine ms(sharp, default_params());
  for (const char* size : {"8B", "1MiB", "256MiB"}) {
    expect_estimate_close(ms, problem_on(sharp, Collective::all_reduce, size), Choice{Algorithm::collnet, Protocol::simple, 24});
    expect_estimate_close(ms, problem_on(sharp, Collective::all_reduce, size), Choice{Algorithm::nvls, Protocol::simple, 16});
  }
}

TEST_CASE("an absurd plan is refused before it is built, naming the estimate and the limit") {
  const auto box = topo::load_topology(WIRESIM_SOURCE_DIR "/topologies/hgx-h100.yaml");
  const Machine m(box, default_params());
  // 1e15 B over 8 GPUs in 512 KiB ring chunks: 2 x 14 steps x 8 ranks x 1.9e9/8... loops,
  // some 1e11 nodes, 20 TB: far past the 8 GiB default.
  Problem p = problem_on(box, Collective::all_reduce, "1PB");
  const Choice ring{Algorithm::ring, Protocol::simple, 16};
  CHECK(estimate_plan(m, p, ring).memory > p.limits.max_memory);
  try {
    (void)expand(m, p, ring);
    FAIL("expected a refusal");
  } catch (const input::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("--max-memory") != std::string::npos);
    CHECK(what.find("8 GiB") != std::string::npos);
  }
  // A tighter event limit refuses a modest plan, with its own option named.
  p.size = sim::parse_size("1GiB");
  p.limits.max_events = 1000;
  CHECK_THROWS_WITH_AS((void)expand(m, p, ring), doctest::Contains("--max-events"), input::InputError);
}
