#include "accuracy/stats.h"

#include <algorithm>
#include <cmath>

namespace wiresim::accuracy {
namespace {

constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024.0;

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string_view to_string(Region r) {
  switch (r) {
    case Region::all: return "all";
    case Region::floor: return "floor";
    case Region::ramp: return "ramp";
    case Region::plateau: return "plateau";
    case Region::large: return "large";
  }
  return "?";
}

bool in_region(double size, Region r) {
  switch (r) {
    case Region::all: return true;
    case Region::floor: return size < 64 * kKiB;
    case Region::ramp: return size >= 64 * kKiB && size < 256 * kMiB;
    case Region::plateau: return size >= 256 * kMiB;
    case Region::large: return size >= kMiB;
  }
  return false;
}

Stats stats_of(std::vector<double> errors) {
  Stats s;
  s.count = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  s.bias = median(errors);
  for (auto& e : errors) e = std::abs(e);
  s.median_abs = median(errors);
  s.max_abs = *std::max_element(errors.begin(), errors.end());
  return s;
}

Stats stats(const Result& r, Region region) {
  std::vector<double> e;
  for (const auto& p : r.points)
    if (in_region(p.size, region)) e.push_back(p.error());
  return stats_of(std::move(e));
}

Summary summarise(const std::vector<Result>& results, const std::function<bool(const Result&)>& in_group) {
  Summary s;
  std::vector<double> medians, all;
  std::array<std::vector<double>, 4> by_region;
  for (const auto& r : results) {
    if (r.skipped || r.points.empty() || !in_group(r)) continue;
    ++s.sets;
    const Stats st = stats(r);
    medians.push_back(st.median_abs);
    s.above15 += st.median_abs > 15.0;
    for (const auto& p : r.points) {
      all.push_back(std::abs(p.error()));
      for (std::size_t k = 0; k < kRegions.size(); ++k)
        if (in_region(p.size, kRegions[k])) by_region[k].push_back(p.error());
    }
  }
  s.median_of_medians = median(medians);
  s.median_of_points = median(all);
  for (std::size_t k = 0; k < kRegions.size(); ++k) s.regions[k] = stats_of(std::move(by_region[k]));
  return s;
}

}  // namespace wiresim::accuracy
