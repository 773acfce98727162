// fit_alpha_beta: the α–β model t = α + x/β fitted to measured (x, t) by robust least squares.
//
// x is the bytes the bandwidth term pays for: a copy's size, or for a collective S·f with f
// the nccl-tests bus factor, so that β is then the bus bandwidth (input/collective.h). Errors are
// taken as relative (timings spread in proportion to their size), so each point is divided
// by its own t: minimise Σ w_i (1 − (α + x_i γ)/t_i)², linear in (α, γ = 1/β), solved with
// Eigen. The weights w_i come from iteratively reweighted least squares: Huber (k = 1.345)
// to convergence, then Tukey's bisquare (c = 4.685) with the scale fixed, which gives gross
// outliers no weight at all. The scale is 1.4826·median|r|. Confidence intervals come from
// the covariance σ²(AᵀWA)⁻¹ and Student's t; β's interval is the inverse of γ's.
// A parameter is reported not identifiable when the data cannot pin it: every size
// bandwidth-bound (α is under 5% of every measured time) leaves α free, every size
// latency-bound leaves β free, and so does a single size; so does a 95% interval wider
// than the value itself. α < 0 or β < 0 is refitted with that parameter held at 0 (or ∞).
//
//   std::vector<FitPoint> pts = {{Bytes{8}, Seconds{2e-6}}, {Bytes{1e9}, Seconds{2.2e-2}}, ...};
//   AlphaBetaFit f = fit_alpha_beta(pts);
//   fmt::print("{} {}\n", format_time(f.alpha), format_rate(f.beta));
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/units.h"

namespace wiresim::calibrate {

struct FitPoint {
  sim::Bytes bytes;   // the x of the model (already × bus factor for collectives)
  sim::Seconds time;  // measured, > 0
};

template <typename T>
struct Interval {
  T low, high;
};

struct FitOptions {
  double huber_k = 1.345;
  double bisquare_c = 4.685;
  double confidence = 0.95;
  int max_iterations = 100;
};

struct AlphaBetaFit {
  sim::Seconds alpha;
  sim::BytesPerSec beta;           // unlimited() when the data show no bandwidth term
  Interval<sim::Seconds> alpha_ci;
  Interval<sim::BytesPerSec> beta_ci;
  double confidence = 0.95;
  std::vector<double> residuals;   // relative, (measured − predicted)/measured, input order
  std::vector<double> weights;     // final robust weights in [0, 1]; 0 = treated as an outlier
  double rms_residual = 0.0;       // RMS of the relative residuals of points with weight > 0
  int outliers = 0;                // points given no weight
  bool alpha_identifiable = true;
  bool beta_identifiable = true;
  std::vector<std::string> warnings;

  sim::Seconds predict(sim::Bytes x) const;
};

// The median of `v` (the mean of the middle two for an even count); v must not be empty.
double median(std::vector<double> v);

// Throws std::invalid_argument on no points or a time that is not positive.
AlphaBetaFit fit_alpha_beta(std::span<const FitPoint> points, const FitOptions& options = {});

}  // namespace wiresim::calibrate
