// The sweep and the plan as self-contained HTML pages: SVG charts drawn on the server side (no script,
// no external files), so it opens anywhere, offline.
//  - time per step by collective (and compute), one stacked bar per layout;
//  - bytes per step by tier, one stacked bar per layout;
//  - link utilisation heat maps for the best and the worst layouts.
//
//   write_sweep_report(file, spec, rows);
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/jobs.h"
#include "scenarios/plan.h"
#include "scenarios/sweep.h"

namespace wiresim::scenarios {

// `step_bands`, when given (sweep --bands), holds each row's step interval in ms (low, high).
// `conditions`: one line each for what the machine differs in from the topology's healthy
// default (a calibration overlay, the transport, failed or degraded links), shown above the
// charts.
void write_sweep_report(std::ostream& out, const SweepSpec& spec, const std::vector<SweepRow>& rows,
                        const std::vector<std::pair<double, double>>* step_bands = nullptr,
                        const std::vector<std::string>& conditions = {});

// Jobs on one fabric as a page. One run: each job's time alone and what sharing the fabric
// added (a bar each), the jobs' table and the links more than one job crossed. Several runs
// (jobs --placement compare): when the last job ends under each placement, fastest first, and
// each placement's nodes and slowdowns. `conditions` as for the sweep.
void write_jobs_report(std::ostream& out, const std::vector<PlacementRun>& runs,
                       const std::vector<std::string>& conditions = {});

// The plan as a page: the latency/cost scatter of every plan that meets the target (log cost),
// the Pareto front drawn through its points, the target as a line, and the ranking table.
void write_plan_report(std::ostream& out, const PlanSpec& spec, const PlanResult& result);

}  // namespace wiresim::scenarios
