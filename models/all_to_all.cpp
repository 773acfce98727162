// all_to_all and send_recv: point-to-point exchanges.
//
// all_to_all (nccl-tests size S = each rank's send buffer): rank i sends S/n to every j.
// direct: all n(n−1) sends start at once and share the links (NCCL posts them as one group).
// pairwise: n−1 steps; at step s rank i sends to i+s and receives from i−s, and starts step
// s+1 once both are done — fewer flows at a time, more latency.
// send_recv (as nccl-tests' sendrecv_perf): rank i sends S to rank i+1, in P2P chunks
// pipelined through the connection's buffer.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/plan.h"

namespace wiresim::models {

void expand_all_to_all(PlanBuilder& b, Plan& plan, bool pairwise) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes uniform = b.problem().size / static_cast<double>(n);
  const auto& matrix = b.problem().matrix;
  const auto piece_of = [&](int i, int j) {
    return matrix.empty() ? uniform : sim::Bytes{matrix[static_cast<std::size_t>(i) * n + j]};
  };
  const auto label = b.label(pairwise ? "pairwise exchange" : "all-to-all send");
  if (!pairwise) {
    // Every pair's send runs on its own P2P channels (as many as NCCL gives its bytes).
    const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
    for (int i = 0; i < n; ++i)
      for (int d = 1; d < n; ++d) {
        const int j = (i + d) % n;
        const sim::Bytes bytes = piece_of(i, j);
        const double channels = p2p_channels(b.machine(), b.problem(), bytes);
        b.send(i, j, bytes, {b.launch()}, static_cast<std::uint32_t>(i * n + d), label,
               std::min(cap, b.p2p_cap(i, j, channels)));
      }
    plan.steps = 1;
    plan.shape = matrix.empty() ? fmt::format("direct: {} sends of {}", n * (n - 1), sim::format_size(uniform))
                                : fmt::format("direct: {} sends, sizes from the traffic matrix", n * (n - 1));
  } else {
    // Aggregation (Choice::aggregation) merges k consecutive steps into one send to the
    // group's first peer: each step is still a permutation, with k pieces and k latencies.
    const int k = std::clamp(b.choice().aggregation, 1, n - 1);
    std::vector<sim::NodeId> prev_send(n, b.launch()), prev_recv(n, kNoNode), next_recv(n);
    for (int s = 1; s < n; s += k) {
      const int merged = std::min(k, n - s);
      for (int i = 0; i < n; ++i) {
        const int j = (i + s) % n;
        sim::Bytes bytes{0.0};
        for (int m = 0; m < merged; ++m) bytes += piece_of(i, (i + s + m) % n);
        const double channels = p2p_channels(b.machine(), b.problem(), bytes / static_cast<double>(merged));
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
  }
  plan.loops = 1;
}

void expand_send_recv(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes total = b.problem().size;
  const auto label = b.label("send/recv chunk");
  // NCCL splits the operation over P2P channels, each a chain of chunks through its own
  // connection buffer (NCCL_STEPS chunks deep).
  const int channels = p2p_channels(b.machine(), b.problem(), total);
  const sim::Bytes part = total / static_cast<double>(channels);
  const sim::Bytes chunk = p2p_chunk(b.machine(), b.problem(), b.choice().protocol, total);
  const int loops = chunk_count(part, chunk);
  const int slots = std::max(2, b.protocol().slots);
  for (int i = 0; i < n; ++i) {
    const int to = (i + 1) % n;
    const sim::BytesPerSec cap = std::min(b.protocol_cap(), b.p2p_cap(i, to, 1.0));
    for (int c = 0; c < channels; ++c) {
      sim::NodeId prev = b.launch();
      std::vector<sim::NodeId> arrived(slots, kNoNode);
      for (int k = 0; k < loops; ++k) {
        const sim::NodeId slot = k >= slots ? arrived[k % slots] : kNoNode;
        const auto sent = b.send(i, to, chunk_size(part, chunk, k), {prev, slot},
                                 static_cast<std::uint32_t>(i * 64 + c), label, cap);
        prev = sent.transfer;
        arrived[k % slots] = sent.arrival;
      }
    }
  }
  plan.steps = 1;
  plan.loops = loops;
  plan.shape = fmt::format("send/recv to the next rank over {} channel{}, {} chunk{} of {} each", channels,
                           channels > 1 ? "s" : "", loops, loops > 1 ? "s" : "", sim::format_size(chunk));
}

}  // namespace wiresim::models
