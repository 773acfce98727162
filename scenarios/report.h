// The sweep as a self-contained HTML page: SVG charts drawn on the server side (no script,
// no external files), so it opens anywhere, offline.
//  - time per step by collective (and compute), one stacked bar per layout;
//  - bytes per step by tier, one stacked bar per layout;
//  - link utilisation heat maps for the best and the worst layouts.
//
//   write_sweep_report(file, spec, rows);
#pragma once

#include <ostream>
#include <utility>
#include <vector>

#include "scenarios/sweep.h"

namespace wiresim::scenarios {

// `step_bands`, when given (sweep --bands), holds each row's step interval in ms (low, high).
void write_sweep_report(std::ostream& out, const SweepSpec& spec, const std::vector<SweepRow>& rows,
                        const std::vector<std::pair<double, double>>* step_bands = nullptr);

}  // namespace wiresim::scenarios
