// Fidelity: how a collective too large to simulate in full detail is kept fast, and what
// that costs in accuracy, measured on the run itself (`wiresim coll` without --aggregate).
//
// Three means; auto_fidelity() picks them from the plan's estimated size (models/limits.h):
//  - aggregation K (Choice::aggregation): ring passes and pairwise all_to_all steps merged
//    K at a time (exact in lock step; docs/scale.md). Error measured: the run at K against
//    one at 2K (aggregation errors grow with K, so the change from K to 2K is about the
//    error of K itself).
//  - size extrapolation e, for algorithms whose loop count grows with the size (tree, NVLS,
//    NVLSTree, ...): they are simulated at s = size / e and at 2s; once the pipeline is full
//    each loop adds the same time, so T(size) = T(2s) + (size - 2s) (T(2s) - T(s)) / s.
//    Error measured: that extrapolation against the one from s / 2 and s.
//  - windowed max-min (sim::RunOptions::window_flows, window_slack) for components of more
//    than 256 concurrent flows, which exact max-min re-solves whole on every event; its
//    error is measured offline (bench/README.md), not per run.
//  - the closed form, where neither of the first two fits (trees, whose every rank fills
//    the pipeline, do not shrink with the size) or the extrapolation's small runs would cut
//    the message differently from the full size (NVLS halves its chunk for small messages).
//    Error measured: closed form against simulation of the same algorithm, protocol and size
//    on the cluster's first K nodes, K the most that fit the budget: an estimate taken at a
//    smaller scale (the closed form's mechanisms are the same at every scale; its agreement
//    with the simulation is tested on 1-16 nodes, tests/models/multinode_test.cpp).
//
//   const Fidelity f = auto_fidelity(machine, problem, choice);
//   const Scaled s = run_scaled(machine, problem, choice, f, {});
//   fmt::print("{} us ({}; error about {:.2g}%)\n", s.outcome.time.us(), s.note, 100 * s.error);
#pragma once

#include <cstddef>
#include <string>

#include "models/alpha_beta.h"
#include "models/run.h"
#include "sim/executor.h"

namespace wiresim::models {

struct Fidelity {
  int aggregation = 1;           // Choice::aggregation for the run
  int extrapolate = 1;           // e: simulate size / e and 2 size / e (1 = the size itself)
  bool closed_form = false;      // the closed form, checked on the first check_nodes nodes
  int check_nodes = 0;           // 0: no check fits (the error is not measured)
  std::size_t window_flows = 0;  // sim::RunOptions::window_flows (0 = exact max-min)
  double window_slack = 0.0;
};

// Components over this many flows are re-shared in a window when auto_fidelity chooses
// (an NVLSTree over 64 nodes has components of ~1,800 flows: 8x faster, +0.3%).
constexpr std::size_t kAutoWindowFlows = 256;
constexpr double kAutoWindowSlack = 0.02;

// Full detail when the plan is estimated at no more than max_nodes DAG nodes (about 128 B
// each: 1e6 nodes is ~130 MB and 1 to 5 s); otherwise the smallest power-of-two
// aggregation, or extrapolation, that brings the largest run under it; else the closed
// form. Windowed max-min from max_nodes / 4 on; below that, exact in every respect.
Fidelity auto_fidelity(const Machine& machine, const Problem& problem, const Choice& choice,
                       double max_nodes = 1e6);

struct Scaled {
  Outcome outcome;
  double error = 0.0;    // measured relative error estimate (0 at full detail)
  std::string note;      // what was chosen, for the output: "aggregation 64; ..."
  bool approximate_sharing = false;  // some component was re-shared in a window
  bool error_measured = false;       // error was measured on this run (not windows alone)
};

// The problem on the ranks of the problem's first `nodes` nodes (rank order kept; a root
// outside them becomes rank 0). Not for all_to_all with a traffic matrix.
Problem first_nodes(const Machine& machine, const Problem& problem, int nodes);

// Runs the collective at `fidelity` (one, two or three simulations) and reports the time
// with its measured error. `options` carries the progress callback. `closed_form`, when
// given, is the full problem's closed form for `choice` (the tuner's, already computed).
Scaled run_scaled(const Machine& machine, const Problem& problem, const Choice& choice, const Fidelity& fidelity,
                  const sim::RunOptions& options, Detail* detail = nullptr, const Estimate* closed_form = nullptr);

}  // namespace wiresim::models
