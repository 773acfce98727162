// PAT, NCCL's all_gather and reduce_scatter for one GPU per node (NCCL >= 2.23; the tuner
// enables it where nNodes == nRanks, Simple only: src/graph/tuning.cc ncclPatEnable; the
// schedule is PatAGAlgorithm / PatRSAlgorithm in src/include/collectives.h). It moves the
// bytes a ring moves, (n − 1)/n of the output per rank, in ⌈log2 n⌉ rounds instead of n − 1
// steps: a piece at offset s (the receiver gets the block of rank receiver + s) is sent on
// dimension d = its lowest set bit, by the rank 2^d above the receiver, which holds it at
// offset s − 2^d. all_gather sends far peers first (d = D − 1 … 0: each piece is forwarded on
// the round after it arrived, a binomial broadcast per block); reduce_scatter is its mirror
// (d = 0 … D − 1, each hop reducing). A round on dimension d carries the pieces whose lowest
// set bit is d: n/2^(d+1) of them for n a power of two, 1 on the farthest.
//
// What wiresim keeps of it: each rank's block is cut into chunks of NCCL's PAT chunk (the Simple
// step, halved while chunk × channels × 32 (all_gather) or × 16 (reduce_scatter) exceeds the
// bytes, down to 64 KiB: src/enqueue.cc) times the channels, merged into one pipeline as the
// tree's are. Per chunk, every rank sends one message a round to its peer 2^d below it (mod n):
// after its previous send (program order, round by round, chunk by chunk) and after the
// previous round's message has arrived (the pieces it forwards). Left out: NCCL posts a round's
// pieces in buffers of several steps and runs a few steps of a round at once; here a round is
// one message. Not validated: no shipped measurement runs PAT.
//
// Closed form: base + the chunks' rounds one after another, each o + its bytes at the round's
// share of the links, and each wait for an arrival (its step latency, and a reduction for
// reduce_scatter): a round ends when the previous one's data is in, and the next chunk's first
// round sends the rank's own data, so it waits only for the rank's last send. Equal to the
// simulation where a round's sends do not share a link (tests/models/pat_test.cpp).
#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

struct PatShape {
  int ranks = 0;
  int dims = 0;          // ⌈log2 ranks⌉ rounds a chunk
  bool gather = true;    // all_gather (far peers first), else reduce_scatter (near first)
  sim::Bytes block;      // each rank's block: size / ranks
  sim::Bytes chunk;      // of a block, all channels together
  int loops = 0;

  int dim(int round) const { return gather ? dims - 1 - round : round; }
  int peer(int rank, int round) const { return ((rank - (1 << dim(round))) % ranks + ranks) % ranks; }
  // The pieces a round carries: offsets s in [1, ranks) whose lowest set bit is its dimension.
  int pieces(int round) const {
    const int d = dim(round);
    int count = 0;
    for (int s = 1 << d; s < ranks; s += 2 << d) ++count;
    return count;
  }
};

PatShape pat_shape(const Problem& problem, const ProtocolParams& simple, int channels) {
  PatShape s;
  s.ranks = static_cast<int>(problem.ranks.size());
  while ((1 << s.dims) < s.ranks) ++s.dims;
  s.gather = problem.op == Collective::all_gather;
  s.block = problem.size / static_cast<double>(s.ranks);
  const double factor = s.gather ? 32.0 : 16.0;
  double chunk = simple.step.count();
  while (chunk * channels * factor > problem.size.count() && chunk > 65536.0) chunk /= 2.0;
  s.chunk = sim::Bytes{chunk * channels};
  s.loops = chunk_count(s.block, s.chunk);
  return s;
}

std::optional<std::string> pat_why_not(const Machine&, const Problem&, const NodeGroups& by_node) {
  if (by_node.size() < 2) return "pat runs between nodes (NCCL enables it with one GPU per node)";
  for (const auto& node : by_node)
    if (node.size() != 1) return "pat needs one GPU per node (NCCL enables it only where nNodes == nRanks)";
  return std::nullopt;
}

