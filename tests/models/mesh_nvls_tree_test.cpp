// Rings over direct-link meshes (models/mesh_rings.cpp) and NVLSTree across nodes
// (models/nvls_tree.cpp): the shapes, the bytes each link carries, and the closed form.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "models/alpha_beta.h"
#include "models/run.h"
#include "models/tuner.h"
#include "test_machines.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

std::vector<topo::DeviceId> gpus_of(const topo::LinkGraph& g) { return {g.gpus().begin(), g.gpus().end()}; }

bool direct_nvlink(const topo::LinkGraph& g, topo::DeviceId a, topo::DeviceId b) {
  for (auto l : g.out_links(a))
    if (g.link(l).to == b && tier_class(g.link(l).tier) == TierClass::nvlink) return true;
  return false;
}

}  // namespace

TEST_CASE("an 8-GPU xGMI full mesh splits into 7 link-disjoint directed rings") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("mi300x-8.yaml"));
  const Machine m(g, default_params());
  const auto gpus = gpus_of(g);
  const auto& rings = m.mesh_rings(gpus);
  // Each GPU has 7 outgoing links; the complete directed graph on 8 vertices decomposes into
  // 7 directed Hamiltonian cycles (Tillson), and the search finds such a decomposition.
  REQUIRE(rings.size() == 7);
  std::set<std::pair<int, int>> used;
  for (const auto& ring : rings) {
    CHECK(std::set<int>(ring.begin(), ring.end()).size() == 8);
    for (int i = 0; i < 8; ++i) CHECK(used.insert({ring[i], ring[(i + 1) % 8]}).second);
  }
  CHECK(used.size() == 56);   // every directed link, once
}

TEST_CASE("the DGX-1 hybrid cube mesh gets rings over NVLink only, bonded pairs used twice") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("dgx1-v100.yaml"));
  const Machine m(g, default_params());
  const auto gpus = gpus_of(g);
  const auto& rings = m.mesh_rings(gpus);
  // 6 NVLinks per V100 (4 neighbours, two of them bonded x2): at most 6 rings.
  CHECK(rings.size() >= 4);
  CHECK(rings.size() <= 6);
  std::map<std::pair<int, int>, int> uses;
  for (const auto& ring : rings)
    for (int i = 0; i < 8; ++i) {
      const int a = ring[i], b = ring[(i + 1) % 8];
      CHECK_MESSAGE(direct_nvlink(g, gpus[a], gpus[b]), fmt::format("{} -> {} has no NVLink", a, b));
      ++uses[{a, b}];
    }
  for (const auto& [pair, n] : uses) CHECK(n <= 2);
  // Switched or P2P-off machines have no mesh rings: the ring keeps rank order there.
  const topo::LinkGraph h = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  CHECK(Machine(h, default_params()).mesh_rings(gpus_of(h)).empty());
  CHECK(Machine(g, default_params(), {.p2p = false}).mesh_rings(gpus).empty());
}

TEST_CASE("a ring all_reduce on the xGMI mesh puts S/4 on every one of the 56 links") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("mi300x-8.yaml"));
  const Machine m(g, default_params());
  const sim::Bytes size{1073741824.0};
  Detail d;
  run_collective(m, Problem{Collective::all_reduce, size, gpus_of(g), 0}, Choice{Algorithm::ring, Protocol::simple, 16},
                 Method::simulate, &d);
  // 7 rings, each block S/(8 x 7); a ring link carries 2(n-1) = 14 blocks = S/4 (Simple: no
  // protocol overhead), and each directed link belongs to exactly one ring.
  int links = 0;
  for (auto a : g.gpus())
    for (auto l : g.out_links(a))
      if (g.device(g.link(l).to).kind == topo::DeviceKind::gpu) {
        ++links;
        CHECK(d.run.links[l].carried.count() == rel_approx(size.count() / 4).epsilon(1e-6));
      }
  CHECK(links == 56);
}

