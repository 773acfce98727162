#include <doctest/doctest.h>

#include "models/tuner.h"
#include "input/input_error.h"
#include "test_machines.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

Decision tune_at(const Machine& m, const topo::LinkGraph& g, Collective op, double bytes, TunerOptions o = {}) {
  return tune(m, Problem{op, sim::Bytes{bytes}, g.gpus(), 0}, o);
}

}  // namespace

TEST_CASE("on HGX H100 the tuner picks LL for tiny messages and NVLS/Simple for large ones") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  // 8 B: every algorithm is pure latency; LL's per-step cost (0.6 us on NVLink) is the
  // lowest, and NCCL's own tables make ring/LL (6.6 + 14 x 0.6 = 15.0 us) edge out
  // tree/LL (6.8 + 2 x 7 x 0.6 = 15.2 us) on one node.
  const Decision tiny = tune_at(m, g, Collective::all_reduce, 8);
  CHECK(tiny.best.protocol == Protocol::ll);
  CHECK((tiny.best.algorithm == Algorithm::ring || tiny.best.algorithm == Algorithm::tree));
  // 1 GiB: NVLS moves (n+1)/n of the buffer per GPU instead of the ring's 2(n-1)/n.
  const Decision large = tune_at(m, g, Collective::all_reduce, 1073741824.0);
  CHECK(large.best.algorithm == Algorithm::nvls);
  CHECK(large.best.protocol == Protocol::simple);
  // Every candidate is listed, refused ones with a reason (NVLS with LL).
  bool saw_refusal = false;
  for (const auto& c : large.candidates) saw_refusal = saw_refusal || (!c.time && !c.note.empty());
  CHECK(saw_refusal);
}

TEST_CASE("without NVLS (HGX A100) large all_reduce goes to ring/Simple") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  const Decision large = tune_at(m, g, Collective::all_reduce, 1073741824.0);
  CHECK(large.best.algorithm == Algorithm::ring);
  CHECK(large.best.protocol == Protocol::simple);
}

TEST_CASE("protocol switches from LL to LL128 or Simple as messages grow") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  Protocol previous = Protocol::ll;
  int switches = 0;
  for (double s = 8; s <= 4294967296.0; s *= 2) {
    const Protocol p = tune_at(m, g, Collective::all_reduce, s).best.protocol;
    // Protocols only move forward (LL -> LL128 -> Simple) as the size grows.
    CHECK(static_cast<int>(p) >= static_cast<int>(previous));
    switches += p != previous;
    previous = p;
  }
  CHECK(switches >= 1);
  CHECK(previous == Protocol::simple);
}

TEST_CASE("a forced algorithm that does not apply is refused") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  TunerOptions o;
  o.algorithm = Algorithm::nvls;
  CHECK_THROWS_AS(tune_at(m, g, Collective::all_reduce, 1e6, o), input::InputError);
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::ll128;
  const Decision d = tune_at(m, g, Collective::all_reduce, 1e6, o);
  CHECK(d.best.algorithm == Algorithm::ring);
  CHECK(d.best.protocol == Protocol::ll128);
}

