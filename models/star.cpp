// Star all_reduce inside one NVLink domain (a scratch example of adding an algorithm): every
// rank sends its buffer to rank 0, which reduces the n copies and sends the sum back to each.
//
// Closed form: base + (n−1)·S/r + λ + reduce of n inputs + (n−1)·S/r + λ.
#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

std::optional<std::string> star_why_not(const Machine& machine, const Problem& problem, const NodeGroups&) {
  if (!machine.p2p()) return "star needs P2P between GPUs (P2P is off: NCCL_P2P_DISABLE=1)";
  if (!one_nvlink_domain(machine, problem)) return "star needs every GPU pair joined by NVLink (one NVLink domain)";
  return std::nullopt;
}

void expand_star(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes size = b.problem().size;
  const auto gather = b.label("star gather"), reduce = b.label("star reduce"), scatter = b.label("star scatter");
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  const auto sum = b.delay(reduce_inputs_time(b.machine(), b.problem(), size), {}, reduce, 0);
  for (int i = 1; i < n; ++i) b.depend(b.send(i, 0, size, {b.launch()}, 1, gather, cap).arrival, sum);
  for (int i = 1; i < n; ++i) b.send(0, i, size, {sum}, 1, scatter, cap);
  plan.steps = 2;
  plan.loops = 1;
  plan.shape = fmt::format("star: {} peers x {} in and out", n - 1, sim::format_size(size));
}

Estimate star_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  std::vector<Edge> in, out;
  for (int i = 1; i < n; ++i) in.push_back({i, 0, 1}), out.push_back({0, i, 1});
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  const double t = launch.count() + phase_time(b, in, problem.size, cap) +
                   reduce_inputs_time(b.machine(), problem, problem.size).count() + phase_time(b, out, problem.size, cap);
  return {sim::Seconds{t}, "base + 2 ((n-1) S / rate + step) + reduce of n inputs"};
}

double star_plan_size(const Machine&, const Problem& problem, const Choice&) {
  return 2.0 * static_cast<double>(problem.ranks.size() - 1);
}

}  // namespace

extern const AlgorithmDescriptor kStarAlgorithm{
    .id = Algorithm::star,
    .name = "star",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (one P2P step a send), unverified
    .collectives = {Collective::all_reduce},
    .unimplemented = "star implements all_reduce only",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {},
    .all = {},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = star_why_not,
    .expand = expand_star,
    .closed_form = star_closed_form,
    .plan_size = star_plan_size,
};

}  // namespace wiresim::models
