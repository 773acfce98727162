// Direct point-to-point exchanges: all_to_all and send_recv, as NCCL posts them.
//
// all_to_all (nccl-tests size S = each rank's send buffer): rank i sends S/n to every j (or
// the traffic matrix's bytes); all n(n−1) sends start at once (NCCL posts them as one group).
// send_recv (as nccl-tests' sendrecv_perf): rank i sends S to rank i+1.
// Every send is a point-to-point operation (P2pOp): its P2P channels (p2p_channels), each a
// chain of P2P chunks pipelined through the connection's buffer slots, each chunk paying the
// per-send overhead; a send to another node is posted chunk by chunk by the GPU and moved by
// the proxy's NIC meanwhile. The protocol is NCCL's rule for point-to-point operations
// (p2p_protocol), not tuned.
//
// Closed form: base + the slowest channel's chain, every channel of every send at its mean
// max-min share of the links, re-shared as channels finish (drained_rates). It agrees with the
// simulation where nothing else shares the links (tests: 0.1%, uniform and with a skewed
// traffic matrix).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

// Whether a send from rank i to rank j crosses nodes: NCCL's proxy thread then drives the NIC
// (net transport), so the GPU's chain of chunks waits only for buffer slots, not for each
// chunk to leave (src/transport/net.cc: the GPU fills a slot and posts it; the proxy sends).
bool proxied(const Machine& m, const Problem& problem, int i, int j) {
  return m.node_of(problem.ranks[i]) != m.node_of(problem.ranks[j]);
}

// One point-to-point operation as NCCL runs it (src/enqueue.cc addP2pToPlan, and the P2P
// primitives): `bytes` from rank `from` to rank `to`, split over `channels` P2P channels, each
// a chain of `chunk` chunks through its connection's buffer slots (NCCL_STEPS deep). Each
// chunk pays the protocol's per-send overhead; each channel moves at most `cap`.
struct P2pOp {
  int from = 0, to = 0;
  sim::Bytes bytes;
  int channels = 1;
  sim::Bytes chunk;
  bool network = false;     // crosses nodes: NCCL's net transport, driven by the proxy
  sim::BytesPerSec cap = sim::BytesPerSec::unlimited();
  std::uint32_t flow = 0;   // channel c runs on ECMP path flow + c

  // Each channel's bytes, and the chunks that carry them.
  sim::Bytes part() const { return bytes / static_cast<double>(channels); }
  int loops() const { return chunk_count(part(), chunk); }
};

// The operation `bytes` from rank i to rank j, on the P2P channels its bytes get; `gpu_cap`
// is the sending GPU's protocol cap left to this operation, shared by its channels.
P2pOp make_op(const PlanBuilder& b, const P2pShape& shape, int i, int j, sim::Bytes bytes,
              sim::BytesPerSec gpu_cap, std::uint32_t flow) {
  P2pOp op;
  op.from = i;
  op.to = j;
  op.bytes = bytes;
  op.channels = p2p_channels(shape, bytes);
  op.network = proxied(b.machine(), b.problem(), i, j);
  op.chunk = p2p_chunk(b.machine().params(), shape, b.choice().protocol, bytes, op.network);
  op.cap = std::min(gpu_cap / static_cast<double>(op.channels), b.p2p_cap(i, j, 1.0));
  op.flow = flow;
  return op;
}

// all_to_all's operations: rank i sends all_to_all_piece(i, j) to every j, all n(n−1) at
// once (NCCL posts them as one group). A GPU's protocol cap (LL's) is shared by its n − 1
// sends.
std::vector<P2pOp> all_to_all_ops(const PlanBuilder& b) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const P2pShape shape = p2p_shape(b.machine(), problem);
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  std::vector<P2pOp> ops;
  ops.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      const int j = (i + d) % n;
      ops.push_back(make_op(b, shape, i, j, all_to_all_piece(problem, i, j), cap,
                            static_cast<std::uint32_t>(i * n + d) * 64u));
    }
  return ops;
}

// send_recv's operations (as nccl-tests' sendrecv_perf): rank i sends the whole buffer to
// rank i + 1.
std::vector<P2pOp> send_recv_ops(const PlanBuilder& b) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const P2pShape shape = p2p_shape(b.machine(), problem);
  std::vector<P2pOp> ops;
  for (int i = 0; i < n; ++i)
    ops.push_back(make_op(b, shape, i, (i + 1) % n, problem.size, b.protocol_cap(), static_cast<std::uint32_t>(i) * 64u));
  return ops;
}

