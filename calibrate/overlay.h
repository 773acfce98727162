// Overlay: fitted link parameters, per tier, laid over a topology's nominal ones.
//
//   # wiresim calibration overlay, fitted by `wiresim calibrate fit` on probe.csv, 2025-06-01
//   tiers:
//     nvlink: {bandwidth: 371GB/s, latency: 2.1us}
//     pcie:   {efficiency: 0.86}
//   collectives:                       # informational: what the logs measured end to end
//     - {collective: all_reduce, ranks: 8, latency: 49.7us, busbw: 119GB/s, source: x.log}
//
// Semantics (docs/calibrate.md):
// - `bandwidth` is the rate one GPU achieved over the tier (a P2P copy, a host copy, or a
//   collective's bus bandwidth). A tier's links differ (a GPU's NVLink bundle, a switch
//   uplink with count 4), so the overlay does not set them all to that number: it takes the
//   narrowest link of the tier in the topology as what one GPU's path is bound by, and scales
//   every link of the tier by efficiency = bandwidth / narrowest. Relative capacities stay.
// - `efficiency` gives that factor directly (one of the two, not both).
// - `latency` is the end-to-end latency of one transfer over the tier. Every link of the tier
//   gets latency / hops, where hops is 1 when the tier joins endpoints (GPU, CPU, NIC)
//   directly and 2 when it goes through a switch (GPU -> NVSwitch -> GPU).
// - `collectives` is carried for `calibrate compare` and reports; apply_overlay ignores it.
// Unknown keys and tiers are errors with a did-you-mean; bad values throw input::InputError.
//
//   Overlay o = read_overlay("fit.yaml");
//   LinkGraph g = load_topology("topologies/hgx-h100.yaml");
//   apply_overlay(g, o);   // every nvlink link now at 371/450 of its nominal bandwidth
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "calibrate/fit_groups.h"
#include "input/collective.h"
#include "sim/units.h"
#include "topologies/link_graph.h"

namespace wiresim::calibrate {

struct TierOverlay {
  std::optional<sim::BytesPerSec> bandwidth;
  std::optional<double> efficiency;
  std::optional<sim::Seconds> latency;
  std::string note;   // where the numbers came from; written as a comment, not read back
};

struct CollectiveOverlay {
  input::Collective collective = input::Collective::all_reduce;
  int ranks = 0;
  sim::Seconds latency;
  sim::BytesPerSec busbw;
  std::string source;
};

// What a fit saw: the collectives of its logs, and whether their ranks spanned nodes. A fitted
// value absorbs the error of the model structure it was fitted through as well: an all_to_all's
// pairwise exchange pulls the NVLink efficiency and the overheads one way, a send_recv another,
// a 2-node ring's network hops raise the per-send overheads past what one node shows (measured:
// docs/calibrate.md). So the fitted values speak for collectives of the same family (ring/tree/
// NVLS collectives: all_reduce, all_gather, reduce_scatter, broadcast, reduce; all_to_all;
// send_recv) at the same reach (within one node, across nodes) only; elsewhere the built-in
// values apply (accuracy::apply_parameters). An overlay without a scope applies everywhere.
struct FitScope {
  std::vector<input::Collective> collectives;
  bool within_node = false;    // ranks all on one node
  bool across_nodes = false;   // ranks on several nodes
  bool covers(input::Collective op, bool spans_nodes) const;   // same reach and family
  std::string describe() const;   // "all_gather, reduce_scatter across nodes"
};

// The model's own parameters, fitted by `calibrate fit --topo` so that wiresim's prediction of
// each logged collective matches the log (calibrate/model_fit.h). They replace the built-in
// values of models/params.yaml for the named architecture, within their scope.
struct ParameterOverlay {
  std::string architecture;                     // "hopper": the GPUs the values apply to
  std::map<topo::Tier, double> link_efficiency; // payload rate / raw link rate, per tier
  std::optional<sim::Seconds> launch_overhead;  // per collective, beyond NCCL's tables
  std::optional<sim::Seconds> host_launch;      // host time per collective per GPU a thread launches
  std::optional<sim::Seconds> simple_overhead;  // per send, Simple protocol
  std::optional<sim::Seconds> ll128_overhead;   // per send, LL128 protocol
  std::optional<FitScope> scope;                // where they apply; none: everywhere
};

// How the parameters were fitted and how well they predict sizes the fit did not see.
struct FitSummary {
  std::vector<std::string> logs;
  std::string topology;
  int held_out_sizes = 0;
  double held_out_error_before_pct = 0.0;       // median |busbw error|, built-in parameters
  double held_out_error_after_pct = 0.0;        // with these parameters
};

struct Overlay {
  std::map<topo::Tier, TierOverlay> tiers;
  std::vector<CollectiveOverlay> collectives;
  std::optional<ParameterOverlay> parameters;
  std::optional<FitSummary> fit;
};

Overlay read_overlay(const std::string& path);
Overlay parse_overlay(const std::string& text, const std::string& source);
// `comment` becomes the first line (after "# "): what was fitted, from what, when.
void write_overlay(std::ostream& out, const Overlay& overlay, const std::string& comment);

// What apply_overlay did to one tier.
struct AppliedTier {
  topo::Tier tier = topo::Tier::nvlink;
  int links = 0;                          // links changed; 0 = the topology has none of the tier
  double efficiency = 1.0;                // bandwidth factor applied
  std::optional<sim::Seconds> link_latency;
};
std::vector<AppliedTier> apply_overlay(topo::LinkGraph& graph, const Overlay& overlay);
// One line naming the overlay for output headers: its file, what it was fitted on and its
// held-out error ("fit.yaml: fitted on a.log, held-out busbw error 18.2% -> 4.1%").
std::string describe_overlay(const std::string& path, const Overlay& overlay);

// From fits to an overlay. For each link tier, the group with the highest β among the copy
// and peer-access kinds gives `bandwidth` (a link carries at least the best any method got
// through it). `latency` is written only where it can be told from software overhead: the α
// of a peer load/store kernel less the α of an empty kernel launch. A collective's bus
// bandwidth is never taken for a link's: collectives go to `collectives`, for reports only
// (the model's parameters are fitted on logs by `calibrate fit --topo`).
Overlay overlay_from_fits(const std::vector<GroupFit>& fits);

}  // namespace wiresim::calibrate
