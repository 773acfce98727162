// An NVMe drive's read rate bounds its links away from it in the Machine (after the tier's
// efficiency, which a delivered read rate does not pay), not the links toward it.
#include <doctest/doctest.h>

#include <string>

#include "models/machine.h"
#include "models/params.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;

namespace {

topo::LinkGraph box(const std::string& read) {
  return topo::load_topology_text(
      "name: t\n"
      "node:\n"
      "  devices:\n"
      "    gpu: {kind: gpu, count: 1, model: H100, arch: hopper, memory_bandwidth: 3.35TB/s}\n"
      "    pcie_switch: 1\n"
      "    cpu: 1\n"
      "    nvme: {kind: nvme, count: 1" + read + "}\n"
      "  links:\n"
      "    - {from: gpu, to: pcie_switch, tier: pcie, bandwidth: 63GB/s, latency: 115ns}\n"
      "    - {from: pcie_switch, to: cpu, tier: pcie, bandwidth: 63GB/s, latency: 250ns}\n"
      "    - {from: nvme, to: pcie_switch, tier: pcie, bandwidth: 7.88GB/s, latency: 115ns}\n",
      "t.yaml");
}

}  // namespace

TEST_CASE("a drive's read rate caps the way out of it; the tier's efficiency caps the rest") {
  const double efficiency = 0.84;   // PCIe on hopper, models/params.yaml
  for (const auto& c : {std::pair{std::string(", read: 3GB/s"), 3e9},                  // the drive binds
                        std::pair{std::string(", read: 7.5GB/s"), 7.88e9 * efficiency},  // the link binds
                        std::pair{std::string(), 7.88e9 * efficiency}}) {               // no read given
    // Named copies, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
    const std::string read = c.first;
    const double expected = c.second;
    CAPTURE(read);
    const topo::LinkGraph g = box(read);
    const models::Machine m(g, models::default_params());
    const auto drive = *g.find("nvme0"), sw = *g.find("pcie_switch0");
    CHECK(m.links()[*g.find_link(drive, sw)].capacity.count() == rel_approx(expected));
    CHECK(m.links()[*g.find_link(sw, drive)].capacity.count() == rel_approx(7.88e9 * efficiency));
    // The route from the drive to the GPU is bound by the drive's side.
    CHECK(m.rate(m.route(drive, g.gpus()[0])).count() == rel_approx(expected));
  }
}
