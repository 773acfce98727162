// Tree all_reduce, as NCCL builds it: inside each node a chain of its GPUs; between nodes a
// binary tree of the nodes' head GPUs. With more than one node there are two trees (NCCL's
// double binary tree: the second over the nodes in reverse order, headed by the other end
// of each node's chain), each carrying half the data, so every node sends and receives on
// both. Each chunk is reduced up to the root and broadcast back down; chunks pipeline.
// Buffer slots are not modelled for trees: the chunk pipeline is bounded by program order.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/plan.h"

namespace wiresim::models {

TreeShape build_tree(const std::vector<std::vector<int>>& by_node, int which, int ranks) {
  TreeShape t;
  t.parent.assign(ranks, -1);
  t.children.assign(ranks, {});
  t.depth.assign(ranks, 0);
  const int nodes = static_cast<int>(by_node.size());
  std::vector<int> heads(nodes);
  for (int q = 0; q < nodes; ++q) {
    const int k = which == 0 ? q : nodes - 1 - q;   // q: position in the binary tree
    std::vector<int> chain = by_node[k];
    if (which == 1) std::reverse(chain.begin(), chain.end());
    heads[q] = chain.front();
    for (std::size_t i = 1; i < chain.size(); ++i) t.parent[chain[i]] = chain[i - 1];
  }
  for (int q = 1; q < nodes; ++q) t.parent[heads[q]] = heads[(q - 1) / 2];
  t.root = heads[0];
  for (int r = 0; r < ranks; ++r)
    if (t.parent[r] >= 0) t.children[t.parent[r]].push_back(r);
  // Depth by walking up (trees here are shallow: chain length + log2(nodes)).
  for (int r = 0; r < ranks; ++r)
    for (int p = t.parent[r]; p >= 0; p = t.parent[p]) ++t.depth[r];
  return t;
}

void expand_tree(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const auto by_node = ranks_by_node(b.machine(), problem);
  const int trees = by_node.size() > 1 ? 2 : 1;
  const int per_tree = std::max(1, b.choice().channels / trees);
  const sim::Bytes chunk = b.protocol().step * (b.protocol().payload * per_tree);
  const sim::Bytes share = problem.size / static_cast<double>(trees);
  const int loops = chunk_count(share, chunk);
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(trees);
  b.cap_nvlink_channels(per_tree);
  const auto up_label = b.label("tree reduce (up)");
  const auto down_label = b.label("tree broadcast (down)");
  int max_depth = 0;
  for (int which = 0; which < trees; ++which) {
    const TreeShape t = build_tree(by_node, which, n);
    // Ranks deepest first, so children's sends exist before their parent's.
    std::vector<int> by_depth(n);
    for (int r = 0; r < n; ++r) by_depth[r] = r;
    std::stable_sort(by_depth.begin(), by_depth.end(), [&](int a, int c) { return t.depth[a] > t.depth[c]; });
    max_depth = std::max(max_depth, t.depth[by_depth.front()]);
    std::vector<sim::NodeId> prev_up(n, b.launch()), up_arrival(n, kNoNode);
    std::vector<std::vector<sim::NodeId>> prev_down(n);
    for (int r = 0; r < n; ++r) prev_down[r].assign(t.children[r].size(), b.launch());
    std::vector<sim::NodeId> down_arrival(n, kNoNode);
    const std::uint32_t flow_base = static_cast<std::uint32_t>(which * n);
    for (int k = 0; k < loops; ++k) {
      const sim::Bytes c = chunk_size(share, chunk, k);
      for (int r : by_depth) {
        if (t.parent[r] < 0) continue;
        const auto sent = b.send(r, t.parent[r], c, {prev_up[r]}, flow_base + r, up_label, cap, true);
        for (int child : t.children[r]) b.depend(up_arrival[child], sent.transfer);
        prev_up[r] = sent.transfer;
        up_arrival[r] = sent.arrival;
      }
      for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
        const int r = *it;
        for (std::size_t ci = 0; ci < t.children[r].size(); ++ci) {
          const int child = t.children[r][ci];
          const auto sent = b.send(r, child, c, {prev_down[r][ci], down_arrival[r]}, flow_base + n + child,
                                   down_label, cap);
          // The root broadcasts chunk k once every child's share of it is in.
          if (t.parent[r] < 0)
            for (int c2 : t.children[r]) b.depend(up_arrival[c2], sent.transfer);
          prev_down[r][ci] = sent.transfer;
          down_arrival[child] = sent.arrival;
        }
      }
    }
  }
  plan.steps = 2 * max_depth;
  plan.loops = loops;
  plan.shape = fmt::format("{} tree{} of depth {}, {} chunk{} of {}", trees, trees > 1 ? "s" : "", max_depth,
                           loops, loops > 1 ? "s" : "", sim::format_size(chunk));
}

}  // namespace wiresim::models
