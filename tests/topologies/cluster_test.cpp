// Clusters: nodes joined by a rail-optimised fabric; routes across nodes and ECMP.
#include <doctest/doctest.h>

#include <chrono>
#include <set>

#include "input/input_error.h"

#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/routes.h"

using namespace wiresim::topo;

namespace {
const std::string kDir = WIRESIM_SOURCE_DIR "/topologies/";
DeviceId id(const LinkGraph& g, std::string_view name) { return g.find(name).value(); }

std::vector<Tier> tiers(const LinkGraph& g, std::span<const LinkId> links) {
  std::vector<Tier> out;
  for (LinkId l : links) out.push_back(g.link(l).tier);
  return out;
}
}  // namespace

TEST_CASE("cluster-h100-ib: 4 nodes, 8 rails, one leaf per rail, 32 spines") {
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml");
  CHECK(g.gpus().size() == 32);
  CHECK(g.device(id(g, "node2.gpu3")).node == 2);
  CHECK(g.device(id(g, "node2.nic3")).rail == 3);
  CHECK(g.device(id(g, "leaf5")).rail == 5);
  CHECK(g.device(id(g, "leaf5")).node == -1);
  // 32 node ports + 32 uplinks per leaf (radix 64, 1:1): one cable to each of 32 spines.
  CHECK(g.find("spine31").has_value());
  CHECK_FALSE(g.find("spine32").has_value());
  CHECK_FALSE(g.find("leaf8").has_value());
  const Router r(g);
  CHECK(r.nvlink_domain() == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                              2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3});
  CHECK(r.matrix_label(id(g, "node0.gpu0"), id(g, "node1.gpu0")) == "NET");
  CHECK(r.transport(id(g, "node0.gpu0"), id(g, "node1.gpu0")) == Transport::net);
  CHECK(r.transport(id(g, "node0.gpu0"), id(g, "node0.gpu1")) == Transport::p2p_nvlink);
}

TEST_CASE("cluster routes: same node, same rail across nodes, different rails") {
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml");
  const Router r(g);
  // Same node: gpu -> nvswitch -> gpu.
  CHECK(tiers(g, r.route(id(g, "node0.gpu1"), id(g, "node0.gpu6"))) ==
        std::vector<Tier>{Tier::nvlink, Tier::nvlink});
  // Same rail: gpu2 -> pcie_switch2 -> nic2 -> leaf2 -> nic2 -> pcie_switch2 -> gpu2.
  const auto same_rail = r.route(id(g, "node0.gpu2"), id(g, "node3.gpu2"));
  CHECK(tiers(g, same_rail) == std::vector<Tier>{Tier::pcie, Tier::pcie, Tier::ib, Tier::ib,
                                                 Tier::pcie, Tier::pcie});
  CHECK(g.link_name(same_rail[2]) == "node0.nic2->leaf2");
  CHECK(g.link_name(same_rail[3]) == "leaf2->node3.nic2");
  // Rail 2 to rail 5: through a spine. 2 + 4 + 2 links; bottleneck one NDR port.
  const auto cross = r.route(id(g, "node0.gpu2"), id(g, "node1.gpu5"));
  REQUIRE(cross.size() == 8);
  CHECK(tiers(g, cross) == std::vector<Tier>{Tier::pcie, Tier::pcie, Tier::ib, Tier::ib, Tier::ib,
                                             Tier::ib, Tier::pcie, Tier::pcie});
  CHECK(g.device(g.link(cross[3]).to).name.starts_with("spine"));
  CHECK(g.link_name(cross[4]).starts_with("spine"));
  CHECK(g.link_name(cross[4]).ends_with("->leaf5"));
  CHECK(r.bottleneck(cross).count() == rel_approx(50e9));
  // Latency: 4 PCIe hops of 115 ns + 4 IB cables of 300 ns.
  CHECK(r.latency(cross).count() == rel_approx(4 * 115e-9 + 4 * 300e-9));
}

