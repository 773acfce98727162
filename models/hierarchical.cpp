// Hierarchical all_reduce across nodes: a ring reduce-scatter inside each node (each GPU
// ends with 1/g of the node's sum), a ring all_reduce across nodes among the GPUs with the
// same local index (one ring per rail), and a ring all-gather inside each node. A GPU
// starts a stage as soon as it has finished the previous one.
//
// Closed form: the sum of its three ring stages (closed_form.h's ring_time); the simulation
// overlaps them where one GPU finishes a stage before another.
#include <algorithm>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

std::optional<std::string> hierarchical_why_not(const Machine&, const Problem&, const NodeGroups& by_node) {
  if (by_node.size() < 2) return "hierarchical needs GPUs on more than one node";
  if (!uniform_nodes(by_node)) return "hierarchical needs the same number of GPUs on every node";
  return std::nullopt;
}

void expand_hierarchical(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const auto by_node = ranks_by_node(b.machine(), problem);
  const int nodes = static_cast<int>(by_node.size());
  const int g = static_cast<int>(by_node.front().size());
  const int n = static_cast<int>(problem.ranks.size());
  std::vector<sim::NodeId> done(n, kNoNode);
  const auto stage = [&](Collective op, const std::vector<int>& order, sim::Bytes block, int channels,
                         std::uint32_t flow) {
    RingPass pass;
    pass.op = op;
    pass.order = order;
    pass.block = block;
    pass.chunk = ring_chunk(b.machine(), b.choice(), op, channels);
    pass.slots = b.protocol().slots / ring_chunk_steps(b.machine().params(), b.choice(), op);
    pass.cap = b.protocol_cap();
    pass.flow = flow;
    b.cap_nvlink_channels(channels);
    for (int r : order) pass.entry.push_back(done[r]);
    const auto exits = build_ring_pass(b, pass, nullptr);
    for (std::size_t p = 0; p < order.size(); ++p) done[order[p]] = exits[p];
  };
  const int channels = b.choice().channels;
  const sim::Bytes node_block = problem.size / static_cast<double>(g);
  for (int k = 0; k < nodes; ++k) stage(Collective::reduce_scatter, by_node[k], node_block, channels, k);
  for (int l = 0; l < g; ++l) {
    std::vector<int> rail;
    for (int k = 0; k < nodes; ++k) rail.push_back(by_node[k][l]);
    stage(Collective::all_reduce, rail, node_block / static_cast<double>(nodes), std::max(1, channels / g),
          static_cast<std::uint32_t>(nodes + l));
  }
  for (int k = 0; k < nodes; ++k)
    stage(Collective::all_gather, by_node[k], node_block, channels, static_cast<std::uint32_t>(nodes + g + k));
  plan.steps = 2 * (g - 1) + 2 * (nodes - 1);
  plan.loops = 1;
  plan.shape = fmt::format("intra-node ring reduce-scatter ({} GPUs), {} inter-node rings ({} nodes), "
                           "intra-node ring all-gather", g, g, nodes);
}

Estimate hierarchical_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const Choice& choice = b.choice();
  const sim::Bytes size = problem.size;
  const auto by_node = ranks_by_node(machine, problem);
  double t = launch.count();
  std::string formula;
  const int g = static_cast<int>(by_node.front().size());
  const int nodes = static_cast<int>(by_node.size());
  const sim::Bytes node_block = size / static_cast<double>(g);
  const sim::BytesPerSec cap = b.protocol_cap();
  const auto intra = [&](Collective op, std::uint32_t flow_base) {
    b.cap_nvlink_channels(choice.channels);
    return ring_time(b, op, by_node, node_block, ring_chunk(machine, choice, op, choice.channels), cap,
                     flow_base);
  };
  std::vector<std::vector<int>> rails(g);
  for (int l = 0; l < g; ++l)
    for (int k = 0; k < nodes; ++k) rails[l].push_back(by_node[k][l]);
  const double scatter = intra(Collective::reduce_scatter, 0);
  b.cap_nvlink_channels(std::max(1, choice.channels / g));
  const double across = ring_time(b, Collective::all_reduce, rails, node_block / static_cast<double>(nodes),
                                  ring_chunk(machine, choice, Collective::all_reduce, std::max(1, choice.channels / g)),
                                  cap, static_cast<std::uint32_t>(nodes));
  t += scatter + across + intra(Collective::all_gather, static_cast<std::uint32_t>(nodes + g));
  formula = "base + ring reduce-scatter (node) + ring all_reduce (rails) + ring all-gather (node)";
  return {sim::Seconds{t}, formula};
}

// A ring reduce-scatter and all-gather inside each of N nodes of g GPUs, a ring all_reduce
// across nodes per local index.
double hierarchical_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  const double nodes = static_cast<double>(node_count(machine, problem));
  const double g = std::max(1.0, n / nodes);
  const sim::Bytes block = problem.size / g;
  const auto pass = [&](Collective op, double ranks, sim::Bytes bytes, int channels) {
    const double steps = op == Collective::all_reduce ? 2 * (ranks - 1) : ranks - 1;
    const double loops = pipeline_units(bytes, ring_chunk(machine, choice, op, channels));
    return ring_pass_sends(ranks, loops, std::max(1.0, steps), choice.aggregation);
  };
  const double per_send = ring_send_weight(machine.params().protocol(choice.protocol));
  return per_send * (nodes * (pass(Collective::reduce_scatter, g, block, choice.channels) +
                              pass(Collective::all_gather, g, block, choice.channels)) +
                     g * pass(Collective::all_reduce, nodes, block / nodes,
                              std::max(1, choice.channels / static_cast<int>(g))));
}

}  // namespace

extern const AlgorithmDescriptor kHierarchicalAlgorithm{
    .id = Algorithm::hierarchical,
    .name = "hierarchical",
    .latency_row = Algorithm::ring,   // NCCL has no table for it: the ring's (it composes rings), unverified
    .collectives = {Collective::all_reduce},
    .unimplemented = "hierarchical implements all_reduce only",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {},
    .all = {Collective::all_reduce},
    .aggregates = {Collective::all_reduce},
    .nvlink_step_at_launch = false,
    .why_not = hierarchical_why_not,
    .expand = expand_hierarchical,
    .closed_form = hierarchical_closed_form,
    .plan_size = hierarchical_plan_size,
};

}  // namespace wiresim::models
