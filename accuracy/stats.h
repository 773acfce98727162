// Accuracy statistics over validation results: per data set and per group (a role, a
// hardware class), by size region, as |error| and as signed bias (positive: the model is
// too fast). Regions: floor below 64 KiB (latency-bound), ramp 64 KiB to 256 MiB, plateau
// from 256 MiB (bandwidth-bound); `large` (from 1 MiB) is kept for the 8-GPU target.
//
//   const Stats s = stats(result, Region::ramp);    // s.median_abs, s.bias
//   const Summary all = summarise(results, [](const Result&) { return true; });
#pragma once

#include <array>
#include <functional>
#include <string_view>
#include <vector>

#include "accuracy/runner.h"

namespace wiresim::accuracy {

enum class Region { all, floor, ramp, plateau, large };
inline constexpr std::array<Region, 4> kRegions{Region::floor, Region::ramp, Region::plateau, Region::large};
std::string_view to_string(Region r);
bool in_region(double size_bytes, Region r);

struct Stats {
  int count = 0;
  double median_abs = 0.0 / 0.0;   // NaN when count == 0
  double max_abs = 0.0 / 0.0;
  double bias = 0.0 / 0.0;         // median signed error
};
Stats stats_of(std::vector<double> signed_errors);
Stats stats(const Result& r, Region region = Region::all);

struct Summary {
  int sets = 0;
  double median_of_medians = 0.0 / 0.0;   // median over data sets of their median |error|
  double median_of_points = 0.0 / 0.0;    // median |error| over every compared size
  int above15 = 0;                        // data sets whose median |error| is above 15 %
  std::array<Stats, 4> regions{};         // over the group's points, by kRegions
};
Summary summarise(const std::vector<Result>& results, const std::function<bool(const Result&)>& in_group);

}  // namespace wiresim::accuracy
