// FitGroup: a set of measurements fitted together with one α and one β, and where it came from.
//
// Probe rows are grouped by (kind, tier, ranks): every GPU pair's p2p_copy over nvlink is one
// group, h2d_pinned over pcie another. An nccl-tests log is one group of its collective at its
// rank count, with out-of-place and in-place times both as points (rows with #wrong ≥ 1 are
// left out). For collectives the bytes fed to the fitter are size × bus factor, so β comes out
// as the effective bus bandwidth (the busbw nccl-tests would report at the largest sizes).
//
//   auto groups = groups_from_probe(read_probe_csv("probe.csv"), "probe.csv");
//   groups.push_back(group_from_log(read_nccl_tests_log("all_reduce.log")));
//   for (const GroupFit& g : fit_groups(groups)) fmt::print("{}: {}\n", g.group.label, ...);
#pragma once

#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/fit.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/probe_csv.h"
#include "input/collective.h"

namespace wiresim::calibrate {

struct FitGroup {
  std::string label;          // "h2d_pinned pcie", "all_reduce 8 ranks"
  std::string kind;           // the probe kind, or the collective's name
  std::string tier;           // the tier the rows measure (probe label, or given for a log)
  std::optional<input::Collective> collective;
  int ranks = 1;
  double bus_factor = 1.0;    // each point's bytes = measured size × bus_factor
  std::string source;         // the file(s) the points came from
  std::vector<FitPoint> points;
  std::vector<std::string> notes;  // what was left out, and why
};

struct GroupFit {
  FitGroup group;
  AlphaBetaFit fit;
  // Checked out of sample: α and β fitted again without every third size (by bytes, the third,
  // sixth, ...), and the median |relative error| of that fit's times on the sizes it did not
  // see, in %. NaN with fewer than six points.
  double held_out_pct = std::nan("");
  int held_out_points = 0;
};

// Throws input::InputError (at the log's first row) when the collective or the rank count is unknown.
FitGroup group_from_log(const NcclTestsLog& log);
std::vector<FitGroup> groups_from_probe(std::span<const ProbeRow> rows, const std::string& source);
std::vector<GroupFit> fit_groups(const std::vector<FitGroup>& groups, const FitOptions& options = {});

}  // namespace wiresim::calibrate
