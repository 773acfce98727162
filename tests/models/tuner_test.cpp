#include <doctest/doctest.h>

#include "models/tuner.h"
#include "input/input_error.h"
#include "test_machines.h"
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
