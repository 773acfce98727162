#include "calibrate/fit_groups.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::calibrate {

FitGroup group_from_log(const NcclTestsLog& log) {
  const int first_line = log.rows.empty() ? 0 : log.rows.front().line;
  if (!log.collective)
    throw input::InputError(log.source, first_line, 0, "cannot tell which collective this log measured");
  const auto ranks = log.rank_count();
  if (!ranks || *ranks < 1)
    throw input::InputError(log.source, first_line, 0, "cannot tell how many ranks took part (no device list, no nGpus)");
  FitGroup g;
  g.collective = log.collective;
  g.kind = std::string(to_string(*log.collective));
  g.ranks = *ranks;
  g.bus_factor = bus_factor(*log.collective, *ranks);
  g.label = fmt::format("{} {} ranks", g.kind, g.ranks);
  g.source = log.source;
  int wrong = 0;
  for (const NcclTestsRow& row : log.rows) {
    // `#wrong` counts bad elements; the legacy `error` column is a tiny relative error.
    auto valid = [](const NcclTestsSample& s) { return !s.wrong || *s.wrong < 1.0; };
    for (const NcclTestsSample* s : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr}) {
      if (!s) continue;
      if (!valid(*s)) {
        ++wrong;
        continue;
      }
      g.points.push_back({row.size * g.bus_factor, s->time});
    }
  }
  if (wrong > 0) g.notes.push_back(fmt::format("{} timings left out: nccl-tests found wrong results", wrong));
  if (log.truncated) g.notes.push_back("the log says smaller sizes were cut out");
  return g;
}

std::vector<FitGroup> groups_from_probe(std::span<const ProbeRow> rows, const std::string& source) {
  std::map<std::tuple<std::string, std::string, int>, FitGroup> groups;  // ordered: stable output
  for (const ProbeRow& r : rows) {
    FitGroup& g = groups[{r.kind, r.tier, r.ranks}];
    if (g.points.empty()) {
      g.kind = r.kind;
      g.tier = r.tier;
      g.ranks = r.ranks;
      g.source = source;
      g.collective = input::parse_collective(r.kind);
      g.bus_factor = g.collective ? bus_factor(*g.collective, r.ranks) : 1.0;
      g.label = g.collective ? fmt::format("{} {} ranks", r.kind, r.ranks) : fmt::format("{} {}", r.kind, r.tier);
    }
    g.points.push_back({r.bytes * g.bus_factor, r.median});
  }
  std::vector<FitGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

namespace {

// fit_groups' out-of-sample check (GroupFit::held_out_pct): every third size held out.
void check_held_out(GroupFit& f, const FitOptions& options) {
  std::vector<FitPoint> points = f.group.points;
  if (points.size() < 6) return;
  std::stable_sort(points.begin(), points.end(), [](const FitPoint& a, const FitPoint& b) { return a.bytes < b.bytes; });
  // Sizes, not points: an in-place and an out-of-place time of one size go to the same side.
  std::vector<FitPoint> kept, held;
  int size_index = -1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i == 0 || points[i].bytes != points[i - 1].bytes) ++size_index;
    (size_index % 3 == 2 ? held : kept).push_back(points[i]);
  }
  if (held.empty() || kept.size() < 2) return;
  const AlphaBetaFit partial = fit_alpha_beta(kept, options);
  std::vector<double> errors;
  for (const FitPoint& p : held) errors.push_back(std::abs(partial.predict(p.bytes).count() / p.time.count() - 1.0));
  f.held_out_points = static_cast<int>(errors.size());
  f.held_out_pct = 100.0 * median(std::move(errors));
}

}  // namespace

std::vector<GroupFit> fit_groups(const std::vector<FitGroup>& groups, const FitOptions& options) {
  std::vector<GroupFit> fits;
  for (const FitGroup& g : groups) {
    if (g.points.empty()) continue;
    fits.push_back({g, fit_alpha_beta(g.points, options)});
    check_held_out(fits.back(), options);
  }
  return fits;
}

}  // namespace wiresim::calibrate
