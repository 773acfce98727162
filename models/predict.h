// The one way to ask "how long does this collective take": the tuner picks an algorithm,
// protocol and channel count (or takes the forced ones), and the choice is costed by the
// method asked for — simulated at the detail auto_fidelity allows (models/fidelity.h), at a
// fixed aggregation, or by its closed form. `coll`, `validate`, `calibrate compare` and the
// scenarios' closed-form steps all come through here, so they cannot disagree.
//
//   PredictOptions options;                       // simulate, auto fidelity, tuner's choice
//   const Prediction p = predict(machine, problem, options);
//   fmt::print("{} {:.1f} us\n", to_string(p.decision.best.algorithm), p.outcome.time.us());
#pragma once

#include <optional>
#include <string>

#include "models/run.h"
#include "models/tuner.h"
#include "sim/executor.h"

namespace wiresim::models {

struct PredictOptions {
  TunerOptions tuner;
  Method method = Method::simulate;
  // simulate: merge pipeline units this many at a time, with no error measured. Empty: the
  // detail auto_fidelity picks for plans of at most max_nodes DAG nodes, error measured.
  std::optional<int> aggregation;
  double max_nodes = 1e6;
  sim::RunOptions run;          // the engine's options (a progress callback)
  Detail* detail = nullptr;     // simulate: keeps the plan and run of the full-size (or last) run
};

struct Prediction {
  Decision decision;            // decision.best.aggregation is what the run used
  Outcome outcome;
  // Set when the run was not exact in every respect (aggregated, extrapolated, or some
  // component re-shared in a window): what was done, and its measured relative error.
  std::string fidelity;
  double error = 0.0;
  bool error_measured = false;  // aggregation or extrapolation measured `error`; windows do not
};

// Throws input::InputError when nothing applies (tune) or the plan exceeds problem.limits.
Prediction predict(const Machine& machine, const Problem& problem, const PredictOptions& options = {});

}  // namespace wiresim::models
