#include "models/alpha_beta.h"

#include <fmt/format.h>

#include "models/algorithm.h"
#include "input/input_error.h"

namespace wiresim::models {

Estimate estimate(const Machine& machine, const Problem& problem, const Choice& choice) {
  if (auto reason = why_not(machine, problem, choice.algorithm, choice.protocol))
    throw input::InputError(fmt::format("--algo {}: {}", to_string(choice.algorithm), *reason));
  Plan scratch;
  PlanBuilder b(machine, problem, choice, scratch);
  Estimate e = descriptor(choice.algorithm).closed_form(b, scratch.dag.node(b.launch()).latency);
  // The host's launches run beside the GPUs' work (nccl-tests -g: one thread, several GPUs).
  const double floor = host_floor(machine, problem).count();
  if (floor > e.time.count()) {
    e.time = sim::Seconds{floor};
    e.formula = fmt::format("host launch floor: {} GPUs per thread x host_launch", problem.gpus_per_thread);
  }
  return e;
}

}  // namespace wiresim::models
