// A GPU pinned to a NIC across the socket link (a topology's nic_binding): the route crosses
// the inter-socket link, GPUDirect RDMA is off by NCCL's rule (path beyond PXB), and the
// collective is slower than with the near NIC by at least what the socket link must carry.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "input/input_error.h"
#include "models/machine.h"
#include "models/params.h"
#include "models/run.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

topo::LinkGraph two_nodes(const std::string& file) {
  return topo::load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/" + file, {{"nodes", "2"}});
}

struct Run {
  double seconds = 0.0;
  double upi_bytes_max = 0.0;   // the busier direction of node 0's socket link
  double upi_capacity = 0.0;    // bytes/s of that link after efficiency
};

Run ring_all_reduce(const topo::LinkGraph& g, double bytes) {
  const Machine m(g, default_params());
  const Problem p(Collective::all_reduce, sim::Bytes{bytes}, g.gpus());
  Detail detail;
  const Outcome o = run_collective(m, p, Choice{Algorithm::ring, Protocol::simple, 24}, Method::simulate, &detail);
  Run r{o.time.count()};
  for (const char* name : {"node0.cpu0", "node0.cpu1"}) {
    const auto a = *g.find(name);
    const auto b = *g.find(std::string(name) == "node0.cpu0" ? "node0.cpu1" : "node0.cpu0");
    const auto id = *g.find_link(a, b);
    r.upi_bytes_max = std::max(r.upi_bytes_max, detail.run.links[id].carried.count());
    r.upi_capacity = m.links()[id].capacity.count();
  }
  return r;
}

}  // namespace

TEST_CASE("nic_binding pins each GPU to its NIC: across the socket, no GPUDirect RDMA, NET via host memory") {
  const topo::LinkGraph g = two_nodes("cluster-h100-ib-far-nic.yaml");
  const Machine m(g, default_params());
  for (int i = 0; i < 8; ++i) {
    const auto gpu = *g.find(fmt::format("node0.gpu{}", i));
    const auto nic = *g.find(fmt::format("node0.nic{}", (i + 4) % 8));
    REQUIRE(m.router().nearest_nics(gpu).size() == 1);
    CHECK(m.router().nearest_nics(gpu).front() == nic);
    CHECK(m.router().matrix_label(gpu, nic) == "SYS");
    CHECK_FALSE(m.gdr(gpu, nic));
  }
  const auto a = *g.find("node0.gpu0"), b = *g.find("node1.gpu0");
  CHECK(m.exchange(a, b).name() == "NET via host memory");
  // The healthy cluster: each GPU's own PIX NIC, GPUDirect RDMA on.
  const topo::LinkGraph h = two_nodes("cluster-h100-ib.yaml");
  const Machine n(h, default_params());
  CHECK(n.exchange(*h.find("node0.gpu0"), *h.find("node1.gpu0")).name() == "NET");
}

TEST_CASE("far NICs: the ring all_reduce is slower, and no faster than the socket link's bytes allow") {
  // Every byte a node sends or receives crosses its socket link once (each GPU's NIC is on the
  // other socket), so the two directions carry the node's egress plus its ingress, 2 x
  // 2(n-1)/n x S for a ring all_reduce of S over n ranks: the busier carries at least half.
  const double size = 1024.0 * 1024 * 1024;
  const Run near = ring_all_reduce(two_nodes("cluster-h100-ib.yaml"), size);
  const Run far = ring_all_reduce(two_nodes("cluster-h100-ib-far-nic.yaml"), size);
  CHECK(near.upi_bytes_max == 0.0);
  const double n = 16;
  CHECK(far.upi_bytes_max >= 2 * (n - 1) / n * size * (1 - 1e-9));
  CHECK(far.seconds >= far.upi_bytes_max / far.upi_capacity);
  CHECK(far.seconds > 1.5 * near.seconds);
}

TEST_CASE("nic_binding: located errors for a wrong group, unequal counts and a GPU bound twice") {
  const std::string head = "nodes: 2\nfabric: {topology: rail_optimized, tier: ib, nic: nic, leaf_radix: 8,\n"
                           "  nic_link: {bandwidth: 400Gb/s, latency: 1us}, uplink: {bandwidth: 400Gb/s, latency: 1us}}\n"
                           "node:\n  devices:\n    gpu: {kind: gpu, count: 2, model: H100, arch: hopper, memory_bandwidth: 3TB/s}\n"
                           "    sw: {kind: pcie_switch, count: 2}\n    nic: {kind: nic, count: 2}\n"
                           "  links:\n    - {from: gpu, to: sw, tier: pcie, bandwidth: 63GB/s, latency: 1us}\n"
                           "    - {from: nic, to: sw, tier: pcie, bandwidth: 63GB/s, latency: 1us}\n"
                           "    - {from: \"sw[0]\", to: \"sw[1]\", tier: pcie, bandwidth: 63GB/s, latency: 1us}\n";
  const auto error = [&](const std::string& binding) {
    try {
      topo::load_topology_text(head + "  nic_binding:\n" + binding, "b.yaml");
    } catch (const input::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("    - {gpu: \"gpu[0]\", nic: \"sw[1]\"}\n").find("b.yaml:14:28:") != std::string::npos);
  CHECK(error("    - {gpu: \"gpu[0]\", nic: \"sw[1]\"}\n").find("expected nic devices") != std::string::npos);
  CHECK(error("    - {gpu: gpu, nic: \"nic[1]\"}\n").find("2 GPUs and 1 NICs") != std::string::npos);
  CHECK(error("    - {gpu: \"gpu[0]\", nic: \"nic[1]\"}\n    - {gpu: \"gpu[0]\", nic: \"nic[0]\"}\n")
            .find("bound to a NIC twice") != std::string::npos);
  CHECK(error("    - {gpu: \"gpu[0]\", nci: \"nic[1]\"}\n").find("nci") != std::string::npos);
  // A good binding builds, and the pinned GPU uses the far NIC.
  const topo::LinkGraph g = topo::load_topology_text(head + "  nic_binding:\n    - {gpu: \"gpu[0]\", nic: \"nic[1]\"}\n", "b.yaml");
  const Machine m(g, default_params());
  CHECK(g.device(m.router().nearest_nics(*g.find("node0.gpu0")).front()).name == "node0.nic1");
  CHECK(g.device(m.router().nearest_nics(*g.find("node0.gpu1")).front()).name == "node0.nic1");
}
