#include <doctest/doctest.h>

#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/link_graph.h"

using namespace wiresim::topo;
using wiresim::sim::BytesPerSec;
using wiresim::sim::Seconds;

TEST_CASE("names of kinds and tiers round-trip") {
  for (auto k : {DeviceKind::gpu, DeviceKind::nvswitch, DeviceKind::pcie_switch, DeviceKind::cpu,
                 DeviceKind::nic, DeviceKind::network_switch})
    CHECK(device_kind_from_string(to_string(k)) == k);
  CHECK(to_string(DeviceKind::network_switch) == "switch");
  for (auto t : {Tier::nvlink, Tier::pcie, Tier::upi, Tier::xgmi, Tier::c2c, Tier::ib, Tier::roce, Tier::eth})
    CHECK(tier_from_string(to_string(t)) == t);
  CHECK_FALSE(tier_from_string("nvlnk").has_value());
  CHECK(is_network_tier(Tier::roce));
  CHECK_FALSE(is_network_tier(Tier::xgmi));
  CHECK(is_nvlink_class(Tier::c2c));
}

TEST_CASE("a duplex link is two directed links with dense ids; overlays change one") {
  LinkGraph g;
  Device gpu, nic;
  gpu.name = "gpu0";
  nic.name = "nic0";
  nic.kind = DeviceKind::nic;
  const DeviceId a = g.add_device(gpu);
  const DeviceId b = g.add_device(nic);
  const auto forward = g.add_duplex({a, b, Tier::pcie, 1, BytesPerSec{63e9}, Seconds{115e-9}});
  CHECK(forward == 0);
  REQUIRE(g.link_count() == 2);
  CHECK(g.link(1).from == b);
  CHECK(g.link_name(1) == "nic0->gpu0");
  CHECK(g.find("nic0") == b);
  CHECK(g.gpu_index(a) == 0u);
  CHECK_FALSE(g.gpu_index(b).has_value());
  g.set_link_parameters(1, BytesPerSec{50e9}, Seconds{1e-6});
  CHECK(g.link(1).bandwidth.count() == 50e9);
  CHECK(g.link(0).bandwidth.count() == 63e9);
  // The Boost.Graph view follows.
  const auto [e, found] = boost::edge(b, a, g.graph());
  REQUIRE(found);
  CHECK(g.graph()[e].bandwidth.count() == 50e9);
  // The simulator's view: same ids, names, capacities.
  const auto specs = link_specs(g);
  REQUIRE(specs.size() == 2);
  CHECK(specs[1].name == "nic0->gpu0");
  CHECK(specs[1].capacity.count() == 50e9);
  CHECK(specs[0].latency.count() == rel_approx(115e-9));
}

TEST_CASE("GPU architectures: NVIDIA's compute capability orders them; AMD's and unknown names carry none") {
  CHECK(gpu_arch("hopper").compute_capability == 90);
  CHECK(gpu_arch("blackwell").compute_capability == 100);
  CHECK(gpu_arch("ampere").compute_capability < gpu_arch("hopper").compute_capability);
  CHECK(gpu_arch("volta").vendor == GpuVendor::nvidia);
  CHECK(gpu_arch("cdna3").vendor == GpuVendor::amd);
  CHECK(gpu_arch("cdna3").compute_capability == 0);
  // A name outside the table (a Machine with no GPU reads "default") is the unknown entry.
  CHECK(gpu_arch("default").name == "unknown");
  CHECK(gpu_arch("default").vendor == GpuVendor::unknown);
}
