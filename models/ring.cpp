// Ring algorithms, as NCCL runs them.
//
// all_reduce / all_gather / reduce_scatter: each rank's data is cut into n blocks; a block
// travels around the ring in 2(n−1) steps (reduce-scatter then all-gather) or n−1 steps.
// Blocks are sent in chunks, one loop of steps per chunk; within a loop a rank forwards at
// step s what it received at step s−1, so a loop is a chain of steps; a rank runs its loops
// one after another (NCCL's primitives are in program order), and a sender may run at most
// `slots` chunks ahead of what its receiver has consumed (the connection's buffer).
//
// broadcast / reduce: a chain from (to) the root along the ring, pipelined chunk by chunk.
//
// Closed form, per loop k and step s (one ring pass; every hop alike: lock step, else played
// hop by hop as closed_form.h's ring_pass_time):
//   t = base + Σ_k Σ_s max_edges( c_k / (payload·rate_e) + λ_e ) [+ reduction]
// chain (broadcast, reduce): the pipeline recurrence T(i,k) = max(T(i,k−1), A(i−1,k)) + c_k/r.
// Both agree with the simulation exactly where nothing else shares the links (tests: 0.1%).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"
#include "sim/units.h"

namespace wiresim::models {
namespace {

int ring_steps(Collective op, int n) {
  return op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
}

// Broadcast (data leaves order[0]) or reduce (data gathers into order.back()), pipelined.
void build_chain(PlanBuilder& b, Plan& plan, const std::vector<int>& order, bool reducing) {
  const int hops = static_cast<int>(order.size()) - 1;
  const sim::Bytes total = b.problem().size;
  const sim::Bytes chunk = ring_chunk(b.machine(), b.choice(), b.problem().op, b.choice().channels);
  const int loops = chunk_count(total, chunk);
  const int slots = std::max(2, b.protocol().slots);
  const auto label = b.label(reducing ? "chain reduce" : "chain broadcast");
  b.cap_nvlink_channels(b.choice().channels);
  const sim::BytesPerSec cap = b.protocol_cap();
  // prev_send[i]: hop i's last transfer; arrivals[i]: arrival of the current chunk over hop i;
  // consumed[i][k % slots]: node at the receiver of hop i that frees the buffer of chunk k.
  const bool through = b.protocol().cut_through;   // forward as it lands (send_through)
  std::vector<sim::NodeId> prev_send(hops, b.launch());
  std::vector<sim::NodeId> arrival(hops, kNoNode), head(hops, kNoNode);
  std::vector<std::vector<sim::NodeId>> consumed(hops, std::vector<sim::NodeId>(slots, kNoNode));
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes c = chunk_size(total, chunk, k);
    for (int i = 0; i < hops; ++i) {
      const sim::NodeId data = i == 0 || through ? kNoNode : arrival[i - 1];
      const sim::NodeId slot = k >= slots ? consumed[i][k % slots] : kNoNode;
      const auto flow = static_cast<std::uint32_t>(i);
      const PlanBuilder::Sent forwarded{kNoNode, i > 0 ? arrival[i - 1] : kNoNode, i > 0 ? head[i - 1] : kNoNode};
      const auto sent = through ? b.send_through(order[i], order[i + 1], c, 1, reducing ? 1 : 0,
                                                 {prev_send[i], data, slot}, forwarded, flow, label, cap)
                                : b.send(order[i], order[i + 1], c, {prev_send[i], data, slot}, flow, label, cap,
                                         reducing);
      head[i] = sent.head;
      if (i > 0) consumed[i - 1][k % slots] = sent.transfer;
      if (i == hops - 1) consumed[i][k % slots] = sent.arrival;
      prev_send[i] = sent.transfer;
      arrival[i] = sent.arrival;
    }
  }
  plan.steps = hops;
  plan.loops = loops;
  plan.shape = fmt::format("chain of {} hops, {} chunks of {}", hops, loops, sim::format_size(chunk));
}

}  // namespace

