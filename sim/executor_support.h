// What run_dag and run_streaming share, so that both turn times and links into the engine's
// terms the same way (their results are compared bit for bit).
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "sim/executor.h"
#include "sim/units.h"

namespace wiresim::sim {

// An exact picosecond time rounded up to the integer picosecond, forgiving rounding noise.
inline SimTime ceil_ps(double ps) { return static_cast<SimTime>(std::ceil(ps - 1e-6)); }

// The links' capacities in bytes/s; throws std::invalid_argument for a capacity that is not
// finite and > 0 or a latency that is not finite and >= 0.
std::vector<double> link_capacities(std::span<const LinkSpec> links);

}  // namespace wiresim::sim
