// Hand-checkable cases per algorithm on a 4-GPU crossbar: every GPU has one 100 GB/s link
// each way to the switch, efficiencies 1 and latencies 0, so times are bytes over rates.
#include <doctest/doctest.h>

#include <cmath>

#include "input/input_error.h"
#include "models/plan.h"
#include "models/run.h"
#include "test_machines.h"
#include "tests/approx.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

constexpr double kRate = 100e9;            // B/s per direction
const sim::Bytes kSize{64.0 * (1 << 20)};  // 64 MiB

struct Fixture {
  topo::LinkGraph graph = testing::crossbar(4, sim::BytesPerSec{kRate});
  Params params = testing::plain_params(true);
  Machine machine{graph, params};
  Problem problem(Collective op, sim::Bytes size = kSize) {
    return Problem{op, size, graph.gpus(), 0};
  }
  Detail run(Collective op, Algorithm a, Protocol p = Protocol::simple, sim::Bytes size = kSize) {
    Detail d;
    run_collective(machine, problem(op, size), Choice{a, p, 16}, Method::simulate, &d);
    return d;
  }
  // Bytes the GPU's uplink (gpu -> switch) carried.
  double uplink_bytes(const Detail& d, int gpu) {
    return d.run.links[graph.out_links(graph.gpus()[gpu])[0]].carried.count();
  }
  double downlink_bytes(const Detail& d, int gpu) {
    return d.run.links[graph.in_links(graph.gpus()[gpu])[0]].carried.count();
  }
};

double transfer_bytes(const sim::TransferDag& dag) {
  double total = 0.0;
  for (sim::NodeId i = 0; i < dag.size(); ++i)
    if (dag.node(i).kind == sim::NodeKind::transfer) total += dag.node(i).bytes.count();
  return total;
}

}  // namespace

TEST_CASE("ring all_reduce with Simple and no latency runs at the link rate") {
  Fixture f;
  const Detail d = f.run(Collective::all_reduce, Algorithm::ring);
  // 2(n-1) = 6 steps; each moves one 16 MiB block per rank, so each uplink carries
  // 6 x 16 MiB = 2(n-1)/n x S, and the time is that over 100 GB/s.
  CHECK(d.plan.steps == 6);
  const double expected = 1.5 * kSize.count() / kRate;
  CHECK(d.run.makespan.count() == rel_approx(expected).epsilon(1e-9));
  for (int g = 0; g < 4; ++g) CHECK(f.uplink_bytes(d, g) == rel_approx(1.5 * kSize.count()));
  // Bytes are conserved: 4 ranks x 6 steps x 16 MiB sent.
  CHECK(transfer_bytes(d.plan.dag) == rel_approx(4 * 6 * kSize.count() / 4));
  // busbw = algbw x 2(n-1)/n = the link rate.
  const Outcome o = run_collective(f.machine, f.problem(Collective::all_reduce), Choice{Algorithm::ring, Protocol::simple, 16},
                                   Method::simulate);
  CHECK(o.busbw_GBps == rel_approx(100.0).epsilon(1e-9));
}

TEST_CASE("ring all_gather and reduce_scatter take n-1 steps") {
  Fixture f;
  for (auto op : {Collective::all_gather, Collective::reduce_scatter}) {
    const Detail d = f.run(op, Algorithm::ring);
    CHECK(d.plan.steps == 3);
    // (n-1)/n x S over the link: 3 blocks of 16 MiB leave every GPU.
    CHECK(d.run.makespan.count() == rel_approx(0.75 * kSize.count() / kRate).epsilon(1e-9));
    CHECK(f.uplink_bytes(d, 2) == rel_approx(0.75 * kSize.count()));
  }
}

TEST_CASE("LL sends twice the bytes on the wire: half the busbw") {
  Fixture f;
  const Detail d = f.run(Collective::all_reduce, Algorithm::ring, Protocol::ll);
  // LL carries 8 payload bytes per 16: the uplink carries 2 x 1.5 S, and LL's cap (ll_max
  // for Hopper on one node, 141 GB/s of payload) is above the 50 GB/s of payload left.
  CHECK(f.uplink_bytes(d, 0) == rel_approx(3.0 * kSize.count()));
  CHECK(d.run.makespan.count() == rel_approx(3.0 * kSize.count() / kRate).epsilon(1e-9));
}