std::vector<sim::NodeId> build_ring_pass(PlanBuilder& b, const RingPass& pass, int* loops_out) {
  const int n = static_cast<int>(pass.order.size());
  const int steps = ring_steps(pass.op, n);
  const int loops = chunk_count(pass.block, pass.chunk);
  const int slots = std::max(2, pass.slots);
  if (loops_out) *loops_out = loops;
  // Aggregation (Choice::aggregation): merge `per_loop` consecutive chunks into one, then
  // `per_step` consecutive steps into one send; a group is simulated as one loop / step.
  const int aggregation = std::max(1, b.choice().aggregation);
  const int per_loop = std::min(aggregation, loops);
  const int per_step = std::min(std::max(1, aggregation / per_loop), steps);
  const int loop_groups = (loops + per_loop - 1) / per_loop;
  const int step_groups = (steps + per_step - 1) / per_step;
  const auto rs_label = b.label("ring reduce-scatter");
  const auto ag_label = b.label("ring all-gather");
  // LL and LL128 forward as they receive (PlanBuilder::send_through): a step waits for the
  // head of the send it forwards (head_in), not its whole arrival.
  const bool through = b.protocol().cut_through;
  std::vector<sim::NodeId> prev_send(n, kNoNode), arrival_in(n, kNoNode), next_arrival(n, kNoNode);
  std::vector<sim::NodeId> head_in(n, kNoNode), next_head(n, kNoNode);
  std::vector<sim::NodeId> loop_end(n, kNoNode);
  std::vector<std::vector<sim::NodeId>> consumed(n, std::vector<sim::NodeId>(slots, kNoNode));
  for (int p = 0; p < n; ++p) {
    prev_send[p] = b.launch();
    if (p < static_cast<int>(pass.entry.size())) loop_end[p] = pass.entry[p];
  }
  for (int kg = 0; kg < loop_groups; ++kg) {
    const int k_end = std::min(loops, (kg + 1) * per_loop);
    const int chunks = k_end - kg * per_loop;
    sim::Bytes c{0.0};
    for (int k = kg * per_loop; k < k_end; ++k) c += chunk_size(pass.block, pass.chunk, k);
    for (int sg = 0; sg < step_groups; ++sg) {
      const int s0 = sg * per_step;
      const int in_group = std::min(steps, s0 + per_step) - s0;
      // Steps s < n - 1 of an all_reduce reduce; the rest gather.
      const int reducing_steps = pass.op == Collective::reduce_scatter ? in_group
                                 : pass.op == Collective::all_reduce
                                     ? std::clamp(n - 1 - s0, 0, in_group)
                                     : 0;
      const bool gathering = reducing_steps < in_group;
      const auto label = gathering ? ag_label : rs_label;
      const int j = kg * step_groups + sg;
      for (int p = 0; p < n; ++p) {
        const int to = (p + 1) % n;
        // Step 0 of a loop waits for the end of this rank's previous loop (program order);
        // a later step waits for the block it forwards.
        const sim::NodeId slot = j >= slots ? consumed[p][j % slots] : kNoNode;
        const sim::Bytes bytes = c * static_cast<double>(in_group);
        const std::uint32_t flow = pass.flow * 1'000'003u + static_cast<std::uint32_t>(p);
        const sim::NodeId data = sg == 0 ? loop_end[p] : through ? kNoNode : arrival_in[p];
        const PlanBuilder::Sent forwarded{kNoNode, sg == 0 ? kNoNode : arrival_in[p], sg == 0 ? kNoNode : head_in[p]};
        const auto sent =
            through ? b.send_through(pass.order[p], pass.order[to], bytes, chunks * in_group, chunks * reducing_steps,
                                     {prev_send[p], data, slot}, forwarded, flow, label, pass.cap)
                    : b.send_merged(pass.order[p], pass.order[to], bytes, chunks * in_group,
                                    chunks * reducing_steps, {prev_send[p], data, slot}, flow, label, pass.cap);
        prev_send[p] = sent.transfer;
        next_arrival[to] = sent.arrival;
        next_head[to] = sent.head;
        // This send consumes what p received at the previous step, freeing that buffer slot.
        if (sg > 0) consumed[(p + n - 1) % n][(j - 1) % slots] = sent.transfer;
        if (sg == step_groups - 1) consumed[p][j % slots] = sent.arrival;
      }
      std::swap(arrival_in, next_arrival);
      std::swap(head_in, next_head);
    }
    for (int p = 0; p < n; ++p) loop_end[p] = arrival_in[p];
  }
  std::vector<sim::NodeId> exits(n);
  const auto done = b.label("ring done");
  for (int p = 0; p < n; ++p) exits[p] = b.delay(sim::Seconds{0.0}, {prev_send[p], loop_end[p]}, done, pass.order[p]);
  return exits;
}

