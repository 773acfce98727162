// Two-shot all_reduce inside one NVLink domain (as NCCL's and vendor libraries' "two-shot"
// kernels): a direct reduce-scatter (rank i sends part j to rank j; j reduces its part), then
// a direct all-gather (j sends its reduced part to everyone): two steps, 2(n−1)·S/n bytes out
// of every GPU.
//
// Closed form: base + twice ((n−1)·S/(n·r) + λ) + the reduce of n parts (agrees with the
// simulation where nothing else shares the links).
#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

std::optional<std::string> two_shot_why_not(const Machine& machine, const Problem& problem, const NodeGroups&) {
  if (!machine.p2p()) return "two_shot needs P2P between GPUs (P2P is off: NCCL_P2P_DISABLE=1)";
  if (!one_nvlink_domain(machine, problem)) return "two_shot needs every GPU pair joined by NVLink (one NVLink domain)";
  return std::nullopt;
}

void expand_two_shot(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes part = b.problem().size / static_cast<double>(n);
  const auto scatter = b.label("two-shot scatter");
  const auto reduce = b.label("two-shot reduce");
  const auto gather = b.label("two-shot gather");
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  std::vector<sim::NodeId> reduced(n);
  for (int j = 0; j < n; ++j) reduced[j] = b.delay(reduce_inputs_time(b.machine(), b.problem(), part), {}, reduce, j);
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      const int j = (i + d) % n;
      b.depend(b.send(i, j, part, {b.launch()}, static_cast<std::uint32_t>(d), scatter, cap).arrival, reduced[j]);
    }
  for (int j = 0; j < n; ++j)
    for (int d = 1; d < n; ++d)
      b.send(j, (j + d) % n, part, {reduced[j]}, static_cast<std::uint32_t>(n + d), gather, cap);
  plan.steps = 2;
  plan.loops = 1;
  plan.shape = fmt::format("two-shot: {} peers x {} twice", n - 1, sim::format_size(part));
}

Estimate two_shot_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes part = problem.size / static_cast<double>(n);
  std::vector<Edge> scatter, gather;
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      scatter.push_back({i, (i + d) % n, static_cast<std::uint32_t>(d)});
      gather.push_back({i, (i + d) % n, static_cast<std::uint32_t>(n + d)});
    }
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  double t = launch.count();
  t += phase_time(b, scatter, part, cap) + reduce_inputs_time(b.machine(), problem, part).count() +
       phase_time(b, gather, part, cap);
  return {sim::Seconds{t}, "base + 2 x ((n-1) S/n / rate + step) + reduce of n parts"};
}

// RCCL's MSCCL allreduce_pairs (models/params.yaml [R2]): 8 GPUs of one node, every pair
// joined by one direct link (xGMI), up to the architecture's msccl_all_reduce; LL up to
// 512 KiB, Simple above.
std::optional<Protocol> two_shot_preempts(const Machine& machine, const Problem& problem) {
  const sim::Bytes limit = machine.arch().msccl_all_reduce;
  if (problem.op != Collective::all_reduce || limit.count() <= 0.0 || problem.size > limit) return std::nullopt;
  if (problem.ranks.size() != 8 || !machine.p2p()) return std::nullopt;
  for (auto a : problem.ranks)
    for (auto b : problem.ranks) {
      if (a == b) continue;
      const auto route = machine.route(a, b);
      if (route.size() != 1 || machine.tier_class(route) != TierClass::nvlink || machine.staged(a, b)) return std::nullopt;
    }
  constexpr double kLlUpTo = 512.0 * 1024.0;   // allreduce-allpairs-8n-ll-64tb.xml: maxBytes 524287
  return problem.size.count() < kLlUpTo ? Protocol::ll : Protocol::simple;
}

double two_shot_plan_size(const Machine&, const Problem& problem, const Choice&) {
  const double n = static_cast<double>(problem.ranks.size());
  return 2 * n * (n - 1);
}

}  // namespace

extern const AlgorithmDescriptor kTwoShotAlgorithm{
    .id = Algorithm::two_shot,
    .name = "two_shot",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (one P2P step a send), unverified
    .collectives = {Collective::all_reduce},
    .unimplemented = "two_shot implements all_reduce only",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {},
    .all = {Collective::all_reduce},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = two_shot_why_not,
    .expand = expand_two_shot,
    .closed_form = two_shot_closed_form,
    .plan_size = two_shot_plan_size,
    .preempts = two_shot_preempts,
};

}  // namespace wiresim::models