std::vector<P2pOp> p2p_ops(const PlanBuilder& b) {
  return b.problem().op == Collective::send_recv ? send_recv_ops(b) : all_to_all_ops(b);
}

// The operation's chains. A chunk waits for the previous one and for a free slot (the chunk
// NCCL_STEPS before it has arrived). Within a node each chunk is one send (overhead, then the
// wire); a send to another node is posted by the GPU (its overhead) and moved by the proxy's
// NIC while the GPU posts the next, in the order posted (one connection per channel and peer):
// its bytes go on the wire once the chunk before it has left.
void expand_p2p_op(PlanBuilder& b, const P2pOp& op, sim::LabelId label, sim::LabelId post_label) {
  const sim::Bytes part = op.part();
  const int loops = op.loops();
  const int slots = std::max(2, b.protocol().slots);
  std::vector<sim::NodeId> arrived(static_cast<std::size_t>(slots));
  for (int c = 0; c < op.channels; ++c) {
    sim::NodeId prev = b.launch();
    sim::NodeId wire = kNoNode;
    std::fill(arrived.begin(), arrived.end(), kNoNode);
    const std::uint32_t flow = op.flow + static_cast<std::uint32_t>(c);
    for (int k = 0; k < loops; ++k) {
      const sim::NodeId slot = k >= slots ? arrived[k % slots] : kNoNode;
      const sim::Bytes bytes = chunk_size(part, op.chunk, k);
      if (op.network) {
        prev = b.delay(b.protocol().overhead, {prev, slot}, post_label, op.from);
        const auto sent = b.send_posted(op.from, op.to, bytes, {prev, wire}, flow, label, op.cap);
        wire = sent.transfer;
        arrived[k % slots] = sent.arrival;
      } else {
        const auto sent = b.send(op.from, op.to, bytes, {prev, slot}, flow, label, op.cap);
        prev = sent.transfer;
        arrived[k % slots] = sent.arrival;
      }
    }
  }
}

void expand_direct(PlanBuilder& b, Plan& plan) {
  const bool a2a = b.problem().op == Collective::all_to_all;
  const auto label = b.label(a2a ? "all-to-all chunk" : "send/recv chunk");
  const auto post_label = b.label(a2a ? "all-to-all post" : "send/recv post");
  const auto ops = p2p_ops(b);
  int loops = 0;
  for (const auto& op : ops) {
    expand_p2p_op(b, op, label, post_label);
    loops = std::max(loops, op.loops());
  }
  const P2pOp& first = ops.front();
  const int n = static_cast<int>(b.problem().ranks.size());
  plan.steps = 1;
  plan.loops = loops;
  const std::string chains = fmt::format("{} channel{}, {} chunk{} of {} each", first.channels,
                                         first.channels > 1 ? "s" : "", loops, loops > 1 ? "s" : "",
                                         sim::format_size(first.chunk));
  if (!a2a)
    plan.shape = fmt::format("send/recv to the next rank over {}", chains);
  else if (b.problem().matrix.empty())
    plan.shape = fmt::format("direct: {} sends of {}, each over {}", n * (n - 1),
                             sim::format_size(first.bytes), chains);
  else
    plan.shape = fmt::format("direct: {} sends, sizes from the traffic matrix, as P2P chains", n * (n - 1));
}

// When the last chunk of one channel of `op` arrives (s after the launch), the channel moving
// at `rate` B/s, `latency` s a step: expand_p2p_op's chain, played chunk by chunk.
double chain_time(const PlanBuilder& b, const P2pOp& op, double rate, double latency) {
  const sim::Bytes part = op.part();
  const int loops = op.loops();
  const int slots = std::max(2, b.protocol().slots);
  const double o = b.protocol().overhead.count();
  std::vector<double> arrived(static_cast<std::size_t>(slots), 0.0);
  double posted = 0.0, sent = 0.0, arrival = 0.0;
  for (int k = 0; k < loops; ++k) {
    const double slot = k >= slots ? arrived[k % slots] : 0.0;
    const double wire = chunk_size(part, op.chunk, k).count() / rate;
    if (op.network) {
      // Posts every overhead; the wire takes the chunks one after another.
      posted = std::max(posted, slot) + o;
      sent = std::max(sent, posted) + wire;
    } else {
      sent = std::max(sent, slot) + o + wire;
    }
    arrival = sent + latency;
    arrived[k % slots] = arrival;
  }
  return arrival;
}