TEST_CASE("PXN: across rails, a GPU route crosses NVLink to the GPU on the destination's rail") {
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml");
  Router r(g);
  r.set_pxn(true);
  // node0.gpu2 -> nvswitch -> node0.gpu5, then rail 5: nic5 -> leaf5 -> node1.nic5 -> gpu5.
  const auto pxn = r.route(id(g, "node0.gpu2"), id(g, "node1.gpu5"));
  CHECK(tiers(g, pxn) == std::vector<Tier>{Tier::nvlink, Tier::nvlink, Tier::pcie, Tier::pcie, Tier::ib, Tier::ib,
                                           Tier::pcie, Tier::pcie});
  CHECK(g.link_name(pxn[1]).ends_with("->node0.gpu5"));
  CHECK(g.link_name(pxn[4]) == "node0.nic5->leaf5");
  for (LinkId l : pxn) CHECK_FALSE(g.link_name(l).find("spine") != std::string::npos);
  // Same rail, and GPU to NIC: unchanged by PXN.
  const Router plain(g);
  const auto a = r.route(id(g, "node0.gpu2"), id(g, "node3.gpu2"));
  const auto b = plain.route(id(g, "node0.gpu2"), id(g, "node3.gpu2"));
  CHECK(std::vector<LinkId>(a.begin(), a.end()) == std::vector<LinkId>(b.begin(), b.end()));
}

TEST_CASE("across rails, a NIC under the GPU's own PCIe switches takes the flow directly (PXB before PXN)") {
  // hgx-h100.yaml: GPU r and NIC r each under their own PCIe switch, pairs of switches
  // (GPUs 0,1 / 2,3 / ...) under one upstream switch. NCCL (src/graph/paths.cc) relays over
  // NVLink only to reach a NIC faster or without crossing the CPU: node0.gpu2 reaches nic3
  // through its upstream switch, so a flow to rail 3 leaves by nic3 with no NVLink hop.
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml");
  Router r(g);
  r.set_pxn(true);
  const auto direct = r.route(id(g, "node0.gpu2"), id(g, "node1.gpu3"));
  CHECK(tiers(g, direct) == std::vector<Tier>{Tier::pcie, Tier::pcie, Tier::pcie, Tier::pcie, Tier::ib, Tier::ib,
                                              Tier::pcie, Tier::pcie});
  CHECK(g.link_name(direct[4]) == "node0.nic3->leaf3");
  REQUIRE(r.pxb_nic(id(g, "node0.gpu2"), 3).has_value());
  CHECK(*r.pxb_nic(id(g, "node0.gpu2"), 3) == id(g, "node0.nic3"));
  // nic5 is behind the CPU's root complex from gpu2: no PXB NIC on rail 5.
  CHECK_FALSE(r.pxb_nic(id(g, "node0.gpu2"), 5).has_value());
}

// The spine a cross-leaf route climbs to (the first hop into a device named spine*).
DeviceId spine_of(const LinkGraph& g, std::span<const LinkId> links) {
  for (LinkId l : links)
    if (g.device(g.link(l).to).name.starts_with("spine")) return g.link(l).to;
  FAIL("the route crosses no spine");
  return 0;
}

TEST_CASE("ECMP: flows of one pair spread over all spines, deterministically") {
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml", {{"spines", "4"}});
  const Router r(g);
  std::set<DeviceId> spines;
  for (std::uint32_t flow = 0; flow < 4; ++flow) {
    const auto links = r.route(id(g, "node0.gpu0"), id(g, "node2.gpu7"), flow);
    spines.insert(g.link(links[3]).to);
  }
  // 4 consecutive flows take the 4 spines.
  CHECK(spines.size() == 4);
  // Bundles: 32 uplinks over 4 spines = 8 cables = 400 GB/s per leaf-spine link.
  const auto links = r.route(id(g, "node0.gpu0"), id(g, "node2.gpu7"), 1);
  CHECK(g.link(links[3]).count == 8);
  CHECK(g.link(links[3]).bandwidth.count() == rel_approx(400e9));
  // A second router on the same graph picks the same paths.
  const Router again(g);
  for (std::uint32_t flow = 0; flow < 8; ++flow) {
    const auto a = r.route(id(g, "node1.gpu3"), id(g, "node0.gpu4"), flow);
    const auto b = again.route(id(g, "node1.gpu3"), id(g, "node0.gpu4"), flow);
    CHECK(std::vector<LinkId>(a.begin(), a.end()) == std::vector<LinkId>(b.begin(), b.end()));
  }
  // Over many pairs, every spine carries some flow.
  std::set<DeviceId> used;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b) used.insert(spine_of(g, r.route(g.gpus()[a], g.gpus()[8 + b])));
  CHECK(used.size() == 4);
}

