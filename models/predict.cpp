#include "models/predict.h"

#include <optional>

#include "models/alpha_beta.h"
#include "models/fidelity.h"

namespace wiresim::models {

Prediction predict(const Machine& machine, const Problem& problem, const PredictOptions& options) {
  Prediction p;
  p.decision = tune(machine, problem, options.tuner);
  if (options.method == Method::analytic || options.aggregation) {
    p.decision.best.aggregation = options.aggregation.value_or(1);
    p.outcome = run_collective(machine, problem, p.decision.best, options.method, options.detail, options.run);
    return p;
  }
  const Fidelity fidelity = auto_fidelity(machine, problem, p.decision.best, options.max_nodes);
  // The tuner has the chosen candidate's closed form already (a few seconds at cluster scale).
  std::optional<Estimate> known;
  for (const Candidate& c : p.decision.candidates)
    if (c.time && c.choice.algorithm == p.decision.best.algorithm && c.choice.protocol == p.decision.best.protocol &&
        c.choice.channels == p.decision.best.channels)
      known = Estimate{*c.time, c.note};
  const Scaled scaled = run_scaled(machine, problem, p.decision.best, fidelity, options.run, options.detail,
                                   known ? &*known : nullptr);
  p.outcome = scaled.outcome;
  p.decision.best.aggregation = fidelity.aggregation;
  if (fidelity.aggregation > 1 || fidelity.extrapolate > 1 || fidelity.closed_form || scaled.approximate_sharing) {
    p.fidelity = scaled.note;
    p.error = scaled.error;
    p.error_measured = scaled.error_measured;
  }
  return p;
}

}  // namespace wiresim::models
