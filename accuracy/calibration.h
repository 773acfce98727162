// Model-based calibration (`wiresim calibrate fit --topo`): fit the parameters wiresim's model actually has — per link tier the
// link efficiency, per architecture the launch overhead, per protocol the per-send overhead —
// so that wiresim's own prediction of each logged nccl-tests collective matches the log, and
// check the result on sizes the fit did not see.
//
// Each log becomes a data set on the given topology (its first `ranks` GPUs, or
// `gpus_per_node` from each node; `-g N` from the log's header). Every `hold_out`-th size of
// each log is held out; the parameters are fitted on the rest with accuracy/'s fit (each on its
// size region: efficiencies on the plateau, overheads on the ramp, the launch overhead on the
// floor; robust: a median of |busbw error| per log), then scored on the held-out sizes beside
// the built-in parameters. A parameter is fitted only where the logs exercise it: a tier no
// route of the logs crosses, or whose efficiency does not move the plateau (not the
// bottleneck), and a region with no sizes, are reported as not fitted, never guessed. Nor does a
// parameter move on thin evidence: it keeps its built-in value where the logs' capped mean
// |busbw error| in its region, under the built-in parameters, is within two standard errors of
// the model's validated error on the logs' hardware class (accuracy/bands.yaml, the 10th-90th
// percentile band read as a normal spread, over sqrt of the sizes in the region) — the log
// agrees with the model as well as the model agrees with any checked log of that hardware, so
// there is nothing to correct — and where the fit puts it at a bound of its range (no estimate:
// the log shows something the parameter does not stand for); the others are then refitted. Each
// fitted value carries a profile interval: the values whose objective stays within one
// percentage point (or 10 %) of the best. With several logs each is also predicted from a fit
// on the others (leave one log out).
//
//   ModelFitOptions o{"topologies/hgx-h100.yaml", {}, 0, 3};
//   const ModelFit f = fit_model({"run.log"}, o, models::default_params());
//   if (f.improves()) write_overlay(out, f.overlay, "...");
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "accuracy/runner.h"
#include "calibrate/overlay.h"
#include "models/params.h"
#include "models/run.h"
#include "topologies/builder.h"

namespace wiresim::accuracy {

struct ModelFitOptions {
  std::string topology;
  topo::Overrides settings;
  int gpus_per_node = 0;            // 0: the first `ranks` GPUs of the topology
  int hold_out = 3;                 // every hold_out-th size is held out (>= 2)
  models::Method method = models::Method::simulate;
};

struct FittedParameter {
  std::string name, unit;
  double before = 0.0, value = 0.0;
  double low = 0.0, high = 0.0;     // profile interval
  bool fitted = false;
  std::string note;                 // why not fitted, or that it sits at a bound
};

struct LogScore {
  std::string log;
  double before_pct = 0.0, after_pct = 0.0;   // median |busbw error|
};

using calibrate::Overlay;

struct ModelFit {
  std::string architecture;
  std::vector<FittedParameter> parameters;
  int held_out_sizes = 0;
  double held_out_before_pct = 0.0, held_out_after_pct = 0.0;
  double fitted_before_pct = 0.0, fitted_after_pct = 0.0;
  std::vector<LogScore> leave_one_out;        // with two logs or more
  models::Params params;                      // the start with the fitted values
  Overlay overlay;                            // parameters + fit summary, ready to write
  bool improves() const { return held_out_after_pct <= held_out_before_pct; }
};

// Throws input::InputError for a log that cannot be read or does not fit the topology. A log is
// an nccl-tests log or a validation table (validation/data/*.csv).
ModelFit fit_model(const std::vector<std::string>& logs, const ModelFitOptions& options, const models::Params& start);
// The same on data sets read already, each with its own mapping (accuracy/runner.h).
ModelFit fit_model(const std::vector<accuracy::Prepared>& sets, int hold_out, models::Method method,
                   const models::Params& start);

// What an overlay does to the parameters: the tiers it measured get link efficiency 1 (their
// rate is measured), then its `parameters` apply (for their architecture only). The graph
// side is calibrate::apply_overlay.
void apply_parameters(models::Params& params, const Overlay& overlay);
// The same for one collective over ranks that do or do not span nodes: the fitted parameters
// apply only within their scope (calibrate::FitScope). Returns whether they applied.
bool apply_parameters(models::Params& params, const Overlay& overlay, input::Collective op, bool across_nodes);

// A data set's collective and whether its ranks span nodes; the scope of a fit on `sets`.
std::pair<input::Collective, bool> problem_scope(const accuracy::Prepared& set);
bool spans_nodes(const topo::LinkGraph& graph, const std::vector<topo::DeviceId>& ranks);
calibrate::FitScope fit_scope(const std::vector<accuracy::Prepared>& sets);

}  // namespace wiresim::accuracy
