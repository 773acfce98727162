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

#include <optional>
#include <string>
#include <vector>

#include "accuracy/bands.h"
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
  std::optional<double> overlay_error;           // its fit's held-out median |error| (fraction)
  std::string overlay_path;
};

inline MachineInput load_machine_input(const std::string& topology, const topo::Overrides& overrides,
                                       const std::string& overlay, const std::string& params) {
  MachineInput in{topo::load_topology(topology, overrides),
                  params.empty() ? models::default_params() : models::load_params(params), {}, {}, {}, overlay};
  print_warnings(in.graph.warnings);
  if (!overlay.empty()) {
    const calibrate::Overlay o = calibrate::read_overlay(overlay);
    in.applied = calibrate::apply_overlay(in.graph, o);
    for (const auto& [tier, t] : o.tiers)
      if (t.bandwidth || t.efficiency)
        for (auto& [name, arch] : in.params.architectures) arch.link_efficiency[tier] = 1.0;
    accuracy::apply_parameters(in.params, o);
    in.overlay = calibrate::describe_overlay(overlay, o);
    if (o.fit) in.overlay_error = o.fit->held_out_error_after_pct / 100.0;
  }
  return in;
}

// --bands: the interval a prediction at `size` carries (accuracy/bands.h): the overlay's
// held-out error where the overlay was fitted with `calibrate fit --topo`, else the shipped
// cross-validated band of the hardware class of `ranks`.
class PredictionBands {
 public:
  PredictionBands(const MachineInput& in, const std::vector<topo::DeviceId>& ranks, bool p2p)
      : in_(in), hw_class_(accuracy::hardware_class(in.graph, ranks, p2p)) {}
  accuracy::Band at(double size_bytes) const {
    if (in_.overlay_error) return accuracy::overlay_band(*in_.overlay_error, in_.overlay_path);
    return accuracy::shipped_bands().at(hw_class_, size_bytes);
  }
  const std::string& hw_class() const { return hw_class_; }

 private:
  const MachineInput& in_;
  std::string hw_class_;
};

}  // namespace wiresim::tools