double ring_pass_sends(double n, double loops, double steps, int aggregation) {
  const double k = std::max(1, aggregation);
  const double per_loop = std::min(k, loops);
  const double per_step = std::min(std::max(1.0, std::floor(k / per_loop)), steps);
  return n * std::ceil(loops / per_loop) * std::ceil(steps / per_step);
}

namespace {

// The ring instances of the problem (ring_orders), their hops bound to rails on `b`. RCCL (PXN
// off): a ring's hop to the next node takes the rail of the GPU it enters by, as NCCL's ring
// channels keep one NIC at both ends ("NET n -> GPU a -> .. -> GPU x -> NET n"), GPU x reaching
// NIC n over PCIe. With PXN the router's own rule keeps rings on their rail.
std::vector<std::vector<int>> bound_ring_orders(PlanBuilder& b) {
  const Machine& m = b.machine();
  auto orders = ring_orders(m, b.problem(), b.choice().channels);
  if (m.arch().pxn) return orders;
  for (const auto& order : orders) {
    const int n = static_cast<int>(order.size());
    for (int p = 0; p < n; ++p) {
      const int from = order[p], to = order[(p + 1) % n];
      if (m.node_of(b.gpu(from)) == m.node_of(b.gpu(to))) continue;
      const auto nics = m.router().nearest_nics(b.gpu(to));
      if (!nics.empty()) b.set_rail(from, to, m.graph().device(nics.front()).rail);
    }
  }
  return orders;
}

void expand_ring(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const auto by_node = ranks_by_node(b.machine(), problem);
  const int n = static_cast<int>(problem.ranks.size());
  if (problem.op == Collective::broadcast || problem.op == Collective::reduce) {
    build_chain(b, plan, chain_order(by_node, problem.op, problem.root), problem.op == Collective::reduce);
    return;
  }
  const auto orders = bound_ring_orders(b);
  const int rings = static_cast<int>(orders.size());
  const int per_ring = std::max(1, b.choice().channels / rings);
  RingPass pass;
  pass.op = problem.op;
  pass.block = problem.size / (static_cast<double>(n) * rings);
  pass.chunk = ring_chunk(b.machine(), b.choice(), problem.op, per_ring);
  pass.slots = b.protocol().slots / ring_chunk_steps(b.machine().params(), b.choice(), problem.op);
  pass.cap = b.protocol_cap() / rings;
  b.cap_nvlink_channels(per_ring);
  int loops = 0;
  for (int r = 0; r < rings; ++r) {
    pass.order = orders[r];
    pass.flow = static_cast<std::uint32_t>(r);
    build_ring_pass(b, pass, &loops);
  }
  plan.steps = ring_steps(problem.op, n);
  plan.loops = loops;
  plan.shape = fmt::format("{} ring{} x {} channel{}, {} loop{} of {} per rank", rings,
                           rings > 1 ? "s" : "", per_ring, per_ring > 1 ? "s" : "", loops,
                           loops > 1 ? "s" : "", sim::format_size(pass.chunk));
}

Estimate chain_closed_form(PlanBuilder& b, double base) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const Choice& choice = b.choice();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  const std::vector<int> order = chain_order(ranks_by_node(machine, problem), problem.op, problem.root);
  const int hops = n - 1;
  std::vector<Edge> edges;
  for (int i = 0; i < hops; ++i) edges.push_back({order[i], order[i + 1], static_cast<std::uint32_t>(i)});
  b.cap_nvlink_channels(choice.channels);
  const auto rates = shared_rates(b, edges, b.protocol_cap());
  const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, choice.channels);
  const int loops = chunk_count(size, chunk);
  const bool reducing = problem.op == Collective::reduce;
  const bool through = b.protocol().cut_through;
  std::vector<double> sent(hops, base), arrived(hops, base), head(hops, base);
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes c = chunk_size(size, chunk, k);
    for (int i = 0; i < hops; ++i) {
      const bool whole = !through || b.whole_steps(order[i], order[i + 1]);
      const double data = i == 0 ? base : whole ? arrived[i - 1] : head[i - 1];
      const double start = std::max(sent[i], data) + b.protocol().overhead.count();
      const double latency = b.step_latency(order[i], order[i + 1]).count();
      sent[i] = start + c.count() / rates[i];
      arrived[i] = std::max(sent[i], through && i > 0 ? arrived[i - 1] : base) + latency +
                   (reducing ? b.reduction_time(c).count() : 0.0);
      head[i] = start + latency;
    }
  }
  return {sim::Seconds{arrived[hops - 1]},
          through ? fmt::format("pipeline of {} hops x {} chunks of {}, each hop forwarding as it receives: hops x "
                            "step + (hops - 1) x overhead + chunks x (overhead + chunk/rate) when chunk/rate >= step",
                            hops, loops, sim::format_size(chunk))
              : fmt::format("pipeline of {} hops x {} chunks of {}: (hops + chunks - 1) x (overhead + chunk/rate) + hops x step",
                            hops, loops, sim::format_size(chunk))};
}