TEST_CASE("--set nodes scales the cluster; 2,048 nodes build fast") {
  const LinkGraph small = load_topology(kDir + "cluster-h100-roce.yaml", {{"nodes", "2"}});
  CHECK(small.gpus().size() == 16);
  CHECK(small.link(small.out_links(*small.find("node1.nic0")).back()).tier == Tier::roce);

  const auto start = std::chrono::steady_clock::now();
  const LinkGraph big = load_topology(kDir + "cluster-h100-ib.yaml", {{"nodes", "2048"}});
  const Router r(big);
  const auto last = big.gpus().back();
  const auto links = r.route(big.gpus().front(), last, 3);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(big.gpus().size() == 16384);
  // 2,048 nodes / 32 per leaf = 64 leaves per rail, 512 leaves.
  CHECK(big.find("leaf511").has_value());
  CHECK_FALSE(big.find("leaf512").has_value());
  CHECK(links.size() == 8);
  CHECK(seconds < 10.0);
  MESSAGE("2,048-node cluster built and routed in " << seconds << " s");
}

TEST_CASE("rails: fewer rails than NICs, and a plain fat tree") {
  // 8 NICs per node on 4 rails: NIC i on rail i mod 4; 4 nodes x 2 NICs per rail = 8 ports.
  const LinkGraph g = load_topology(kDir + "cluster-h100-ib.yaml", {{"nodes", "4"}});
  CHECK(g.device(id(g, "node1.nic6")).rail == 6);
  const std::string yaml = R"(
include: )" + kDir + R"(cluster-h100-ib.yaml
fabric: {rails: 4, leaf_radix: 8}
)";
  const LinkGraph four = load_topology_text(yaml, kDir + "four-rails.yaml");
  CHECK(four.device(id(four, "node1.nic6")).rail == 2);
  // Leaf radix 8, 1:1: 4 ports down, so rail 2 (8 ports) has 2 leaves: leaf4 and leaf5.
  const Router r(four);
  const auto links = r.route(id(four, "node0.gpu2"), id(four, "node1.gpu6"));
  CHECK(four.link_name(links[2]) == "node0.nic2->leaf4");
  CHECK(four.link_name(links[3]) == "leaf4->node1.nic6");  // node1.nic6 shares the leaf
  CHECK(links.size() == 6);
  CHECK_THROWS_AS(load_topology_text("include: " + kDir + "cluster-h100-ib.yaml\nfabric: {rails: 3}\n",
                                     kDir + "three.yaml"),
                  wiresim::input::InputError);

  const LinkGraph tree = load_topology_text(
      "include: " + kDir + "cluster-h100-ib.yaml\nfabric: {topology: fat_tree, leaf_radix: 16}\n",
      kDir + "tree.yaml");
  // 32 NICs fill 8-port leaves in order: node0's NICs on leaf0, node1's on leaf1, ...
  CHECK(tree.device(id(tree, "node1.nic0")).rail == -1);
  const Router t(tree);
  const auto same_leaf = t.route(id(tree, "node0.gpu0"), id(tree, "node0.gpu0"));
  CHECK(same_leaf.empty());
  const auto across = t.route(id(tree, "node0.gpu1"), id(tree, "node1.gpu1"));
  CHECK(across.size() == 8);  // leaf0 -> spine -> leaf1
}
