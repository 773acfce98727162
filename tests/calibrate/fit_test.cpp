#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/fit.h"
#include "calibrate/fit_groups.h"
#include "tests/approx.h"

using namespace wiresim::calibrate;
using wiresim::sim::Bytes;
using wiresim::sim::BytesPerSec;
using wiresim::sim::Seconds;

namespace {

// t = α + S/β at S = 8 B, 16 B, ... up to `max_bytes`, each time × (1 + N(0, noise)).
std::vector<FitPoint> synthetic(Seconds alpha, BytesPerSec beta, double noise, unsigned seed,
                                double min_bytes = 8, double max_bytes = double(1 << 30)) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> jitter(0.0, noise);
  std::vector<FitPoint> points;
  for (double s = min_bytes; s <= max_bytes; s *= 2) {
    const Seconds t = alpha + Bytes{s} / beta;
    points.push_back({Bytes{s}, t * (1.0 + jitter(rng))});
  }
  return points;
}

double relative_error(double got, double want) { return std::abs(got / want - 1.0); }

bool has_warning(const AlphaBetaFit& f, const std::string& text) {
  for (const auto& w : f.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("noise-free data is fitted exactly") {
  const auto points = synthetic(Seconds{2e-6}, BytesPerSec{50e9}, 0.0, 1);
  const AlphaBetaFit f = fit_alpha_beta(points);
  CHECK(f.alpha.count() == rel_approx(2e-6).epsilon(1e-9));
  CHECK(f.beta.count() == rel_approx(50e9).epsilon(1e-9));
  CHECK(f.rms_residual < 1e-9);
  CHECK(f.warnings.empty());
}

TEST_CASE("known α and β with 1% noise are recovered within 2%, inside the confidence interval") {
  struct Case {
    Seconds alpha;
    BytesPerSec beta;
  };
  // A PCIe copy, an NVLink copy, a collective's α and bus bandwidth.
  const Case cases[] = {{Seconds{2e-6}, BytesPerSec{25e9}},
                        {Seconds{1.5e-6}, BytesPerSec{370e9}},
                        {Seconds{40e-6}, BytesPerSec{130e9}}};
  for (const Case& c : cases) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const AlphaBetaFit f = fit_alpha_beta(synthetic(c.alpha, c.beta, 0.01, seed));
      const double ea = relative_error(f.alpha.count(), c.alpha.count());
      const double eb = relative_error(f.beta.count(), c.beta.count());
      MESSAGE("α error " << 100 * ea << "%, β error " << 100 * eb << "%");
      CHECK(ea < 0.02);
      CHECK(eb < 0.02);
      CHECK(f.alpha_identifiable);
      CHECK(f.beta_identifiable);
      CHECK(f.rms_residual < 0.02);
      CHECK(f.alpha_ci.low.count() < f.alpha.count());
      CHECK(f.alpha_ci.high.count() > f.alpha.count());
      CHECK(f.beta_ci.low.count() < f.beta.count());
      CHECK(f.beta_ci.high.count() > f.beta.count());
    }
  }
}

TEST_CASE("outliers do not pull the fit: four points 3x slow and one 3x fast") {
  // 28 sizes, 1% noise; five of them are gross outliers (a descheduled run, say).
  auto points = synthetic(Seconds{5e-6}, BytesPerSec{20e9}, 0.01, 7);
  for (std::size_t i : {2u, 9u, 15u, 24u}) points[i].time = points[i].time * 3.0;
  points[20].time = points[20].time / 3.0;
  const AlphaBetaFit f = fit_alpha_beta(points);
  MESSAGE("with outliers: α " << f.alpha.us() << " us, β " << f.beta.gbps() << " GB/s");
  CHECK(relative_error(f.alpha.count(), 5e-6) < 0.02);
  CHECK(relative_error(f.beta.count(), 20e9) < 0.02);
  CHECK(f.outliers == 5);
  CHECK(f.weights[9] == 0.0);
  CHECK(f.residuals[9] > 0.6);  // measured 3x the model: (3 - 1)/3
  CHECK(has_warning(f, "5 of 28 measurements treated as outliers"));
}

TEST_CASE("all sizes bandwidth-bound: α is not identifiable, β still is") {
  // 1 GiB .. 16 GiB at 50 GB/s take 21 ms or more; a 2 us α is 0.01% of that.
  const auto points = synthetic(Seconds{2e-6}, BytesPerSec{50e9}, 0.005, 3, double(1 << 30), 16.0 * (1 << 30));
  const AlphaBetaFit f = fit_alpha_beta(points);
  CHECK_FALSE(f.alpha_identifiable);
  CHECK(f.beta_identifiable);
  CHECK(relative_error(f.beta.count(), 50e9) < 0.02);
  CHECK(has_warning(f, "α not identifiable"));
}

TEST_CASE("all sizes latency-bound: β is not identifiable, α still is") {
  // 8 B .. 1 KiB at 50 GB/s add at most 20 ns to a 5 us α.
  const auto points = synthetic(Seconds{5e-6}, BytesPerSec{50e9}, 0.005, 4, 8, 1024);
  const AlphaBetaFit f = fit_alpha_beta(points);
  CHECK(f.alpha_identifiable);
  CHECK_FALSE(f.beta_identifiable);
  CHECK(relative_error(f.alpha.count(), 5e-6) < 0.02);
  CHECK(has_warning(f, "β not identifiable"));
}

TEST_CASE("zero-byte measurements (kernel launch) fit α alone") {
  const std::vector<FitPoint> points = {{Bytes{0}, Seconds{4.1e-6}}, {Bytes{0}, Seconds{3.9e-6}},
                                        {Bytes{0}, Seconds{4.0e-6}}};
  const AlphaBetaFit f = fit_alpha_beta(points);
  CHECK(f.alpha.count() == rel_approx(4.0e-6).epsilon(0.01));
  CHECK(f.beta.is_unlimited());
  CHECK_FALSE(f.beta_identifiable);
  CHECK(f.predict(Bytes{1e9}).count() == f.alpha.count());
}

TEST_CASE("bad input to the fitter is refused") {
  CHECK_THROWS_AS(fit_alpha_beta({}), std::invalid_argument);
  const std::vector<FitPoint> zero_time = {{Bytes{8}, Seconds{0}}};
  CHECK_THROWS_AS(fit_alpha_beta(zero_time), std::invalid_argument);
}

TEST_CASE("a collective fit on a real log: β is the bus bandwidth") {
  const NcclTestsLog log = read_nccl_tests_log(std::string(WIRESIM_SOURCE_DIR) +
                                               "/tests/data/calibrate/log_allreduce_v100_8gpu_legacy-format.txt");
  const FitGroup g = group_from_log(log);
  // 25 sizes, out-of-place and in-place; all_reduce on 8 ranks: factor 2·7/8.
  CHECK(g.points.size() == 50);
  CHECK(g.bus_factor == rel_approx(1.75));
  const AlphaBetaFit f = fit_alpha_beta(g.points);
  MESSAGE("V100 all_reduce: α " << f.alpha.us() << " us, busbw " << f.beta.gbps() << " GB/s, rms "
                                << f.rms_residual);
  // The log flattens at ~48 us for small sizes; at 128 MiB, 1818.8 us less 48 us for
  // 128 MiB × 1.75 gives 133 GB/s. Mid sizes run below the straight line (protocol changes),
  // so a single α–β pair lands a little lower: anything in 100..140 GB/s is sane.
  CHECK(f.alpha.us() > 40);
  CHECK(f.alpha.us() < 55);
  CHECK(f.beta.gbps() > 100);
  CHECK(f.beta.gbps() < 140);
}