TEST_CASE("across xGMI-mesh nodes the ring uses every NIC: 8 rings on link-disjoint paths, RCCL without PXN") {
  // 7 directed Hamiltonian cycles split the mesh; each ring leaves its cycle's closing edge
  // unused, and the starts are chosen so those 7 edges chain into an 8th path: 8 rings, one per
  // NIC, where 7 cycles would leave a NIC idle (busbw bound 7 x 48 = 336 GB/s; RCCL measures
  // 349 on 2 MI325X nodes). RCCL ships PXN off; a ring stays on the rail of the GPU it enters
  // the next node by (NCCL's "NET n -> GPU a -> .. -> GPU x -> NET n"), GPU x reaching NIC n
  // over PCIe: no xGMI link relays it, and nothing crosses the spines.
  for (const int nodes : {2, 4}) {
    CAPTURE(nodes);
    const topo::LinkGraph g =
        topo::load_topology(testing::shipped("cluster-mi325x-roce.yaml"), {{"nodes", std::to_string(nodes)}});
    const Machine m(g, default_params());
    const sim::Bytes size{1073741824.0};
    Detail d;
    run_collective(m, Problem{Collective::all_reduce, size, gpus_of(g), 0}, Choice{Algorithm::ring, Protocol::simple, 16},
                   Method::simulate, &d);
    // 8 rings, each block S/(n x 8) with n = 8 x nodes ranks; every ring hop carries 2(n-1) blocks.
    const double n = 8.0 * nodes;
    const double hop = size.count() * 2.0 * (n - 1.0) / (n * 8.0);
    int xgmi = 0, nics = 0;
    for (topo::LinkId l = 0; l < g.link_count(); ++l) {
      const auto& link = g.link(l);
      const auto& from = g.device(link.from);
      const auto& to = g.device(link.to);
      CAPTURE(from.name);
      CAPTURE(to.name);
      if (from.kind == topo::DeviceKind::gpu && to.kind == topo::DeviceKind::gpu) {
        ++xgmi;
        CHECK(d.run.links[l].carried.count() == rel_approx(hop).epsilon(1e-6));
      }
      if (from.kind == topo::DeviceKind::nic && link.tier == topo::Tier::roce) {
        ++nics;
        CHECK(d.run.links[l].carried.count() == rel_approx(hop).epsilon(1e-6));
      }
      if (from.name.find("spine") != std::string::npos || to.name.find("spine") != std::string::npos)
        CHECK(d.run.links[l].carried.count() == 0.0);
    }
    CHECK(xgmi == nodes * 56);
    CHECK(nics == nodes * 8);
    // NIC-bound: no faster than 8 NICs at their payload rate allow, and within 15% of it.
    const double bound = 8 * 50e9 * m.arch().efficiency(topo::Tier::roce) * n / (2.0 * (n - 1.0));   // busbw -> algbw
    const double algbw = size.count() / d.run.makespan.count();
    CHECK(algbw <= bound);
    CHECK(algbw >= 0.85 * bound);
    // The closed form agrees.
    const double closed = run_collective(m, Problem{Collective::all_reduce, size, gpus_of(g), 0},
                                         Choice{Algorithm::ring, Protocol::simple, 16}, Method::analytic)
                              .time.count();
    CHECK(closed == rel_approx(run_collective(m, Problem{Collective::all_reduce, size, gpus_of(g), 0},
                                                   Choice{Algorithm::ring, Protocol::simple, 16}, Method::simulate)
                                        .time.count())
                        .epsilon(0.005));
  }
}

TEST_CASE("nvls_tree on 2 x 8 H100: bytes per NIC and per NVLink, by hand") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", "2"}});
  const Machine m(g, default_params());
  const sim::Bytes size{64.0 * 1048576.0};   // 32 loops of 16 channels x 128 KiB
  Detail d;
  run_collective(m, Problem{Collective::all_reduce, size, gpus_of(g), 0},
                 Choice{Algorithm::nvls_tree, Protocol::simple, 16}, Method::simulate, &d);
  // Per loop GPU j holds part w = loop/8 after the in-node reduce-scatter. Tree A (node 0
  // root) sends w/2 up from node 1 and w/2 back down; tree B mirrors it: each NIC direction
  // carries w per loop, S/8 = 8 MiB in all.
  // Each NVLink uplink carries every part of the loop (reduce-scatter reads) plus its own part
  // once (all-gather store): 9/8 S, over NVLS efficiency 0.85 on Hopper.
  const double expect_nic = size.count() / 8;
  const double expect_up = size.count() * 9.0 / 8.0 / 0.85;
  int nics = 0, ups = 0;
  for (topo::LinkId l = 0; l < g.link_count(); ++l) {
    const auto& link = g.link(l);
    const auto& from = g.device(link.from);
    const auto& to = g.device(link.to);
    if (from.kind == topo::DeviceKind::nic && link.tier == topo::Tier::ib) {
      ++nics;
      CHECK(d.run.links[l].carried.count() == rel_approx(expect_nic).epsilon(1e-6));
    }
    if (from.kind == topo::DeviceKind::gpu && to.kind == topo::DeviceKind::nvswitch) {
      ++ups;
      CHECK(d.run.links[l].carried.count() == rel_approx(expect_up).epsilon(1e-6));
    }
  }
  CHECK(nics == 16);
  CHECK(ups > 0);
}

TEST_CASE("nvls_tree: closed form within 15% of the simulation from 1 MiB up (it overlaps the in-node phases more evenly than the simulation does); refused on one node") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", "2"}});
  const Machine m(g, default_params());
  for (double size : {1048576.0, 67108864.0, 1073741824.0}) {
    const Problem p{Collective::all_reduce, sim::Bytes{size}, gpus_of(g), 0};
    const Choice c{Algorithm::nvls_tree, Protocol::simple, 16};
    const double simulated = run_collective(m, p, c, Method::simulate).time.count();
    const double formula = estimate(m, p, c).time.count();
    CHECK_MESSAGE(std::abs(simulated - formula) / simulated < 0.15,
                  fmt::format("at {} B: simulated {} us, formula {} us", size, simulated * 1e6, formula * 1e6));
  }
  // At 1 GiB the NCCL tuner set picks it across nodes (NIC traffic S/8 per GPU, not 2(n-1)/n S/8).
  const Problem big{Collective::all_reduce, sim::Bytes{1073741824.0}, gpus_of(g), 0};
  CHECK(tune(m, big, TunerOptions{}).best.algorithm == Algorithm::nvls_tree);
  const topo::LinkGraph one = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine single(one, default_params());
  const auto why = why_not(single, Problem{Collective::all_reduce, sim::Bytes{1e9}, gpus_of(one), 0},
                           Algorithm::nvls_tree, Protocol::simple);
  REQUIRE(why.has_value());
  CHECK(why->find("more than one node") != std::string::npos);
}
