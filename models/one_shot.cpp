// One-shot all_reduce inside one NVLink domain, for small messages (as NCCL's and vendor
// libraries' "one-shot" kernels): every rank sends its whole buffer to every other rank at
// once, then each reduces the n copies it holds: one step, (n−1)·S bytes out of every GPU.
//
// Closed form: base + (n−1)·S/r + λ + reduce of the n inputs (agrees with the simulation
// where nothing else shares the links).
#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

std::optional<std::string> one_shot_why_not(const Machine& machine, const Problem& problem, const NodeGroups&) {
  if (!machine.p2p()) return "one_shot needs P2P between GPUs (P2P is off: NCCL_P2P_DISABLE=1)";
  if (!one_nvlink_domain(machine, problem)) return "one_shot needs every GPU pair joined by NVLink (one NVLink domain)";
  return std::nullopt;
}

void expand_one_shot(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes size = b.problem().size;
  const auto label = b.label("one-shot push");
  const auto reduce = b.label("one-shot reduce");
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  std::vector<std::vector<sim::NodeId>> arrivals(n);
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      const int j = (i + d) % n;
      arrivals[j].push_back(b.send(i, j, size, {b.launch()}, static_cast<std::uint32_t>(d), label, cap).arrival);
    }
  for (int j = 0; j < n; ++j) {
    const auto r = b.delay(reduce_inputs_time(b.machine(), b.problem(), size), {}, reduce, j);
    for (auto a : arrivals[j]) b.depend(a, r);
  }
  plan.steps = 1;
  plan.loops = 1;
  plan.shape = fmt::format("one-shot: {} peers x {}", n - 1, sim::format_size(size));
}

Estimate one_shot_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  std::vector<Edge> edges;
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) edges.push_back({i, (i + d) % n, static_cast<std::uint32_t>(d)});
  double t = launch.count();
  t += phase_time(b, edges, problem.size, b.protocol_cap() / static_cast<double>(n - 1)) +
       reduce_inputs_time(b.machine(), problem, problem.size).count();
  return {sim::Seconds{t}, "base + (n-1) S / rate + step + reduce of n inputs"};
}

double one_shot_plan_size(const Machine&, const Problem& problem, const Choice&) {
  const double n = static_cast<double>(problem.ranks.size());
  return n * (n - 1);
}

}  // namespace

extern const AlgorithmDescriptor kOneShotAlgorithm{
    .id = Algorithm::one_shot,
    .name = "one_shot",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (one P2P step a send), unverified
    .collectives = {Collective::all_reduce},
    .unimplemented = "one_shot implements all_reduce only",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {},
    .all = {Collective::all_reduce},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = one_shot_why_not,
    .expand = expand_one_shot,
    .closed_form = one_shot_closed_form,
    .plan_size = one_shot_plan_size,
};

}  // namespace wiresim::models
