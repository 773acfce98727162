#include "models/predict.h"

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
  const Scaled scaled = run_scaled(machine, problem, p.decision.best, fidelity, options.run, options.detail);
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
