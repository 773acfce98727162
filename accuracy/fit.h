// Fitted constants: the few numbers of models/params.yaml that no source gives, each fitted
// on named validation data sets (role fit) by one committed command, `wiresim validate --fit`.
//
// Each constant is fitted on the sizes it governs (a region: the latency floor, the ramp, the
// plateau) of its own data sets: its objective is the sum over those sets of the median |busbw
// error| in that region (every set counts once, whatever its number of sizes; a median shrugs
// off a noisy size). Constants are searched one at a time on their grid (a golden-section
// search over [lo, hi], then the grid points beside it), sweeping until no constant moves. A constant none of whose data sets
// is available (leave-one-class-out cross-validation) keeps its prior: what the model would
// use with no data.
//
// Every set a constant names must exercise it (idle_sets; a test holds the rule).
//
// In models/params.yaml every fitted value carries a tag `[F:name]` on its line; `--write`
// rewrites the value there, so the file and the command cannot drift apart (a test checks that
// no constant moves when the fit starts from the file).
//
//   const FitReport rep = fit(sets, models::default_params(), FitOptions{});
//   for (const auto& c : rep.constants) fmt::print("{} = {}\n", c.name, c.value);
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "accuracy/runner.h"
#include "accuracy/stats.h"

namespace wiresim::accuracy {

struct FittedConstant {
  std::string name;                      // the tag in params.yaml: "protocols.simple.overhead"
  std::string unit;                      // "us" or "GB/s": how the value is written
  double lo = 0.0, hi = 0.0, grid = 1.0; // search range and grid, in `unit`
  double prior = 0.0;                    // the value with no data, in `unit`
  std::vector<std::string> datasets;     // the fit data sets it is fitted on
  Region region = Region::all;           // the sizes of those sets it is fitted on
  std::string why;                       // what it stands for, one line
  std::function<void(models::Params&, double)> set;   // value in `unit`
  std::function<double(const models::Params&)> get;
};
const std::vector<FittedConstant>& fitted_constants();
// A time constant in microseconds on a 0.1 us grid over [0, hi], prior 0 (no overhead), fitted on
// `sets` (empty: the caller's data) in `region`, read and written through `field`.
FittedConstant time_constant(std::string name, double hi, std::vector<std::string> sets, Region region, std::string why,
                             std::function<sim::Seconds&(models::Params&)> field);
// The same for a value the model reads as `in_force` (a field where it is set, another value
// where not: ArchParams::ll128_overhead over the protocol's) and a fit writes with `write`.
FittedConstant time_constant(std::string name, double hi, std::vector<std::string> sets, Region region, std::string why,
                             std::function<void(models::Params&, sim::Seconds)> write,
                             std::function<sim::Seconds(const models::Params&)> in_force);

// How a data set's errors in a region add up to its share of the objective: the median |error|
// (robust; what the [F] constants are fitted with), or the mean |error| with each error capped
// at 100 % (every size counts, an outlier at most twice the rest: what calibration uses, where a
// parameter may matter for a few sizes only).
enum class Loss { median, capped_mean };

struct FitOptions {
  models::Method method = models::Method::simulate;
  Loss loss = Loss::median;
  int max_sweeps = 4;                    // `validate --fit` runs up to 16 and says whether it converged
  std::set<std::string> exclude;         // data sets not to fit on (cross-validation)
  bool verbose = false;                  // progress on stderr
};

struct FitReport {
  struct Value {
    std::string name, unit;
    double value = 0.0;
    double before = 0.0;
    bool fitted = false;                 // false: no data set available, the prior is used
  };
  std::vector<Value> constants;
  double objective_before = 0.0, objective_after = 0.0;   // sum of the constants' objectives
  int sweeps = 0;                        // coordinate sweeps run
  bool converged = false;                // the last sweep moved no constant
  models::Params params;                 // the fitted parameters
};

// `set` with only its measurements of `region`: what a constant fitted on that region is scored
// on, without simulating the other sizes (each size is predicted on its own, so the score is
// the same).
Prepared restricted(const Prepared& set, Region region);

// Fits `constants` (by default the [F] constants of models/params.yaml) on the role-fit sets
// among `sets` that each constant names.
FitReport fit(const std::vector<Prepared>& sets, const models::Params& start, const FitOptions& options,
              const std::vector<FittedConstant>& constants = fitted_constants());
// A constant's objective under `params`: the sum over `sets` of their median |error| in its region.
double constant_objective(const FittedConstant& c, const std::vector<const Prepared*>& sets,
                          const models::Params& params, models::Method method, Loss loss = Loss::median);

// The rule every fitted constant keeps: each data set it is fitted on exercises it. A set
// exercises a constant when moving the constant by a quarter of its value (at least ten grid
// steps, within [lo, hi]) up or down changes that set's objective (its median |error| in the
// constant's region) by more than 0.01 points; a set that does not adds a constant to the
// objective and fits nothing. Returns the names of the named sets among `sets` that do not.
std::vector<std::string> idle_sets(const FittedConstant& c, const std::vector<Prepared>& sets,
                                   const models::Params& params, models::Method method);

// Leave-one-hardware-class-out: for each class of the fit and checked data sets, refit every
// constant without the class's data sets (a constant left with none takes its prior), then
// score the class's fit and checked sets — the error on hardware the fit has not seen.
struct ClassScore {
  std::string hw_class;
  int sets = 0;
  Summary in_sample;                     // with the parameters as given
  Summary cross_validated;               // refitted without the class
  std::vector<std::string> priors;       // constants that had no data left
};
std::vector<ClassScore> cross_validate(const std::vector<Prepared>& sets, const models::Params& params,
                                       const FitOptions& options);

// Rewrites the `[F:name]` lines of a params.yaml text with the report's values.
std::string write_fitted(std::string yaml_text, const FitReport& report);
// Formats a value of a constant as params.yaml writes it ("4.2us", "3.9GB/s").
std::string format_value(const FittedConstant& c, double value);

}  // namespace wiresim::accuracy
