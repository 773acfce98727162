// Fuzz target: a calibration overlay (`--overlay`, calibrate/overlay.h), applied to a small
// machine. Bad input must end in InputError; an overlay that reads must write out and read
// back the same (a written overlay that its own reader refuses is a bug, so that is not caught).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "calibrate/overlay.h"
#include "input/input_error.h"
#include "topologies/builder.h"

namespace {

const wiresim::topo::LinkGraph& machine() {
  static const wiresim::topo::LinkGraph g = wiresim::topo::load_topology_text(
      "name: m\n"
      "node:\n"
      "  devices:\n"
      "    gpu: {kind: gpu, count: 2, model: H100, arch: hopper, memory_bandwidth: 3.35TB/s}\n"
      "    nvswitch: {kind: nvswitch, multicast: true}\n"
      "    cpu: 1\n"
      "  links:\n"
      "    - {from: gpu, to: nvswitch, tier: nvlink, count: 18, link_bandwidth: 25GB/s, latency: 250ns}\n"
      "    - {from: gpu, to: cpu, tier: pcie, bandwidth: 63GB/s, latency: 1us}\n",
      "/nonexistent/m.yaml");
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wiresim::calibrate;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Overlay o;
  try {
    o = parse_overlay(text, "fuzz.yaml");
  } catch (const wiresim::input::InputError&) {
    return 0;
  }
  std::ostringstream out;
  write_overlay(out, o, "fuzz");
  const Overlay back = parse_overlay(out.str(), "written.yaml");
  if (back.tiers.size() != o.tiers.size() || back.collectives.size() != o.collectives.size()) __builtin_trap();
  wiresim::topo::LinkGraph g = machine();
  (void)apply_overlay(g, o);
  return 0;
}