TEST_CASE("NCCL leaves LL128 out unless forced where its rings leave NVLink, and before Hopper where a GPU's NIC is far") {
  // src/graph/tuning.cc ncclTopoTuneModel: LL128 (protoEnable 2, NCCL_PROTO unset) runs only where
  // typeIntra <= NVB and typeInter <= PXB (Hopper and later: <= PXN).
  const auto ll128_picked = [](const Machine& m, const topo::LinkGraph& g, TunerOptions o = {}) {
    bool any = false;
    for (double bytes = 64 * 1024.0; bytes <= 64 * 1048576.0; bytes *= 2)
      any = any || tune_at(m, g, Collective::all_reduce, bytes, o).best.protocol == Protocol::ll128;
    return any;
  };
  // PCIe only: the closed form would take LL128 from 1 to 4 MiB; NCCL never does by default.
  const topo::LinkGraph pcie = topo::load_topology(testing::shipped("pcie-h100-8gpu-2socket.yaml"));
  const Machine mp(pcie, default_params());
  const Problem p{Collective::all_reduce, sim::Bytes{1048576.0}, pcie.gpus(), 0};
  const auto why = ll128_off_by_default(mp, p);
  REQUIRE(why.has_value());
  CHECK(why->find("typeIntra <= NVB") != std::string::npos);
  CHECK_FALSE(ll128_picked(mp, pcie));
  for (const auto& c : tune(mp, p, TunerOptions{}).candidates)
    if (c.choice.protocol == Protocol::ll128) CHECK_FALSE(c.time.has_value());
  TunerOptions forced;   // NCCL_PROTO=LL128
  forced.protocol = Protocol::ll128;
  CHECK(tune(mp, p, forced).best.protocol == Protocol::ll128);
  // NVLink inside the node: on, including the DGX-1's hybrid cube mesh, whose rings follow NVLink.
  const topo::LinkGraph hgx = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine mh(hgx, default_params());
  CHECK_FALSE(ll128_off_by_default(mh, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, hgx.gpus(), 0}));
  const topo::LinkGraph dgx1 = topo::load_topology(testing::shipped("dgx1-v100.yaml"));
  const Machine mv(dgx1, default_params());
  CHECK_FALSE(ll128_off_by_default(mv, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, dgx1.gpus(), 0}));
  CHECK(ll128_picked(mv, dgx1));
  // The same NVLink box with P2P off: every pair stages through host memory, a PCIe path.
  const Machine off(hgx, default_params(), Transports{.p2p = false});
  CHECK(ll128_off_by_default(off, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, hgx.gpus(), 0}).has_value());
  // Across nodes with every GPU bound to the other socket's NIC (SYS): Hopper keeps LL128 (PXN);
  // the same cluster with Ampere GPUs does not.
  const topo::LinkGraph far = topo::load_topology(testing::shipped("cluster-h100-ib-far-nic.yaml"), {{"nodes", "2"}});
  const Machine mf(far, default_params());
  CHECK_FALSE(ll128_off_by_default(mf, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, far.gpus(), 0}));
  const std::string ampere_far =
      "name: far-a100\ninclude: cluster-h100-ib-far-nic.yaml\nnode:\n  devices:\n"
      "    gpu: {model: A100, arch: ampere, memory_bandwidth: 2TB/s}\n";
  const topo::LinkGraph fa = topo::load_topology_text(ampere_far, testing::shipped("far-a100.yaml"), {{"nodes", "2"}});
  const Machine mfa(fa, default_params());
  const auto far_why = ll128_off_by_default(mfa, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, fa.gpus(), 0});
  REQUIRE(far_why.has_value());
  CHECK(far_why->find("typeInter <= PXB") != std::string::npos);
  // The cluster's own NIC binding (one per GPU, behind its PCIe switch) keeps LL128 for Ampere.
  const std::string ampere_near =
      "name: near-a100\ninclude: cluster-h100-ib.yaml\nnode:\n  devices:\n"
      "    gpu: {model: A100, arch: ampere, memory_bandwidth: 2TB/s}\n";
  const topo::LinkGraph na = topo::load_topology_text(ampere_near, testing::shipped("near-a100.yaml"), {{"nodes", "2"}});
  const Machine mna(na, default_params());
  CHECK_FALSE(ll128_off_by_default(mna, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, na.gpus(), 0}));
}

TEST_CASE("RCCL runs its MSCCL all-pairs all_reduce ahead of its tuner on MI300X's xGMI mesh, up to 16 MiB") {
  // models/params.yaml [R2]: allreduce-allpairs-8n: LL below 512 KiB, Simple to 16 MiB (out of
  // place). Shipped off: RCCL's tuner decides.
  const topo::LinkGraph g = topo::load_topology(testing::shipped("mi300x-8.yaml"));
  const Machine shipped(g, default_params());
  CHECK(shipped.arch().msccl_all_reduce.count() == 0.0);
  CHECK(tune_at(shipped, g, Collective::all_reduce, 64 * 1024.0).best.algorithm != Algorithm::two_shot);
  CHECK(tune_at(shipped, g, Collective::all_reduce, 64 * 1024.0).candidates.size() > 1);
  Params on = default_params();
  on.architectures.at("cdna3").msccl_all_reduce = sim::Bytes{16.0 * 1048576.0};
  const Machine m(g, on);
  REQUIRE(m.arch().msccl_all_reduce.count() == 16.0 * 1048576.0);
  const Decision small = tune_at(m, g, Collective::all_reduce, 64 * 1024.0);
  CHECK(small.best.algorithm == Algorithm::two_shot);
  CHECK(small.best.protocol == Protocol::ll);
  // Taken alone: the library does not ask its tuner.
  REQUIRE(small.candidates.size() == 1);
  CHECK(small.candidates.front().time.has_value());
  CHECK(small.candidates.front().note.find("ahead of its tuner") != std::string::npos);
  CHECK(tune_at(m, g, Collective::all_reduce, 511 * 1024.0).best.protocol == Protocol::ll);
  CHECK(tune_at(m, g, Collective::all_reduce, 512 * 1024.0).best.protocol == Protocol::simple);
  const Decision top = tune_at(m, g, Collective::all_reduce, 16 * 1048576.0);
  CHECK(top.best.algorithm == Algorithm::two_shot);
  CHECK(top.best.protocol == Protocol::simple);
  // Above its range, and for other collectives, RCCL's tuner decides among its own algorithms.
  const Decision above = tune_at(m, g, Collective::all_reduce, 32 * 1048576.0);
  CHECK(above.best.algorithm != Algorithm::two_shot);
  CHECK(above.candidates.size() > 1);
  CHECK(tune_at(m, g, Collective::all_gather, 1048576.0).best.algorithm != Algorithm::two_shot);
  // NCCL_ALGO / NCCL_PROTO set, or the `all` candidate set: the tuner compares as before.
  TunerOptions ring;
  ring.algorithm = Algorithm::ring;
  CHECK(tune_at(m, g, Collective::all_reduce, 1048576.0, ring).best.algorithm == Algorithm::ring);
  TunerOptions ll128;
  ll128.protocol = Protocol::ll128;
  CHECK(tune_at(m, g, Collective::all_reduce, 1048576.0, ll128).best.protocol == Protocol::ll128);
  TunerOptions all;
  all.all_algorithms = true;
  CHECK(tune_at(m, g, Collective::all_reduce, 1048576.0, all).candidates.size() > 1);
  // Only the whole 8-GPU mesh: 4 of its GPUs run RCCL's tuner.
  const std::vector<topo::DeviceId> four(g.gpus().begin(), g.gpus().begin() + 4);
  CHECK(tune(m, Problem{Collective::all_reduce, sim::Bytes{1048576.0}, four, 0}, TunerOptions{}).best.algorithm !=
        Algorithm::two_shot);
  // Not across nodes.
  const topo::LinkGraph two = topo::load_topology(testing::shipped("cluster-mi300x-roce.yaml"), {{"nodes", "2"}});
  const Machine m2(two, on);
  REQUIRE(m2.arch().msccl_all_reduce.count() > 0.0);
  CHECK(tune_at(m2, two, Collective::all_reduce, 1048576.0).best.algorithm != Algorithm::two_shot);
}

