// Direct all_reduce inside one NVLink domain, for small messages (as NCCL's and vendor
// libraries' "one-shot" and "two-shot" kernels).
//
// one-shot: every rank sends its whole buffer to every other rank at once, then each
// reduces the n copies it holds: one step, (n−1)·S bytes out of every GPU.
// two-shot: a direct reduce-scatter (rank i sends part j to rank j; j reduces its part),
// then a direct all-gather (j sends its reduced part to everyone): two steps,
// 2(n−1)·S/n bytes out of every GPU.
#include <fmt/format.h>

#include "models/plan.h"

namespace wiresim::models {
namespace {

// n ranks each read n inputs of `bytes` and write one result: (n+1)·bytes at memory speed.
sim::Seconds reduce_inputs(const PlanBuilder& b, int n, sim::Bytes bytes) {
  const auto bw = b.machine().graph().device(b.problem().ranks.front()).memory_bandwidth;
  if (bw.count() <= 0.0) return sim::Seconds{0.0};
  return bytes * static_cast<double>(n + 1) / bw;
}

}  // namespace

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
    const auto r = b.delay(reduce_inputs(b, n, size), {}, reduce, j);
    for (auto a : arrivals[j]) b.depend(a, r);
  }
  plan.steps = 1;
  plan.loops = 1;
  plan.shape = fmt::format("one-shot: {} peers x {}", n - 1, sim::format_size(size));
}

void expand_two_shot(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes part = b.problem().size / static_cast<double>(n);
  const auto scatter = b.label("two-shot scatter");
  const auto reduce = b.label("two-shot reduce");
  const auto gather = b.label("two-shot gather");
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  std::vector<sim::NodeId> reduced(n);
  for (int j = 0; j < n; ++j) reduced[j] = b.delay(reduce_inputs(b, n, part), {}, reduce, j);
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

}  // namespace wiresim::models