void expand_pat(PlanBuilder& b, Plan& plan) {
  const PatShape s = pat_shape(b.problem(), b.protocol(), b.choice().channels);
  const auto label = b.label(s.gather ? "pat all-gather" : "pat reduce-scatter");
  const sim::BytesPerSec cap = b.protocol_cap();
  std::vector<sim::NodeId> last(s.ranks, b.launch()), arrived(s.ranks, kNoNode), next(s.ranks, kNoNode);
  for (int k = 0; k < s.loops; ++k) {
    const sim::Bytes piece = chunk_size(s.block, s.chunk, k);
    for (int j = 0; j < s.dims; ++j) {
      for (int r = 0; r < s.ranks; ++r) {
        const auto sent = b.send(r, s.peer(r, j), piece * static_cast<double>(s.pieces(j)),
                                 {last[r], j > 0 ? arrived[r] : kNoNode}, static_cast<std::uint32_t>(s.dim(j)), label,
                                 cap, !s.gather);
        last[r] = sent.transfer;
        next[s.peer(r, j)] = sent.arrival;
      }
      arrived.swap(next);
    }
  }
  plan.steps = s.dims;
  plan.loops = s.loops;
  plan.shape = fmt::format("pat: {} round{} (peers 2^d apart) x {} chunk{} of {} per rank", s.dims,
                           s.dims > 1 ? "s" : "", s.loops, s.loops > 1 ? "s" : "",
                           sim::format_size(std::min(s.chunk, s.block)));
}

Estimate pat_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const PatShape s = pat_shape(b.problem(), b.protocol(), b.choice().channels);
  const double o = b.protocol().overhead.count();
  // Each round's sends all at once: the slowest one's rate and step latency.
  std::vector<double> rate(s.dims, INFINITY), latency(s.dims, 0.0);
  for (int j = 0; j < s.dims; ++j) {
    std::vector<Edge> edges;
    for (int r = 0; r < s.ranks; ++r) edges.push_back({r, s.peer(r, j), static_cast<std::uint32_t>(s.dim(j))});
    const auto rates = shared_rates(b, edges, b.protocol_cap());
    for (std::size_t e = 0; e < edges.size(); ++e) {
      rate[j] = std::min(rate[j], rates[e]);
      latency[j] = std::max(latency[j], b.step_latency(edges[e].from, edges[e].to).count());
    }
  }
  double t = launch.count();
  for (int k = 0; k < s.loops; ++k) {
    const sim::Bytes piece = chunk_size(s.block, s.chunk, k);
    for (int j = 0; j < s.dims; ++j) {
      const sim::Bytes bytes = piece * static_cast<double>(s.pieces(j));
      t += o + bytes.count() / rate[j];
      // The wait for this round's data: before the next round, and after the very last.
      const bool wait = j + 1 < s.dims || k + 1 == s.loops;
      if (wait) t += latency[j] + (s.gather ? 0.0 : b.reduction_time(bytes).count());
    }
  }
  return {sim::Seconds{t}, fmt::format("base + chunks({}) x rounds({}) x (overhead + pieces/rate + step latency)",
                                       s.loops, s.dims)};
}

double pat_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const PatShape s = pat_shape(problem, machine.params().protocol(Protocol::simple), choice.channels);
  return static_cast<double>(s.loops) * s.dims * s.ranks;
}

}  // namespace

extern const AlgorithmDescriptor kPatAlgorithm{
    .id = Algorithm::pat,
    .name = "pat",
    .latency_row = Algorithm::pat,
    .collectives = {Collective::all_gather, Collective::reduce_scatter},
    .unimplemented = "pat implements all_gather and reduce_scatter only",
    .protocols = {Protocol::simple},
    .nccl = {Collective::all_gather, Collective::reduce_scatter},
    .all = {Collective::all_gather, Collective::reduce_scatter},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = pat_why_not,
    .expand = expand_pat,
    .closed_form = pat_closed_form,
    .plan_size = pat_plan_size,
};

}  // namespace wiresim::models
