#include "models/limits.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/plan.h"
#include "input/input_error.h"

namespace wiresim::models {

PlanEstimate estimate_plan(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  const double sends = descriptor(choice.algorithm).plan_size(machine, problem, choice);
  PlanEstimate e;
  // Every send is a transfer and its arrival; each rank adds a bookkeeping delay.
  e.nodes = 2 * sends + n + 1;
  e.events = 2 * e.nodes;
  e.memory = sim::Bytes{e.nodes * kBytesPerNode};
  return e;
}

void check_plan_limits(const Machine& machine, const Problem& problem, const Choice& choice) {
  const PlanEstimate e = estimate_plan(machine, problem, choice);
  const Limits& limits = problem.limits;
  const std::string what = fmt::format("{} of {} over {} GPUs ({} {}) expands to about {:.3g} transfers and delays",
                                       to_string(problem.op), sim::format_size(problem.size), problem.ranks.size(),
                                       to_string(choice.algorithm), to_string(choice.protocol), e.nodes);
  if (e.memory > limits.max_memory)
    throw input::InputError(fmt::format("{}, needing about {} of memory; the limit is {} (--max-memory); "
                                      "use fewer GPUs, smaller sizes or --aggregate", what,
                                      sim::format_size(e.memory), sim::format_size(limits.max_memory)));
  if (e.events > limits.max_events)
    throw input::InputError(fmt::format("{}, about {:.3g} events; the limit is {:.3g} (--max-events); "
                                      "use fewer GPUs, smaller sizes or --aggregate", what, e.events,
                                      limits.max_events));
}

sim::Bytes parse_max_memory(const std::string& text) {
  try {
    const sim::Bytes b = sim::parse_size(text);
    if (b.count() < 1.0) throw std::invalid_argument("expected at least 1B");
    return b;
  } catch (const std::invalid_argument& e) {
    throw input::InputError(fmt::format("--max-memory: {}", e.what()));
  }
}

double parse_max_events(const std::string& text) {
  double v = 0.0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 1.0) || !std::isfinite(v))
    throw input::InputError(fmt::format("--max-events: expected a count such as 2e9, got '{}'", text));
  return v;
}

}  // namespace wiresim::models
