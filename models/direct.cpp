// Direct point-to-point exchanges: all_to_all and send_recv, as NCCL posts them.
//
// all_to_all (nccl-tests size S = each rank's send buffer): rank i sends S/n to every j (or
// the traffic matrix's bytes); all n(n−1) sends start at once, each on its own P2P channels,
// and share the links (NCCL posts them as one group).
// send_recv (as nccl-tests' sendrecv_perf): rank i sends S to rank i+1, in P2P chunks
// pipelined through the connection's buffer; a send to another node is posted chunk by chunk
// by the GPU and moved by the proxy's NIC meanwhile.
// The protocol is NCCL's rule for point-to-point operations (p2p_protocol), not tuned.
//
// Closed form: all_to_all base + (n−1)·S/(n·r) + λ (the largest send at its share, with a
// traffic matrix); send_recv base + each channel's chain of chunks through its buffer slots
// + λ. Both agree with the simulation where nothing else shares the links (tests: 0.1%).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

// Whether a send from rank i to rank j crosses nodes: NCCL's proxy thread then drives the NIC
// (net transport), so the GPU's chain of chunks waits only for buffer slots, not for each
// chunk to leave (src/transport/net.cc: the GPU fills a slot and posts it; the proxy sends).
bool proxied(const PlanBuilder& b, int i, int j) {
  const Machine& m = b.machine();
  return m.node_of(b.problem().ranks[i]) != m.node_of(b.problem().ranks[j]);
}

void expand_all_to_all(PlanBuilder& b, Plan& plan) {
  const int n = static_cast<int>(b.problem().ranks.size());
  const sim::Bytes uniform = b.problem().size / static_cast<double>(n);
  const auto label = b.label("all-to-all send");
  // Every pair's send runs on its own P2P channels (as many as NCCL gives its bytes).
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
  const P2pShape shape = p2p_shape(b.machine(), b.problem());
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      const int j = (i + d) % n;
      const sim::Bytes bytes = all_to_all_piece(b.problem(), i, j);
      const double channels = p2p_channels(shape, bytes);
      b.send(i, j, bytes, {b.launch()}, static_cast<std::uint32_t>(i * n + d), label,
             std::min(cap, b.p2p_cap(i, j, channels)));
    }
  plan.steps = 1;
  plan.shape = b.problem().matrix.empty()
                   ? fmt::format("direct: {} sends of {}", n * (n - 1), sim::format_size(uniform))
                   : fmt::format("direct: {} sends, sizes from the traffic matrix", n * (n - 1));
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
  const auto post_label = b.label("send/recv post");
  for (int i = 0; i < n; ++i) {
    const int to = (i + 1) % n;
    const sim::BytesPerSec cap = std::min(b.protocol_cap(), b.p2p_cap(i, to, 1.0));
    const bool net = proxied(b, i, to);
    for (int c = 0; c < channels; ++c) {
      sim::NodeId prev = b.launch();
      std::vector<sim::NodeId> arrived(slots, kNoNode);
      for (int k = 0; k < loops; ++k) {
        const sim::NodeId slot = k >= slots ? arrived[k % slots] : kNoNode;
        const auto flow = static_cast<std::uint32_t>(i * 64 + c);
        if (net) {
          // The GPU posts the chunk (its overhead) and goes on to the next; the proxy's NIC
          // moves it meanwhile.
          prev = b.delay(b.protocol().overhead, {prev, slot}, post_label, i);
          arrived[k % slots] = b.send_posted(i, to, chunk_size(part, chunk, k), {prev}, flow, label, cap).arrival;
        } else {
          const auto sent = b.send(i, to, chunk_size(part, chunk, k), {prev, slot}, flow, label, cap);
          prev = sent.transfer;
          arrived[k % slots] = sent.arrival;
        }
      }
    }
  }
  plan.steps = 1;
  plan.loops = loops;
  plan.shape = fmt::format("send/recv to the next rank over {} channel{}, {} chunk{} of {} each", channels,
                           channels > 1 ? "s" : "", loops, loops > 1 ? "s" : "", sim::format_size(chunk));
}