TEST_CASE("LL128 forwards as it receives: a ring step costs overhead + max(chunk / rate, step latency)") {
  // One chunk of S / 4 per rank (one loop), 3 all_gather steps. Each rank sends a step once
  // its previous send has left and the first lines of what it forwards have arrived (a step
  // latency after they left), after the overhead; the last data lands a latency after it left.
  // Store-and-forward would take 3 x (o + x + λ).
  const sim::Bytes size{1 << 20};
  const double x = size.count() / 4.0 / (120.0 / 128.0) / kRate;   // one block's wire bytes at 100 GB/s
  for (const double lambda_us : {5.0, 1.0}) {
    CAPTURE(lambda_us);
    topo::LinkGraph graph = testing::crossbar(4, sim::BytesPerSec{kRate});
    Params params = testing::plain_params(true);
    params.latency[Algorithm::ring].step[static_cast<int>(TierClass::nvlink)][static_cast<int>(Protocol::ll128)] =
        sim::Seconds{lambda_us * 1e-6};
    params.protocols[static_cast<int>(Protocol::ll128)].overhead = sim::Seconds{1e-6};
    params.protocols[static_cast<int>(Protocol::ll128)].cut_through = true;   // shipped off (params.yaml)
    Machine machine(graph, params);
    const Problem problem{Collective::all_gather, size, graph.gpus(), 0};
    const Choice choice{Algorithm::ring, Protocol::ll128, 16};
    Detail d;
    run_collective(machine, problem, choice, Method::simulate, &d);
    REQUIRE(d.plan.loops == 1);
    const double o = 1e-6, lambda = lambda_us * 1e-6;
    const double expected = (o + x) + 2.0 * (o + std::max(x, lambda)) + lambda;
    CHECK(d.run.makespan.count() == rel_approx(expected).epsilon(1e-6));
    CHECK(d.run.makespan.count() < 3.0 * (o + x + lambda) * 0.99);
    // The closed form plays the same recurrence; a chain (broadcast, several chunks) too.
    CHECK(run_collective(machine, problem, choice, Method::analytic).time.count() ==
          rel_approx(expected).epsilon(1e-9));
    const Problem chain{Collective::broadcast, sim::Bytes{64.0 * (1 << 20)}, graph.gpus(), 0};
    const double sim_chain = run_collective(machine, chain, choice, Method::simulate).time.count();
    CHECK(run_collective(machine, chain, choice, Method::analytic).time.count() == rel_approx(sim_chain).epsilon(1e-9));
  }
}

TEST_CASE("broadcast is a pipelined chain from the root") {
  Fixture f;
  const Detail d = f.run(Collective::broadcast, Algorithm::ring);
  // Chunks of 16 channels x 512 KiB = 8 MiB, so 8 chunks over 3 hops:
  // (hops + chunks - 1) x chunk / rate = 10 x 8 MiB / 100 GB/s.
  CHECK(d.plan.steps == 3);
  CHECK(d.plan.loops == 8);
  CHECK(d.run.makespan.count() == rel_approx(10.0 * 8.0 * (1 << 20) / kRate).epsilon(1e-9));
  // Every rank but the last forwards the whole buffer once; the last sends nothing.
  CHECK(f.uplink_bytes(d, 0) == rel_approx(kSize.count()));
  CHECK(f.uplink_bytes(d, 3) == 0.0);
}

TEST_CASE("reduce gathers into the root") {
  Fixture f;
  Problem p = f.problem(Collective::reduce);
  p.root = 2;
  Detail d;
  run_collective(f.machine, p, Choice{Algorithm::ring, Protocol::simple, 16}, Method::simulate, &d);
  // The root only receives: its downlink carries S, its uplink nothing.
  CHECK(f.uplink_bytes(d, 2) == 0.0);
  CHECK(f.downlink_bytes(d, 2) == rel_approx(kSize.count()));
}

TEST_CASE("direct and pairwise all_to_all move (n-1)/n of the buffer out of every GPU") {
  Fixture f;
  for (auto a : {Algorithm::direct, Algorithm::pairwise}) {
    const Detail d = f.run(Collective::all_to_all, a);
    // Each rank sends S/4 to each of 3 peers: 48 MiB per uplink, at 100 GB/s either all at
    // once (direct, sharing the uplink three ways) or one peer per step (pairwise).
    CHECK(f.uplink_bytes(d, 1) == rel_approx(0.75 * kSize.count()));
    CHECK(d.run.makespan.count() == rel_approx(0.75 * kSize.count() / kRate).epsilon(1e-9));
  }
  CHECK(f.run(Collective::all_to_all, Algorithm::pairwise).plan.steps == 3);
}

TEST_CASE("send_recv streams S to the next rank at the link rate") {
  Fixture f;
  const Detail d = f.run(Collective::send_recv, Algorithm::direct);
  // NCCL gives each peer 2 P2P channels per NVLink (the test crossbar has one link per GPU):
  // 32 MiB per channel in 512 KiB NVLink chunks, 64 chunks each, back to back.
  CHECK(d.plan.loops == 64);
  CHECK(d.plan.shape.find("2 channels") != std::string::npos);
  CHECK(d.run.makespan.count() == rel_approx(kSize.count() / kRate).epsilon(1e-9));
}

