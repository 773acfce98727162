// Pairwise all_to_all: n−1 steps; at step s rank i sends S/n (or the traffic matrix's bytes)
// to i+s and receives from i−s, and starts step s+1 once both are done — fewer flows at a
// time than direct, more latency.
//
// Closed form: base + each rank's n−1 steps of (o + S/(n·r) + λ), a rank's step starting when
// its last send has left and its last receive has arrived, every step's sends at their shares
// of the links. Exact on one node; across nodes the simulation also shares links between
// ranks that are in different steps, which the form does not see (docs/models.md).
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

// Each rank's steps played as expand_pairwise chains them: a rank starts step s + 1 once its
// step-s send has left and its step-s receive has arrived, so ranks whose sends are quick run
// ahead. A step's sends share the links among themselves (drained_rates), as if they ran
// together.
Estimate pairwise_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const double o = b.protocol().overhead.count();
  const P2pShape shape = p2p_shape(b.machine(), problem);
  std::vector<double> ready(static_cast<std::size_t>(n), 0.0), next(static_cast<std::size_t>(n));
  double last = 0.0;
  for (int s = 1; s < n; ++s) {
    std::vector<Edge> edges;
    std::vector<double> volume;
    for (int i = 0; i < n; ++i) {
      const int j = (i + s) % n;
      const sim::Bytes piece = all_to_all_piece(problem, i, j);
      edges.push_back({i, j, static_cast<std::uint32_t>(i * n + s), b.p2p_cap(i, j, p2p_channels(shape, piece))});
      volume.push_back(std::max(piece.count(), 1.0));
    }
    const auto rates = drained_rates(b, edges, b.protocol_cap(), volume);
    std::fill(next.begin(), next.end(), 0.0);
    for (int i = 0; i < n; ++i) {
      const int j = (i + s) % n;
      const double left = ready[i] + o + volume[i] / rates[i];
      const double arrival = left + b.step_latency(i, j).count();
      next[i] = std::max(next[i], left);
      next[j] = std::max(next[j], arrival);
      last = std::max(last, arrival);
    }
    ready.swap(next);
  }
  return {sim::Seconds{launch.count() + last},
          "base + each rank's n-1 steps (S/n / rate + step), a step once its send left and its receive arrived"};
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