void expand_direct(PlanBuilder& b, Plan& plan) {
  if (b.problem().op == Collective::send_recv) expand_send_recv(b, plan);
  else expand_all_to_all(b, plan);
}

// As expand_send_recv: P2P channels, each a chain of chunks back to back through its buffer
// slots; each chunk pays the send overhead.
Estimate send_recv_closed_form(PlanBuilder& b, double base) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  const int channels = p2p_channels(machine, problem, size);
  const sim::Bytes part = size / static_cast<double>(channels);
  const sim::Bytes chunk = p2p_chunk(machine, problem, b.choice().protocol, size);
  const int loops = chunk_count(part, chunk);
  const int slots = std::max(2, b.protocol().slots);
  std::vector<Edge> edges;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < channels; ++c)
      edges.push_back({i, (i + 1) % n, static_cast<std::uint32_t>(i * 64 + c), b.p2p_cap(i, (i + 1) % n, 1.0)});
  const auto rates = shared_rates(b, edges, b.protocol_cap());
  double last = 0.0;
  const double o = b.protocol().overhead.count();
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const double lat = b.step_latency(edges[e].from, edges[e].to).count();
    const bool net = proxied(b, edges[e].from, edges[e].to);
    std::vector<double> arrived(slots, 0.0);
    double posted = 0.0, sent = 0.0, arrival = 0.0;
    for (int k = 0; k < loops; ++k) {
      const double slot = k >= slots ? arrived[k % slots] : 0.0;
      const double wire = chunk_size(part, chunk, k).count() / rates[e];
      if (net) {
        // Posts every overhead; the wire takes the chunks one after another.
        posted = std::max(posted, slot) + o;
        sent = std::max(sent, posted) + wire;
      } else {
        sent = std::max(sent, slot) + o + wire;
      }
      arrival = sent + lat;
      arrived[k % slots] = arrival;
    }
    last = std::max(last, arrival);
  }
  double t = base;
  t += last;
  return {sim::Seconds{t},
          fmt::format("base + {} channel(s) x {} chunks x (overhead + chunk / rate) + step", channels, loops)};
}

Estimate direct_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  if (problem.op == Collective::send_recv) return send_recv_closed_form(b, launch.count());
  const int n = static_cast<int>(problem.ranks.size());
  std::vector<Edge> edges;
  const P2pShape shape = p2p_shape(machine, problem);
  for (int i = 0; i < n; ++i)
    for (int d = 1; d < n; ++d) {
      const int j = (i + d) % n;
      edges.push_back({i, j, static_cast<std::uint32_t>(i * n + d),
                       b.p2p_cap(i, j, p2p_channels(shape, all_to_all_piece(problem, i, j)))});
    }
  double t = launch.count();
  t += exchange_time(b, edges, b.protocol_cap() / static_cast<double>(n - 1));
  return {sim::Seconds{t}, "base + (n-1) S/n / rate + step"};
}

// The largest send's protocol, by NCCL's rule for point-to-point operations (p2p_protocol);
// the other protocol is refused, with the reason.
std::optional<std::string> direct_why_not_protocol(const Machine& machine, const Problem& problem, Protocol protocol) {
  const sim::Bytes bytes = p2p_largest_send(problem);
  const Protocol rule = p2p_protocol(machine, problem, bytes);
  if (protocol == rule) return std::nullopt;
  return fmt::format("NCCL sends {} point to point with {}, not tuned: LL up to 16 KiB per channel "
                     "(NCCL_P2P_LL_THRESHOLD), Simple above",
                     sim::format_size(bytes), rule == Protocol::ll ? "LL" : "Simple");
}

double direct_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  if (problem.op != Collective::send_recv) return n * (n - 1);
  // P2P chunks over the operation's channels (expand_send_recv).
  const double channels = p2p_channels(machine, problem, problem.size);
  return n * channels *
         chunk_count(problem.size / channels, p2p_chunk(machine, problem, choice.protocol, problem.size));
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
