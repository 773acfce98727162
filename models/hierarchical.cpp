// Hierarchical all_reduce across nodes: a ring reduce-scatter inside each node (each GPU
// ends with 1/g of the node's sum), a ring all_reduce across nodes among the GPUs with the
// same local index (one ring per rail), and a ring all-gather inside each node. A GPU
// starts a stage as soon as it has finished the previous one.
#include <algorithm>

#include <fmt/format.h>

#include "models/plan.h"

namespace wiresim::models {

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

}  // namespace wiresim::models