Estimate ring_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const Choice& choice = b.choice();
  const double base = launch.count();
  if (problem.op == Collective::broadcast || problem.op == Collective::reduce) return chain_closed_form(b, base);
  const int n = static_cast<int>(problem.ranks.size());
  const auto orders = bound_ring_orders(b);
  const int rings = static_cast<int>(orders.size());
  const int per_ring = std::max(1, choice.channels / rings);
  const sim::Bytes block = problem.size / (static_cast<double>(n) * rings);
  const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, per_ring);
  b.cap_nvlink_channels(per_ring);
  double t = base;
  t += ring_time(b, problem.op, orders, block, chunk, b.protocol_cap() / rings);
  const int steps = problem.op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
  return {sim::Seconds{t},
          b.protocol().cut_through
              ? fmt::format("base + loops({}) x steps({}) x (overhead + max(chunk/rate, step latency)), forwarding as "
                            "it receives",
                            chunk_count(block, chunk), steps)
              : fmt::format("base + loops({}) x steps({}) x (chunk/rate + step latency)", chunk_count(block, chunk),
                            steps)};
}

double ring_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  const double per_send = ring_send_weight(machine.params().protocol(choice.protocol));
  if (problem.op == Collective::broadcast || problem.op == Collective::reduce) {
    const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, choice.channels);
    return per_send * (n - 1) * pipeline_units(problem.size, chunk);
  }
  const int rings = ring_instances(machine, problem, choice.channels);
  const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, std::max(1, choice.channels / rings));
  const double loops = pipeline_units(problem.size / (n * rings), chunk);
  const double steps = problem.op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
  return per_send * rings * ring_pass_sends(n, loops, steps, choice.aggregation);
}

}  // namespace

extern const AlgorithmDescriptor kRingAlgorithm{
    .id = Algorithm::ring,
    .name = "ring",
    .latency_row = Algorithm::ring,
    .collectives = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                    Collective::broadcast, Collective::reduce},
    .unimplemented = "ring does not implement {} (use pairwise or direct)",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::broadcast,
             Collective::reduce},
    .all = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::broadcast,
            Collective::reduce},
    .aggregates = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter},
    .nvlink_step_at_launch = false,
    .why_not = nullptr,
    .expand = expand_ring,
    .closed_form = ring_closed_form,
    .plan_size = ring_plan_size,
};

}  // namespace wiresim::models
