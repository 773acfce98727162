// Small hand-made machines for model tests: n GPUs on one switch (a crossbar), every link
// the same rate, and parameters whose efficiencies and latencies are easy to reason about.
#pragma once

#include <string>

#include <fmt/format.h>

#include "models/params.h"
#include "models/run.h"
#include "topologies/builder.h"
#include "topologies/link_graph.h"

namespace wiresim::testing {

// n GPUs each joined to one NVSwitch by a full-duplex link of `rate` and `latency`.
inline topo::LinkGraph crossbar(int n, sim::BytesPerSec rate, sim::Seconds latency = sim::Seconds{0.0},
                                bool multicast = true) {
  topo::LinkGraph g;
  topo::Device sw;
  sw.name = "nvswitch0";
  sw.kind = topo::DeviceKind::nvswitch;
  sw.multicast = multicast;
  const auto s = g.add_device(sw);
  for (int i = 0; i < n; ++i) {
    topo::Device gpu;
    gpu.name = fmt::format("gpu{}", i);
    gpu.kind = topo::DeviceKind::gpu;
    gpu.model = "test";
    gpu.arch = "hopper";
    const auto d = g.add_device(gpu);
    topo::Link l;
    l.from = d;
    l.to = s;
    l.tier = topo::Tier::nvlink;
    l.bandwidth = rate;
    l.latency = latency;
    g.add_duplex(l);
  }
  return g;
}

// The shipped parameters with every link efficiency 1, no per-channel cap and, if asked,
// every latency and per-send or per-collective overhead 0.
inline models::Params plain_params(bool zero_latency) {
  models::Params p = models::default_params();
  for (auto& [name, arch] : p.architectures) {
    arch.link_efficiency.clear();
    arch.channel_bw = sim::BytesPerSec::unlimited();
    arch.p2p_channel_bw = sim::BytesPerSec::unlimited();
    if (zero_latency) {
      arch.launch_overhead = sim::Seconds{0.0};
      arch.nvlink_step_extra = sim::Seconds{0.0};
      arch.ll128_overhead.reset();   // the protocol's overhead (zeroed below) applies
      arch.simple_overhead.reset();
    }
  }
  if (zero_latency) {
    for (auto& [algo, row] : p.latency) row = models::LatencyRow{};
    for (auto& proto : p.protocols) proto.overhead = sim::Seconds{0.0};
    p.host_launch = sim::Seconds{0.0};
  }
  return p;
}

inline std::string shipped(const std::string& name) {
  return std::string(WIRESIM_SOURCE_DIR) + "/topologies/" + name;
}

// A shipped cluster of `nodes` nodes, its fabric's switches reducing (SHARP) or not.
inline topo::LinkGraph cluster(const std::string& file, int nodes, bool sharp = true) {
  return topo::load_topology(shipped(file), {{"nodes", std::to_string(nodes)}, {"sharp", sharp ? "true" : "false"}});
}

// One collective timed both ways, in seconds: the closed form the tuner ranks by, and the
// simulation it must match.
struct ClosedAndSimulated {
  double closed;
  double simulated;
};

inline ClosedAndSimulated closed_and_simulated(const models::Machine& m, const models::Problem& p,
                                               const models::Choice& c) {
  return {models::run_collective(m, p, c, models::Method::analytic).time.count(),
          models::run_collective(m, p, c, models::Method::simulate).time.count()};
}

}  // namespace wiresim::testing
