// Pairwise all_to_all: n−1 steps; at step s rank i sends S/n (or the traffic matrix's bytes)
// to i+s and receives from i−s, and starts step s+1 once both are done — fewer flows at a
// time than direct, more latency.
//
// Closed form: base + Σ over the n−1 steps of (S/(n·r) + λ), each step as long as its largest
// send at its share; agrees with the simulation where nothing else shares the links.
#include <algorithm>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

void expand_pairwise(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes uniform = b.problem().size / static_cast<double>(n);
  const auto label = b.label("pairwise exchange");
  // Aggregation (Choice::aggregation) merges k consecutive steps into one send to the
  // group's first peer: each step is still a permutation, with k pieces and k latencies.
  const int k = std::clamp(b.choice().aggregation, 1, n - 1);
  const P2pShape shape = p2p_shape(b.machine(), b.problem());
  std::vector<sim::NodeId> prev_send(n, b.launch()), prev_recv(n, kNoNode), next_recv(n);
  for (int s = 1; s < n; s += k) {
    const int merged = std::min(k, n - s);
    for (int i = 0; i < n; ++i) {
      const int j = (i + s) % n;
      sim::Bytes bytes{0.0};
      for (int m = 0; m < merged; ++m) bytes += all_to_all_piece(b.problem(), i, (i + s + m) % n);
      const double channels = p2p_channels(shape, bytes / static_cast<double>(merged));
      const auto sent = b.send_merged(i, j, bytes, merged, 0,
                                      {prev_send[i], prev_recv[i]}, static_cast<std::uint32_t>(i * n + s),
                                      label, std::min(b.protocol_cap(), b.p2p_cap(i, j, channels)));
      prev_send[i] = sent.transfer;
      next_recv[j] = sent.arrival;
    }
    prev_recv = next_recv;
  }
  plan.steps = n - 1;
  plan.shape = fmt::format("pairwise: {} steps of {}{}", n - 1, sim::format_size(uniform),
                           k > 1 ? fmt::format(", {} merged per send", k) : "");
  plan.loops = 1;
}

Estimate pairwise_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  double t = launch.count();
  const P2pShape shape = p2p_shape(b.machine(), problem);
  for (int s = 1; s < n; ++s) {
    std::vector<Edge> edges;
    for (int i = 0; i < n; ++i) {
      const int j = (i + s) % n;
      edges.push_back({i, j, static_cast<std::uint32_t>(i * n + s),
                       b.p2p_cap(i, j, p2p_channels(shape, all_to_all_piece(problem, i, j)))});
    }
    t += exchange_time(b, edges, b.protocol_cap());
  }
  return {sim::Seconds{t}, "base + sum over n-1 steps of (S/n / rate + step)"};
}

double pairwise_plan_size(const Machine&, const Problem& problem, const Choice&) {
  const double n = static_cast<double>(problem.ranks.size());
  return n * (n - 1);
}

}  // namespace

extern const AlgorithmDescriptor kPairwiseAlgorithm{
    .id = Algorithm::pairwise,
    .name = "pairwise",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (one P2P step a send), unverified
    .collectives = {Collective::all_to_all},
    .unimplemented = "pairwise implements all_to_all only",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {},
    .all = {Collective::all_to_all},
    .aggregates = {Collective::all_to_all},
    .nvlink_step_at_launch = false,
    .why_not = nullptr,
    .expand = expand_pairwise,
    .closed_form = pairwise_closed_form,
    .plan_size = pairwise_plan_size,
};

}  // namespace wiresim::models
