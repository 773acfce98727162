// Plausibility warnings: unit slips that parse. Each case states the rate and the limit.
#include <doctest/doctest.h>

#include <string>

#include "topologies/builder.h"
#include "topologies/plausibility.h"

using namespace wiresim::topo;
using wiresim::sim::parse_rate;

TEST_CASE("a network cable in GB/s that is 8x a standard Gb/s port is named, with the rate it meant") {
  // 400GB/s = 3.2 Tb/s, above the fastest port (1.6 Tb/s); 400 is a standard Gb/s speed.
  const auto w = network_rate_warning(parse_rate("400GB/s"));
  REQUIRE(w);
  CHECK(*w == "400 GB/s per cable is 3.2 Tb/s, above the fastest network port (1.6 Tb/s); network rates are "
              "quoted in bits: did you mean 400Gb/s (50 GB/s)?");
  // 250GB/s = 2 Tb/s: too fast, but 250 is no standard speed, so no guess.
  const auto odd = network_rate_warning(parse_rate("250GB/s"));
  REQUIRE(odd);
  CHECK(odd->find("did you mean") == std::string::npos);
  // NDR written either way, and a 1.6 Tb/s port in bytes (200 GB/s), are plausible.
  CHECK_FALSE(network_rate_warning(parse_rate("400Gb/s")));
  CHECK_FALSE(network_rate_warning(parse_rate("50GB/s")));
  CHECK_FALSE(network_rate_warning(parse_rate("1.6Tb/s")));
}

TEST_CASE("a PCIe link faster than x16 of its GPU's generation is named") {
  // Ampere is Gen4: x16 = 31.5 GB/s per direction; 63 GB/s is Gen5.
  const auto a100 = pcie_rate_warning(parse_rate("63GB/s"), "ampere");
  REQUIRE(a100);
  CHECK(a100->find("above PCIe Gen4 x16 (31.5 GB/s per direction), the generation of ampere GPUs") !=
        std::string::npos);
  CHECK_FALSE(pcie_rate_warning(parse_rate("31.5GB/s"), "ampere"));
  CHECK_FALSE(pcie_rate_warning(parse_rate("63GB/s"), "hopper"));
  // No GPU at either end: only above Gen6 x16 (128 GB/s) is implausible.
  CHECK_FALSE(pcie_rate_warning(parse_rate("126GB/s"), ""));
  const auto any = pcie_rate_warning(parse_rate("504Gb/s-bidir"), "");
  CHECK_FALSE(any);   // 31.5 GB/s per direction
  REQUIRE(pcie_rate_warning(parse_rate("500GB/s"), ""));
  CHECK(pcie_rate_warning(parse_rate("500GB/s"), "")->find("Gen6") != std::string::npos);
}

TEST_CASE("the builder keeps the warnings at the value's file:line:column") {
  // Line 5: an A100 (Gen4) on a 63GB/s link, the `bandwidth:` value at column 51.
  const std::string yaml =
      "name: t\n"
      "node:\n"
      "  devices: {gpu: {kind: gpu, count: 2, model: A100, arch: ampere, memory_bandwidth: 2TB/s}, cpu: 1}\n"
      "  links:\n"
      "    - {from: gpu, to: cpu, tier: pcie, bandwidth: 63GB/s, latency: 1us}\n";
  const LinkGraph g = load_topology_text(yaml, "t.yaml");
  REQUIRE(g.warnings.size() == 1);
  CHECK(g.warnings[0].starts_with("t.yaml:5:51: warning: node.links[0].bandwidth: 63 GB/s per link is above PCIe Gen4"));
}

TEST_CASE("sharp on a fabric that is not InfiniBand is kept, with a warning at the key") {
  const std::string yaml =
      "name: t\n"
      "node:\n"
      "  devices: {gpu: {kind: gpu, count: 1, model: H100, arch: hopper, memory_bandwidth: 3TB/s}, nic: {kind: nic}}\n"
      "  links:\n"
      "    - {from: gpu, to: nic, tier: pcie, bandwidth: 50GB/s, latency: 1us}\n"
      "nodes: 2\n"
      "fabric:\n"
      "  topology: rail_optimized\n"
      "  tier: roce\n"
      "  nic_link: {bandwidth: 400Gb/s, latency: 1us}\n"
      "  uplink: {bandwidth: 400Gb/s, latency: 1us}\n"
      "  sharp: true\n";
  const LinkGraph g = load_topology_text(yaml, "t.yaml");
  REQUIRE(g.warnings.size() == 1);
  CHECK(g.warnings[0].starts_with("t.yaml:12:10: warning: fabric.sharp: in-network reduction (SHARP) is an InfiniBand"));
  int reducing = 0;
  for (DeviceId d = 0; d < g.device_count(); ++d) reducing += g.device(d).kind == DeviceKind::network_switch && g.device(d).multicast;
  CHECK(reducing > 0);
}
