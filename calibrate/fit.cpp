#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Dense>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

namespace wiresim::calibrate {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this share of every measured time a term cannot be told from noise.
constexpr double kMinShare = 0.05;


// MAD-based scale of the residuals: 1.4826 · median|r| estimates σ for normal errors.
double robust_scale(const VectorXd& r) {
  std::vector<double> a(static_cast<std::size_t>(r.size()));
  for (Eigen::Index i = 0; i < r.size(); ++i) a[static_cast<std::size_t>(i)] = std::abs(r[i]);
  return 1.4826 * median(std::move(a));
}

// Weighted least squares for A p ≈ 1 (every row already divided by its measured time).
VectorXd weighted_solve(const MatrixXd& a, const VectorXd& w) {
  const VectorXd sw = w.cwiseSqrt();
  const MatrixXd m = sw.asDiagonal() * a;
  return m.colPivHouseholderQr().solve(sw);
}

struct RobustSolution {
  VectorXd p;          // parameters, in the units of A's columns
  VectorXd r;          // relative residuals
  VectorXd w;          // final weights
  MatrixXd cov;        // covariance of p
  int dof = 0;         // points with weight > 0, less the parameters
};

// Huber IRLS to convergence, then Tukey bisquare with the Huber scale held fixed.
RobustSolution robust_fit(const MatrixXd& a_raw, const FitOptions& o) {
  const Eigen::Index n = a_raw.rows(), k = a_raw.cols();
  // Columns differ by ~1e5 (1/t against x/t); scale them to unit norm for conditioning.
  VectorXd d = a_raw.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < k; ++j) d[j] = d[j] > 0 ? d[j] : 1.0;
  const MatrixXd a = a_raw * d.cwiseInverse().asDiagonal();
  const VectorXd ones = VectorXd::Ones(n);
  VectorXd w = ones;
  VectorXd p = weighted_solve(a, w);
  double scale = 0.0;
  // Huber re-estimates the scale every step (the least-squares start inflates it); bisquare
  // keeps the scale Huber ended with.
  auto iterate = [&](auto weight_of, bool update_scale) {
    for (int it = 0; it < o.max_iterations; ++it) {
      const VectorXd r = ones - a * p;
      if (update_scale) scale = std::max(robust_scale(r), 1e-12);
      for (Eigen::Index i = 0; i < n; ++i) w[i] = weight_of(std::abs(r[i]) / scale);
      if ((w.array() > 0).count() < k + 1) return;  // would leave nothing to fit: keep p
      const VectorXd next = weighted_solve(a, w);
      const double change = (next - p).norm() / std::max(p.norm(), 1e-300);
      p = next;
      if (change < 1e-12) return;
    }
  };
  scale = robust_scale(ones - a * p);
  if (scale > 1e-12 && n > k) {
    iterate([&](double u) { return u <= o.huber_k ? 1.0 : o.huber_k / u; }, true);
    scale = std::max(robust_scale(ones - a * p), 1e-12);
    const VectorXd huber_w = w;
    const VectorXd huber_p = p;
    iterate([&](double u) {
      const double v = u / o.bisquare_c;
      return v < 1.0 ? (1 - v * v) * (1 - v * v) : 0.0;
    }, false);
    if ((w.array() > 0).count() < k + 1) {
      w = huber_w;
      p = huber_p;
    }
  }
  RobustSolution s;
  s.r = ones - a * p;
  s.w = w;
  const int used = static_cast<int>((w.array() > 0).count());
  s.dof = used - static_cast<int>(k);
  const MatrixXd info = a.transpose() * w.asDiagonal() * a;
  const double sigma2 = s.dof > 0 ? (w.array() * s.r.array().square()).sum() / s.dof : 0.0;
  const MatrixXd cov_scaled = sigma2 * info.inverse();
  s.p = p.cwiseQuotient(d);
  s.cov = d.cwiseInverse().asDiagonal() * cov_scaled * d.cwiseInverse().asDiagonal();
  return s;
}

double t_quantile(double confidence, int dof) {
  if (dof < 1) return kInf;
  const boost::math::students_t dist(dof);
  return boost::math::quantile(boost::math::complement(dist, (1.0 - confidence) / 2.0));
}

std::string percent(double v) { return fmt::format("{:.2g}%", 100.0 * v); }

}  // namespace

double median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

sim::Seconds AlphaBetaFit::predict(sim::Bytes x) const {
  return beta.is_unlimited() ? alpha : alpha + x / beta;
}

