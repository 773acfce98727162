// How every simulating command loads what it simulates on: the topology (with --set
// overrides), the model parameters (built in, or --params), and an optional calibration
// overlay (--overlay, from `wiresim calibrate fit`).
//
// An overlay's bandwidth is a measured rate, so the tiers it sets are no longer scaled by
// the parameters' link efficiency (that would count the protocol overhead twice).
//
//   MachineInput in = load_machine_input("topologies/hgx-h100.yaml", {}, "fit.yaml", "");
//   models::Machine machine(in.graph, in.params);
#pragma once

#include <string>
#include <vector>

#include "accuracy/calibration.h"
#include "calibrate/overlay.h"
#include "models/params.h"
#include "tools/commands.h"
#include "topologies/builder.h"

namespace wiresim::tools {

struct MachineInput {
  topo::LinkGraph graph;
  models::Params params;
  std::vector<calibrate::AppliedTier> applied;   // what the overlay changed
  std::string overlay;                           // one line naming the overlay; empty: none
};

inline MachineInput load_machine_input(const std::string& topology, const topo::Overrides& overrides,
                                       const std::string& overlay, const std::string& params) {
  MachineInput in{topo::load_topology(topology, overrides),
                  params.empty() ? models::default_params() : models::load_params(params), {}, {}};
  print_warnings(in.graph.warnings);
  if (!overlay.empty()) {
    const calibrate::Overlay o = calibrate::read_overlay(overlay);
    in.applied = calibrate::apply_overlay(in.graph, o);
    for (const auto& [tier, t] : o.tiers)
      if (t.bandwidth || t.efficiency)
        for (auto& [name, arch] : in.params.architectures) arch.link_efficiency[tier] = 1.0;
    accuracy::apply_parameters(in.params, o);
    in.overlay = calibrate::describe_overlay(overlay, o);
  }
  return in;
}

}  // namespace wiresim::tools