// Every channel of every operation at once, sharing the links max-min fairly and re-sharing
// them as channels finish (the chains of a group run in lock step: all pay their overheads
// together and send together), each played as its chain at its mean rate; the time is the last
// arrival. An operation's channels differ only in their rate, and a chain ends later the
// slower it moves: its slowest channel is its time.
Estimate direct_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const auto ops = p2p_ops(b);
  std::vector<Edge> edges;
  std::vector<double> volume;
  for (const auto& op : ops)
    for (int c = 0; c < op.channels; ++c) {
      edges.push_back({op.from, op.to, op.flow + static_cast<std::uint32_t>(c), op.cap});
      volume.push_back(std::max(op.part().count(), 1.0));
    }
  const auto rates = drained_rates(b, edges, sim::BytesPerSec::unlimited(), volume);
  double last = 0.0;
  std::size_t e = 0;
  for (const auto& op : ops) {
    const auto first = rates.begin() + static_cast<std::ptrdiff_t>(e);
    const double slowest = *std::min_element(first, first + op.channels);
    e += static_cast<std::size_t>(op.channels);
    last = std::max(last, chain_time(b, op, slowest, b.step_latency(op.from, op.to).count()));
  }
  const P2pOp& first = ops.front();
  return {sim::Seconds{launch.count() + last},
          fmt::format("base + {} channel(s) x {} chunks x (overhead + chunk / rate) + step", first.channels,
                      first.loops())};
}

// The largest send's protocol, by NCCL's rule for point-to-point operations (p2p_protocol);
// the other protocol is refused, with the reason.
std::optional<std::string> direct_why_not_protocol(const Machine& machine, const Problem& problem, Protocol protocol) {
  const sim::Bytes bytes = p2p_largest_send(problem);
  const P2pShape shape = p2p_shape(machine, problem);
  const Protocol rule = p2p_protocol(shape, bytes);
  if (protocol == rule) return std::nullopt;
  if (!shape.ll)
    return std::string("NCCL sends point to point across nodes with Simple: it allocates no LL buffers for "
                       "the network (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0)");
  return fmt::format("NCCL sends {} point to point with {}, not tuned: LL up to 16 KiB per channel "
                     "(NCCL_P2P_LL_THRESHOLD), Simple above",
                     sim::format_size(bytes), rule == Protocol::ll ? "LL" : "Simple");
}

double direct_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  // One send per chunk of each channel of each operation (expand_p2p_op); a send to another
  // node may have a smaller chunk than one within the node (p2p_chunk).
  const P2pShape shape = p2p_shape(machine, problem);
  const auto sends = [&](sim::Bytes bytes, bool network) {
    const double channels = p2p_channels(shape, bytes);
    return channels * pipeline_units(bytes / channels, p2p_chunk(machine.params(), shape, choice.protocol, bytes, network));
  };
  const int n = static_cast<int>(problem.ranks.size());
  if (problem.op == Collective::send_recv) {
    double total = 0.0;
    for (int i = 0; i < n; ++i) total += sends(problem.size, proxied(machine, problem, i, (i + 1) % n));
    return total;
  }
  if (problem.matrix.empty()) {
    // Pairs within a node and across nodes, counted by node.
    std::map<int, double> per_node;
    for (auto g : problem.ranks) per_node[machine.node_of(g)] += 1.0;
    double local = 0.0;
    for (const auto& [node, k] : per_node) local += k * (k - 1.0);
    const double remote = static_cast<double>(n) * (n - 1) - local;
    const sim::Bytes piece = problem.size / static_cast<double>(n);
    return local * sends(piece, false) + (remote > 0.0 ? remote * sends(piece, true) : 0.0);
  }
  double total = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) total += sends(all_to_all_piece(problem, i, j), proxied(machine, problem, i, j));
  return total;
}

}  // namespace

extern const AlgorithmDescriptor kDirectAlgorithm{
    .id = Algorithm::direct,
    .name = "direct",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (one P2P step a send), unverified
    .collectives = {Collective::all_to_all, Collective::send_recv},
    .unimplemented = "direct implements all_to_all and send_recv only",
    .protocols = {Protocol::ll, Protocol::simple},
    .nccl = {Collective::all_to_all, Collective::send_recv},
    .all = {Collective::all_to_all, Collective::send_recv},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = nullptr,
    .why_not_protocol = direct_why_not_protocol,
    .expand = expand_direct,
    .closed_form = direct_closed_form,
    .plan_size = direct_plan_size,
};

}  // namespace wiresim::models