AlphaBetaFit fit_alpha_beta(std::span<const FitPoint> points, const FitOptions& o) {
  if (points.empty()) throw std::invalid_argument("fit_alpha_beta: no measurements");
  const auto n = static_cast<Eigen::Index>(points.size());
  double x_min = kInf, x_max = 0.0;
  for (const FitPoint& pt : points) {
    if (!(pt.time.count() > 0.0)) throw std::invalid_argument("fit_alpha_beta: a measured time is not positive");
    x_min = std::min(x_min, pt.bytes.count());
    x_max = std::max(x_max, pt.bytes.count());
  }
  AlphaBetaFit f;
  f.confidence = o.confidence;
  // Columns of the model: α (1/t) and γ = 1/β (x/t), either of which may be dropped.
  MatrixXd full(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double t = points[static_cast<std::size_t>(i)].time.count();
    full(i, 0) = 1.0 / t;
    full(i, 1) = points[static_cast<std::size_t>(i)].bytes.count() / t;
  }
  const bool one_size = x_max <= x_min * (1.0 + 1e-9);
  bool with_alpha = true, with_gamma = !one_size;
  if (one_size)
    f.warnings.push_back(x_max == 0.0 ? "β not identifiable: every measurement moved 0 bytes (latency only)"
                                      : "β not identifiable: every measurement has the same size; α holds it all");
  RobustSolution s;
  auto solve = [&] {
    MatrixXd a(n, static_cast<int>(with_alpha) + static_cast<int>(with_gamma));
    if (with_alpha) a.col(0) = full.col(0);
    if (with_gamma) a.col(a.cols() - 1) = full.col(1);
    s = robust_fit(a, o);
  };
  solve();
  if (with_alpha && with_gamma && s.p[1] <= 0.0) {
    with_gamma = false;
    f.warnings.push_back("β not identifiable: the time does not grow with size (fitted 1/β ≤ 0); β taken as unlimited");
    solve();
  } else if (with_alpha && with_gamma && s.p[0] < 0.0) {
    with_alpha = false;
    f.warnings.push_back("α not identifiable: fitted below 0 (no latency term in the data); α held at 0");
    solve();
  }
  f.alpha_identifiable = with_alpha;
  f.beta_identifiable = with_gamma;
  const double q = t_quantile(o.confidence, s.dof);
  const double alpha = with_alpha ? s.p[0] : 0.0;
  const double gamma = with_gamma ? s.p[s.p.size() - 1] : 0.0;
  const double alpha_half = with_alpha ? q * std::sqrt(s.cov(0, 0)) : 0.0;
  const double gamma_half = with_gamma ? q * std::sqrt(s.cov(s.p.size() - 1, s.p.size() - 1)) : 0.0;
  f.alpha = sim::Seconds(alpha);
  f.beta = gamma > 0 ? sim::BytesPerSec(1.0 / gamma) : sim::BytesPerSec::unlimited();
  f.alpha_ci = {sim::Seconds(std::max(0.0, alpha - alpha_half)), sim::Seconds(alpha + alpha_half)};
  f.beta_ci = {gamma > 0 ? sim::BytesPerSec(1.0 / (gamma + gamma_half)) : sim::BytesPerSec::unlimited(),
               gamma > gamma_half ? sim::BytesPerSec(1.0 / (gamma - gamma_half)) : sim::BytesPerSec::unlimited()};
  if (s.dof < 1) f.warnings.push_back("too few measurements for a confidence interval");

  double alpha_share = 0.0, beta_share = 0.0, sum_sq = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    f.residuals.push_back(s.r[i]);
    f.weights.push_back(s.w[i]);
    if (s.w[i] <= 0.0) {
      ++f.outliers;
      continue;
    }
    sum_sq += s.r[i] * s.r[i];
    const double model = alpha + gamma * full(i, 1) / full(i, 0);
    alpha_share = std::max(alpha_share, alpha / model);
    beta_share = std::max(beta_share, 1.0 - alpha / model);
  }
  f.rms_residual = std::sqrt(sum_sq / std::max<double>(1.0, n - f.outliers));
  if (with_alpha && with_gamma && alpha_share < kMinShare) {
    f.alpha_identifiable = false;
    f.warnings.push_back(fmt::format("α not identifiable: every size is bandwidth-bound (α is at most {} of any "
                                     "measured time); measure smaller sizes", percent(alpha_share)));
  } else if (with_alpha && alpha_half > alpha) {
    f.alpha_identifiable = false;
    f.warnings.push_back(fmt::format("α poorly determined: ±{} at {:.0f}% confidence", percent(alpha_half / alpha),
                                     100 * o.confidence));
  }
  if (with_alpha && with_gamma && beta_share < kMinShare) {
    f.beta_identifiable = false;
    f.warnings.push_back(fmt::format("β not identifiable: every size is latency-bound (the bandwidth term is at "
                                     "most {} of any measured time); measure larger sizes", percent(beta_share)));
  } else if (with_gamma && gamma_half > gamma) {
    f.beta_identifiable = false;
    f.warnings.push_back(fmt::format("β poorly determined: ±{} at {:.0f}% confidence", percent(gamma_half / gamma),
                                     100 * o.confidence));
  }
  if (f.outliers > 0)
    f.warnings.push_back(fmt::format("{} of {} measurements treated as outliers (weight 0)", f.outliers, n));
  return f;
}

}  // namespace wiresim::calibrate
