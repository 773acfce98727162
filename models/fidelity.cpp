#include "models/fidelity.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/alpha_beta.h"
#include "models/limits.h"

namespace wiresim::models {
namespace {

double nodes_at(const Machine& machine, Problem problem, Choice choice, sim::Bytes size, int aggregation) {
  problem.size = size;
  choice.aggregation = aggregation;
  return estimate_plan(machine, problem, choice).nodes;
}

constexpr int kMaxFactor = 1 << 20;

// How many times as many pieces per byte the plan at `small` has as at the full size
// (1: the small run cuts the message as the full size does).
double pieces_ratio(const Machine& machine, const Problem& problem, const Choice& choice, sim::Bytes small) {
  const double fixed = static_cast<double>(problem.ranks.size()) + 1.0;
  const double full_sends = nodes_at(machine, problem, choice, problem.size, 1) - fixed;
  const double small_sends = nodes_at(machine, problem, choice, small, 1) - fixed;
  if (full_sends <= 0.0 || small_sends <= 0.0) return 0.0;   // cannot tell: not alike
  return small_sends / full_sends * (problem.size / small);
}

// The closed form, checked on the most nodes whose simulation fits max_nodes.
Fidelity closed_form_checked(const Machine& machine, const Problem& problem, const Choice& choice, double max_nodes) {
  Fidelity f;
  f.closed_form = true;
  f.window_flows = kAutoWindowFlows;
  f.window_slack = kAutoWindowSlack;
  if (!problem.matrix.empty()) return f;
  const int nodes = node_count(machine, problem);
  for (int k = nodes / 2; k >= 2; k /= 2)
    if (nodes_at(machine, first_nodes(machine, problem, k), choice, problem.size, 1) <= max_nodes) {
      f.check_nodes = k;
      break;
    }
  return f;
}

}  // namespace

Problem first_nodes(const Machine& machine, const Problem& problem, int nodes) {
  Problem sub = problem;
  sub.ranks.clear();
  sub.matrix.clear();
  sub.root = 0;
  const auto groups = ranks_by_node(machine, problem);
  std::vector<int> kept;
  for (int q = 0; q < nodes && q < static_cast<int>(groups.size()); ++q)
    kept.insert(kept.end(), groups[q].begin(), groups[q].end());
  std::sort(kept.begin(), kept.end());
  for (int r : kept) {
    if (r == problem.root) sub.root = static_cast<int>(sub.ranks.size());
    sub.ranks.push_back(problem.ranks[r]);
  }
  return sub;
}

Fidelity auto_fidelity(const Machine& machine, const Problem& problem, const Choice& choice, double max_nodes) {
  Fidelity f;
  const double full = nodes_at(machine, problem, choice, problem.size, 1);
  // Small runs stay exact; from a quarter of the budget on, giant components are windowed.
  if (full <= max_nodes / 4) return f;
  f.window_flows = kAutoWindowFlows;
  f.window_slack = kAutoWindowSlack;
  if (full <= max_nodes) return f;
  if (descriptor(choice.algorithm).aggregates.contains(problem.op)) {
    // The run at K and the check at 2K together cost about 1.5 runs at K.
    for (int k = 2; k <= kMaxFactor; k *= 2)
      if (1.5 * nodes_at(machine, problem, choice, problem.size, k) <= max_nodes || k == kMaxFactor) {
        f.aggregation = k;
        return f;
      }
  }
  // Extrapolation helps only where the plan shrinks with the size; the runs at s / 2, s
  // and 2s cost 3.5 runs at s.
  for (int e = 4; e <= kMaxFactor; e *= 2) {
    const double at_2s = nodes_at(machine, problem, choice, problem.size * (2.0 / e), 1);
    if (at_2s > 0.75 * full) break;  // no longer shrinking: a per-rank cost, not loops
    if (1.75 * at_2s <= max_nodes) {
      // Only where the small runs cut the message as the full size does (run_scaled).
      if (std::abs(pieces_ratio(machine, problem, choice, problem.size / (2.0 * e)) - 1.0) > 0.1) break;
      f.extrapolate = e;
      return f;
    }
  }
  return closed_form_checked(machine, problem, choice, max_nodes);
}

Scaled run_scaled(const Machine& machine, const Problem& problem, const Choice& choice, const Fidelity& fidelity,
                  const sim::RunOptions& base, Detail* detail, const Estimate* closed_form) {
  sim::RunOptions options = base;
  options.window_flows = fidelity.window_flows;
  options.window_slack = fidelity.window_slack;
  Scaled s;
  const auto run = [&](sim::Bytes size, int aggregation, Detail* d, const Problem* on = nullptr) {
    Problem p = on ? *on : problem;
    p.size = size;
    Choice c = choice;
    c.aggregation = aggregation;
    Outcome o = run_collective(machine, p, c, Method::simulate, d, options);
    s.approximate_sharing = s.approximate_sharing || o.local_reshares > 0;
    return o;
  };
  const std::string window = fidelity.window_flows > 0
                                 ? fmt::format("components over {} flows shared in a window", fidelity.window_flows)
                                 : "exact max-min";
  if (fidelity.closed_form) {
    if (closed_form) {
      s.outcome.time = closed_form->time;
      s.outcome.shape = closed_form->formula;
    } else {
      s.outcome = run_collective(machine, problem, choice, Method::analytic);
    }
    const double plan = nodes_at(machine, problem, choice, problem.size, 1);
    s.note = fmt::format("closed form (in full detail the simulation would be {:.2g} DAG nodes)", plan);
    if (fidelity.check_nodes > 0) {
      const Problem sub = first_nodes(machine, problem, fidelity.check_nodes);
      const Outcome simulated = run(sub.size, 1, nullptr, &sub);
      const Outcome formula = run_collective(machine, sub, choice, Method::analytic);
      const double t = simulated.time.count();
      s.error = t > 0.0 ? std::abs(formula.time.count() - t) / t : 0.0;
      s.error_measured = true;
      s.outcome.transfers = simulated.transfers;
      s.note += fmt::format("; checked against the simulation on the first {} nodes ({} GPUs), where the closed form "
                            "is {:+.2f}% off it ({})",
                            fidelity.check_nodes, sub.ranks.size(), 100.0 * (formula.time.count() - t) / t, window);
    } else {
      s.note += problem.matrix.empty()
                    ? "; no simulation small enough to check it fits, so its error is not measured"
                    : "; a traffic matrix is not cut down to fewer nodes for a check, so its error is not measured";
    }
  } else if (fidelity.extrapolate > 1) {
    const sim::Bytes size = problem.size;
    const sim::Bytes small = size / static_cast<double>(fidelity.extrapolate);
    const Outcome quarter = run(small / 2.0, 1, nullptr);
    const Outcome half = run(small, 1, nullptr);
    s.outcome = run(small * 2.0, 1, detail);
    const auto extrapolate = [&](const Outcome& a, const Outcome& b, sim::Bytes step) {
      return b.time + (b.time - a.time) * ((size - (step * 2.0)) / step);
    };
    const sim::Seconds coarse = extrapolate(quarter, half, small / 2.0);
    const sim::Seconds fine = extrapolate(half, s.outcome, small);
    s.outcome.time = fine;
    s.outcome.transfers += quarter.transfers + half.transfers;
    s.error = fine.count() > 0.0 ? std::abs(fine.count() - coarse.count()) / fine.count() : 0.0;
    s.note = fmt::format("extrapolated from {}, {} and {} (1/{} of the size and up); {}",
                         sim::format_size(small / 2.0), sim::format_size(small), sim::format_size(small * 2.0),
                         fidelity.extrapolate * 2, window);
    // The extrapolation assumes the small runs cut their loops as the full size does; where
    // the algorithm shrinks its chunks for small messages (NVLS, NVLSTree), they do not, and
    // no error measured on the small runs can show it: say so.
    const double ratio = pieces_ratio(machine, problem, choice, small / 2.0);
    if (std::abs(ratio - 1.0) > 0.1)
      s.note += fmt::format("; UNRELIABLE: at {} the plan is cut into {:.2g}x as many pieces per byte as at {}, "
                            "so the small runs do not scale to the full size",
                            sim::format_size(small / 2.0), ratio, sim::format_size(size));
    s.error_measured = true;
  } else if (fidelity.aggregation > 1) {
    const Outcome coarse = run(problem.size, fidelity.aggregation * 2, nullptr);
    s.outcome = run(problem.size, fidelity.aggregation, detail);
    const double t = s.outcome.time.count();
    s.error = t > 0.0 ? std::abs(coarse.time.count() - t) / t : 0.0;
    s.error_measured = true;
    s.note = fmt::format("aggregation {} (pipeline units merged {} at a time; the error is its change to {}); {}",
                         fidelity.aggregation, fidelity.aggregation, fidelity.aggregation * 2, window);
  } else {
    s.outcome = run(problem.size, 1, detail);
    s.note = fmt::format("full detail, {}", window);
  }
  s.outcome.choice = choice;
  s.outcome.choice.aggregation = fidelity.aggregation;
  const double seconds = s.outcome.time.count();
  s.outcome.algbw_GBps = seconds > 0.0 ? problem.size.count() / seconds / 1e9 : 0.0;
  s.outcome.busbw_GBps = s.outcome.algbw_GBps * bus_factor(problem.op, static_cast<int>(problem.ranks.size()));
  if (s.approximate_sharing)
    s.note += fmt::format(" ({} local re-shares, whose error this run does not measure: docs/scale.md)",
                          s.outcome.local_reshares);
  return s;
}

}  // namespace wiresim::models