TEST_CASE("an architecture's own Simple overhead is paid once per step of a ring that fits in one loop") {
  // 32 MiB on 8 MI355X: 14 channels of 2.4 MiB, one loop of 8 chunks each, so the all_reduce's
  // 2(n-1) = 14 chained steps each pay one Simple send overhead and nothing else moves.
  const topo::LinkGraph one = topo::load_topology(testing::shipped("cluster-mi355x-roce.yaml"), {{"nodes", "1"}});
  Params own = default_params();
  own.architectures.at("cdna4").simple_overhead = sim::Seconds{1.5e-6};
  const Machine shipped(one, default_params());
  const Machine faster(one, own);
  TunerOptions ring;
  ring.algorithm = Algorithm::ring;
  ring.protocol = Protocol::simple;
  const Choice c = tune_at(shipped, one, Collective::all_reduce, 32 * 1048576.0, ring).best;
  REQUIRE(c.algorithm == Algorithm::ring);
  const Problem p{Collective::all_reduce, sim::Bytes{32 * 1048576.0}, {one.gpus().begin(), one.gpus().end()}, 0};
  const auto before = testing::closed_and_simulated(shipped, p, c);
  const auto after = testing::closed_and_simulated(faster, p, c);
  const double saved = 14 * (default_params().protocol(Protocol::simple).overhead.count() - 1.5e-6);
  CHECK(before.closed - after.closed == rel_approx(saved).epsilon(1e-6));
  CHECK(before.simulated - after.simulated == rel_approx(saved).epsilon(1e-6));
}

TEST_CASE("MI355X runs RCCL's MSCCL all-pairs all_reduce as shipped: one node, up to 16 MiB") {
  // RCCL matches its MSCCL model on the xGMI mesh alone, whatever the gfx (params.yaml [R2]):
  // shipped on for cdna4, whose data show allreduce_pairs' LL -> Simple switch at 512 KiB.
  const topo::LinkGraph one = topo::load_topology(testing::shipped("cluster-mi355x-roce.yaml"), {{"nodes", "1"}});
  const Machine m(one, default_params());
  REQUIRE(m.arch_name() == "cdna4");
  CHECK(m.arch().msccl_all_reduce.count() == 16.0 * 1048576.0);
  const Decision small = tune_at(m, one, Collective::all_reduce, 64 * 1024.0);
  CHECK(small.best.algorithm == Algorithm::two_shot);
  CHECK(small.best.protocol == Protocol::ll);
  CHECK(small.candidates.size() == 1);
  const Decision mid = tune_at(m, one, Collective::all_reduce, 4 * 1048576.0);
  CHECK(mid.best.algorithm == Algorithm::two_shot);
  CHECK(mid.best.protocol == Protocol::simple);
  CHECK(tune_at(m, one, Collective::all_reduce, 32 * 1048576.0).best.algorithm != Algorithm::two_shot);
  // Its all-pairs exchange beats the ring where the ring pays 14 steps of latency: at 4 MiB the
  // all-pairs all_reduce simulates faster than RCCL's tuner's own pick without it.
  TunerOptions own;
  own.protocol = Protocol::simple;   // forcing a protocol hands the choice back to the tuner
  const Choice ring = tune_at(m, one, Collective::all_reduce, 4 * 1048576.0, own).best;
  REQUIRE(ring.algorithm != Algorithm::two_shot);
  const Problem p{Collective::all_reduce, sim::Bytes{4 * 1048576.0}, {one.gpus().begin(), one.gpus().end()}, 0};
  CHECK(run_collective(m, p, mid.best, Method::simulate).time < run_collective(m, p, ring, Method::simulate).time);
  // Two MI355X nodes: RCCL's tuner.
  const topo::LinkGraph two = topo::load_topology(testing::shipped("cluster-mi355x-roce.yaml"), {{"nodes", "2"}});
  const Machine m2(two, default_params());
  CHECK(tune_at(m2, two, Collective::all_reduce, 1048576.0).best.algorithm != Algorithm::two_shot);
}
