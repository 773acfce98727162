// GPUDirect RDMA (models::Gdr): NCCL's rule on the shipped clusters, and the route through host
// memory when it is off — continuous, no link twice, through the GPU's own CPU on both sides.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "models/machine.h"
#include "models/params.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

topo::LinkGraph cluster(const std::string& file, const std::string& key, const std::string& value) {
  topo::Overrides o;
  o[key] = value;
  return topo::load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/" + file, o);
}

}  // namespace

TEST_CASE("GDR by NCCL's rule: PIX NICs on HGX, and P2C (over C2C to the NIC's CPU) on GB200") {
  const topo::LinkGraph h100 = cluster("cluster-h100-ib.yaml", "nodes", "2");
  const Machine m(h100, default_params());
  for (auto g : h100.gpus())
    for (auto nic : m.router().nearest_nics(g)) CHECK(m.gdr(g, nic));
  const topo::LinkGraph gb200 = cluster("gb200-nvl72-ib.yaml", "racks", "2");
  const Machine n(gb200, default_params());
  const auto g0 = gb200.gpus().front();
  for (auto nic : n.router().nearest_nics(g0)) {
    CHECK(n.router().matrix_label(g0, nic) == "NODE");
    CHECK(n.gdr(g0, nic));
  }
  // With GDR on, routes between nodes are the router's own.
  const auto a = h100.gpus().front(), b = h100.gpus().back();
  CHECK(m.exchange(a, b).name() == "NET");
  CHECK_FALSE(m.exchange(a, b).via_host);
  const auto direct = m.router().route(a, b);
  const auto used = m.route(a, b);
  CHECK(std::vector<sim::LinkId>(used.begin(), used.end()) == std::vector<sim::LinkId>(direct.begin(), direct.end()));
}

TEST_CASE("--gdr off: NET data goes GPU -> its CPU -> NIC and NIC -> CPU -> GPU, a continuous route") {
  const topo::LinkGraph g = cluster("cluster-h100-ib.yaml", "nodes", "2");
  const Machine m(g, default_params(), {.gdr = Gdr::off});
  for (std::size_t i : {std::size_t{0}, std::size_t{5}}) {
    const auto a = g.gpus()[i], b = g.gpus()[8 + (i + 3) % 8];
    CHECK(m.exchange(a, b).name() == "NET via host memory");
    CHECK(m.exchange(a, b).via_host);
    const auto route = m.route(a, b);
    REQUIRE(!route.empty());
    CHECK(g.link(route.front()).from == a);
    CHECK(g.link(route.back()).to == b);
    std::set<sim::LinkId> seen;
    int cpus = 0;
    for (std::size_t k = 0; k < route.size(); ++k) {
      CHECK(seen.insert(route[k]).second);   // no link twice
      if (k + 1 < route.size()) CHECK(g.link(route[k]).to == g.link(route[k + 1]).from);
      if (g.device(g.link(route[k]).to).kind == topo::DeviceKind::cpu) ++cpus;
    }
    CHECK(cpus == 2);   // the sender's socket and the receiver's
    // Within a node nothing changes.
    CHECK(m.exchange(g.gpus()[0], g.gpus()[1]).name() == "P2P/NVLink");
  }
}