TEST_CASE("one-shot pushes the whole buffer to every peer; two-shot a part twice") {
  Fixture f;
  const Detail one = f.run(Collective::all_reduce, Algorithm::one_shot);
  // (n-1) x S out of every GPU.
  CHECK(f.uplink_bytes(one, 0) == rel_approx(3.0 * kSize.count()));
  CHECK(one.run.makespan.count() == rel_approx(3.0 * kSize.count() / kRate).epsilon(1e-9));
  const Detail two = f.run(Collective::all_reduce, Algorithm::two_shot);
  // 2 (n-1) S / n out of every GPU, in two phases.
  CHECK(f.uplink_bytes(two, 0) == rel_approx(1.5 * kSize.count()));
  CHECK(two.run.makespan.count() == rel_approx(1.5 * kSize.count() / kRate).epsilon(1e-9));
}

TEST_CASE("NVLS reads every part over every uplink once and multicasts it to every downlink once") {
  Fixture f;
  const double eff = f.params.arch("hopper").nvls_efficiency;
  const Detail ag = f.run(Collective::all_gather, Algorithm::nvls);
  // all_gather: each GPU stores its S/n once (uplink); the switch copies every part to every
  // GPU (each downlink carries all n parts = S); wire bytes are payload / efficiency.
  CHECK(f.uplink_bytes(ag, 0) == rel_approx(kSize.count() / 4 / eff));
  CHECK(f.downlink_bytes(ag, 0) == rel_approx(kSize.count() / eff));
  const Detail ar = f.run(Collective::all_reduce, Algorithm::nvls);
  // all_reduce: every uplink carries S (reduce loads) + S/n (its multicast store); every
  // downlink S/n (its reduced part) + S (all multicasts).
  CHECK(f.uplink_bytes(ar, 3) == rel_approx(1.25 * kSize.count() / eff));
  CHECK(f.downlink_bytes(ar, 3) == rel_approx(1.25 * kSize.count() / eff));
}

TEST_CASE("a single-node tree is a chain: leaves send up once, the root sends down once") {
  Fixture f;
  const Detail d = f.run(Collective::all_reduce, Algorithm::tree);
  CHECK(d.plan.steps == 6);  // 3 hops up, 3 down
  CHECK(f.uplink_bytes(d, 0) == rel_approx(kSize.count()));        // root: down only
  CHECK(f.uplink_bytes(d, 3) == rel_approx(kSize.count()));        // leaf: up only
  CHECK(f.uplink_bytes(d, 1) == rel_approx(2.0 * kSize.count()));  // middle: both
}

TEST_CASE("latency: a tiny ring all_reduce costs base + 2(n-1) steps") {
  topo::LinkGraph g = testing::crossbar(8, sim::BytesPerSec{450e9});
  Params params = testing::plain_params(false);
  Machine m(g, params);
  const Problem p{Collective::all_reduce, sim::Bytes{8}, g.gpus(), 0};
  const Outcome o = run_collective(m, p, Choice{Algorithm::ring, Protocol::ll, 16}, Method::simulate);
  // NCCL's model: 6.6 us + 14 x 0.6 us = 15.0 us (nccl-model.md §10); 8 bytes add ~nothing.
  CHECK(o.time.us() == rel_approx(15.0).epsilon(1e-3));
}

TEST_CASE("algorithms that do not apply are refused with a reason") {
  Fixture f;
  const auto refuse = [&](Collective op, Algorithm a, Protocol p, const char* words) {
    const auto why = why_not(f.machine, f.problem(op), a, p);
    REQUIRE(why.has_value());
    CHECK_MESSAGE(why->find(words) != std::string::npos, *why);
    CHECK_THROWS_AS(expand(f.machine, f.problem(op), Choice{a, p, 16}), input::InputError);
  };
  refuse(Collective::all_reduce, Algorithm::nvls, Protocol::ll, "Simple");
  refuse(Collective::all_gather, Algorithm::tree, Protocol::simple, "all_reduce only");
  refuse(Collective::all_reduce, Algorithm::pairwise, Protocol::simple, "all_to_all only");
  refuse(Collective::all_to_all, Algorithm::ring, Protocol::simple, "pairwise or direct");
  refuse(Collective::all_reduce, Algorithm::hierarchical, Protocol::simple, "more than one node");
  refuse(Collective::all_reduce, Algorithm::nvls_tree, Protocol::simple, "more than one node");
  // No multicast on the switch: no NVLS.
  topo::LinkGraph plain = testing::crossbar(4, sim::BytesPerSec{kRate}, sim::Seconds{0.0}, false);
  Machine m(plain, f.params);
  const auto why = why_not(m, Problem{Collective::all_reduce, kSize, plain.gpus(), 0}, Algorithm::nvls, Protocol::simple);
  REQUIRE(why.has_value());
  CHECK(why->find("multicast") != std::string::npos);
  // One GPU is not a collective.
  CHECK(why_not(f.machine, Problem{Collective::all_reduce, kSize, {f.graph.gpus()[0]}, 0}, Algorithm::ring,
                Protocol::simple).has_value());
}
