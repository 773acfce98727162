// Machine: a topology as the collective models see it — routes between ranks, link
// capacities after the architecture's link efficiency (the payload rate a copy achieves),
// step latencies by tier class, and NVSwitch multicast where the hardware has it.
//
//   Machine m(graph, default_params());
//   auto links = m.route(gpu_a, gpu_b);
//   sim::BytesPerSec r = m.rate(links);        // bottleneck, after efficiency
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/params.h"
#include "sim/executor.h"
#include "topologies/link_graph.h"
#include "topologies/routes.h"

namespace wiresim::models {

class Machine {
 public:
  Machine(const topo::LinkGraph& graph, const Params& params);

  const topo::LinkGraph& graph() const { return graph_; }
  const topo::Router& router() const { return router_; }
  const Params& params() const { return params_; }
  const std::vector<sim::LinkSpec>& links() const { return links_; }
  const std::string& arch_name() const { return arch_name_; }
  const ArchParams& arch() const { return params_.arch(arch_name_); }

  std::span<const sim::LinkId> route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow = 0) const {
    return router_.route(a, b, flow);
  }
  sim::BytesPerSec rate(std::span<const sim::LinkId> route) const;   // min capacity
  sim::Seconds wire_latency(std::span<const sim::LinkId> route) const;
  TierClass tier_class(std::span<const sim::LinkId> route) const;    // slowest class crossed
  int node_of(topo::DeviceId device) const { return graph_.device(device).node; }
  // The multicast-capable NVSwitch a GPU reaches over one NVLink, with the link each way.
  struct SwitchPort {
    topo::DeviceId nvswitch;
    sim::LinkId up;     // gpu -> switch
    sim::LinkId down;   // switch -> gpu
  };
  std::optional<SwitchPort> nvls_port(topo::DeviceId gpu) const;

 private:
  const topo::LinkGraph& graph_;
  const Params& params_;
  topo::Router router_;
  std::string arch_name_;
  std::vector<sim::LinkSpec> links_;
};

}  // namespace wiresim::models
