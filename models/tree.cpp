// Tree all_reduce, as NCCL builds it (src/graph/trees.cc, connect.cc): inside each node a
// chain of its GPUs; between nodes NCCL's double binary tree of the chains' heads — the first
// tree an in-order binary tree over the node positions (ncclGetBtree: the root has one child,
// odd positions are leaves), the second its mirror (an even number of nodes) or its shift by
// one (odd), so that a node interior in one tree is a leaf in the other. Each tree carries half
// of the data. NCCL runs one such pair per channel, each channel's chain headed by the GPU of
// its NIC; wiresim runs one pair per rail (up to channels / 2), the chain of rail r starting at
// each node's GPU r, so every NIC carries one pair. Each chunk is reduced up to the root and
// broadcast back down; chunks pipeline.
// Buffer slots are not modelled for trees: the chunk pipeline is bounded by program order.
// With ProtocolParams::tree_cut_through (shipped off) an LL / LL128 rank forwards each chunk's
// lines as they land (PlanBuilder::send_through): a chunk pays its bytes at the network hops
// and its last hop, not at every level; the closed form plays the same sends (trees_fill).
//
// Closed form: base + the later of two ends. Paced: the fill + the L − 1 later chunks. The fill
// is the first chunk's slowest way up and back down, hop by hop at the full link rates. A later
// chunk follows the one before by a hop (o + c/r, r the slowest rate of a hop of the fill, where
// siblings share their parent's NIC as every chunk's do) until the links fill up, then by the steady
// period (o + c/r_shared, every GPU sending up and down at once, the edges pausing
// independently, a link with many edges taken alone: closed_form.h, Sharing::independent).
// Where the links fill up: at each link, the first chunk's way up reaches its up edges and its
// way back down its down edges; once all have started the link passes the rest at its own
// period; the slowest link paces the chunks (closed_form.h, staggered_spacing). Carried: no
// link moves its bytes faster than its capacity while its edges send, from the first chunk's
// arrival to the last chunk's way on (closed_form.h, windowed_bound): what ends a 2-node H100
// tree, whose NVLink ports fill over its first 250 µs and empty over its last. Within 7% of
// the simulation on one node; across nodes (Simple; 16 MiB, 1 GiB) −0.7/−0.5% on 2 nodes,
// −0.2/+0.7% on 8, at most 5.0% between (docs/models.md).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

// NCCL's ncclGetBtree: the parent of `rank` among `n` (-1 at the root).
int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

// The second tree of ncclGetDtree: the mirror of the first (n even) or its shift by one (n odd).
int dtree_parent(int n, int which, int rank) {
  if (which == 0) return btree_parent(n, rank);
  if (n % 2 == 1) {
    const int u = btree_parent(n, (rank - 1 + n) % n);
    return u < 0 ? -1 : (u + 1) % n;
  }
  const int u = btree_parent(n, n - 1 - rank);
  return u < 0 ? -1 : n - 1 - u;
}

}  // namespace

TreeShape build_tree(const std::vector<std::vector<int>>& by_node, int which, int ranks) {
  TreeShape t;
  t.parent.assign(ranks, -1);
  t.children.assign(ranks, {});
  t.depth.assign(ranks, 0);
  const int nodes = static_cast<int>(by_node.size());
  for (const auto& chain : by_node)
    for (std::size_t i = 1; i < chain.size(); ++i) t.parent[chain[i]] = chain[i - 1];
  for (int q = 0; q < nodes; ++q) {
    const int up = dtree_parent(nodes, which, q);
    if (up < 0) t.root = by_node[q].front();
    else t.parent[by_node[q].front()] = by_node[up].front();
  }
  for (int r = 0; r < ranks; ++r)
    if (t.parent[r] >= 0) t.children[t.parent[r]].push_back(r);
  // Depth by walking up (trees here are shallow: chain length + log2(nodes)).
  for (int r = 0; r < ranks; ++r)
    for (int p = t.parent[r]; p >= 0; p = t.parent[p]) ++t.depth[r];
  return t;
}

namespace {

// How many tree pairs run across nodes: one per rail (GPU of the smallest node), up to half the
// channels. One node has no NICs to spread over: NCCL's single-node trees are one chain for
// every channel (rank order, rank 0 the root).
int tree_rails(const std::vector<std::vector<int>>& by_node, int channels) {
  if (by_node.size() == 1) return 1;
  std::size_t smallest = by_node.front().size();
  for (const auto& g : by_node) smallest = std::min(smallest, g.size());
  return std::max(1, std::min(static_cast<int>(smallest), channels / 2));
}

}  // namespace

std::vector<std::vector<std::vector<int>>> tree_chains(const Machine& machine, const Problem& problem,
                                                      const std::vector<std::vector<int>>& by_node, int channels) {
  const int rails = tree_rails(by_node, channels);
  // On a mesh (xGMI, DGX-1) each rail's chain follows its own mesh cycle, as the rings do, so
  // that the chains spread over the direct links; in rank order every chain would take the
  // same g − 1 links.
  std::vector<std::vector<std::vector<int>>> cycles;
  for (const auto& local : by_node) {
    std::vector<topo::DeviceId> gpus;
    for (int r : local) gpus.push_back(problem.ranks[r]);
    cycles.push_back(by_node.size() > 1 ? machine.mesh_rings(gpus) : std::vector<std::vector<int>>{});
  }
  std::vector<std::vector<std::vector<int>>> out;
  for (int r = 0; r < rails; ++r) {
    std::vector<std::vector<int>> chains;
    for (std::size_t k = 0; k < by_node.size(); ++k) {
      const auto& local = by_node[k];
      const int g = static_cast<int>(local.size());
      std::vector<int> order(g);
      for (int i = 0; i < g; ++i) order[i] = i;
      if (!cycles[k].empty() && static_cast<int>(cycles[k].front().size()) == g) order = cycles[k][r % cycles[k].size()];
      const int at = static_cast<int>(std::find(order.begin(), order.end(), r % g) - order.begin());
      std::vector<int> chain;
      for (int i = 0; i < g; ++i) chain.push_back(local[order[(at + i) % g]]);
      chains.push_back(std::move(chain));
    }
    out.push_back(std::move(chains));
  }
  return out;
}

namespace {

void expand_tree(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const auto by_node = ranks_by_node(b.machine(), problem);
  const auto instances = tree_chains(b.machine(), problem, by_node, b.choice().channels);
  const int trees = by_node.size() > 1 ? 2 * static_cast<int>(instances.size()) : 1;
  const int per_tree = std::max(1, b.choice().channels / trees);
  const sim::Bytes chunk = b.protocol().step * (b.protocol().payload * per_tree);
  const sim::Bytes share = problem.size / static_cast<double>(trees);
  const int loops = chunk_count(share, chunk);
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(trees);
  b.cap_nvlink_channels(per_tree);
  const auto up_label = b.label("tree reduce (up)");
  const auto down_label = b.label("tree broadcast (down)");
  const bool through = b.protocol().tree_cut_through;
  int max_depth = 0;
  for (int tree = 0; tree < trees; ++tree) {
    const TreeShape t = build_tree(instances[tree / 2], tree % 2, n);
    // Ranks deepest first, so children's sends exist before their parent's.
    std::vector<int> by_depth(n);
    for (int r = 0; r < n; ++r) by_depth[r] = r;
    std::stable_sort(by_depth.begin(), by_depth.end(), [&](int a, int c) { return t.depth[a] > t.depth[c]; });
    max_depth = std::max(max_depth, t.depth[by_depth.front()]);
    std::vector<sim::NodeId> prev_up(n, b.launch()), up_arrival(n, kNoNode);
    std::vector<std::vector<sim::NodeId>> prev_down(n);
    for (int r = 0; r < n; ++r) prev_down[r].assign(t.children[r].size(), b.launch());
    std::vector<sim::NodeId> down_arrival(n, kNoNode);
    const std::uint32_t flow_base = static_cast<std::uint32_t>(tree * 2 * n);
    // Forwarding as it receives (ProtocolParams::tree_cut_through): each rank passes on the
    // lines of this chunk as they land (PlanBuilder::send_through), each send's last forwarded.
    const PlanBuilder::Sent none{kNoNode, kNoNode, kNoNode};
    std::vector<PlanBuilder::Sent> up_sent(n, none), down_sent(n, none), kids;
    for (int k = 0; k < loops; ++k) {
      const sim::Bytes c = chunk_size(share, chunk, k);
      for (int r : by_depth) {
        if (t.parent[r] < 0) continue;
        if (through) {
          kids.clear();
          for (int child : t.children[r]) kids.push_back(up_sent[child]);
          up_sent[r] = b.send_through(r, t.parent[r], c, 1, 1, {prev_up[r]}, kids, flow_base + r, up_label, cap);
          prev_up[r] = up_sent[r].transfer;
          continue;
        }
        const auto sent = b.send(r, t.parent[r], c, {prev_up[r]}, flow_base + r, up_label, cap, true);
        for (int child : t.children[r]) b.depend(up_arrival[child], sent.transfer);
        prev_up[r] = sent.transfer;
        up_arrival[r] = sent.arrival;
      }
      for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
        const int r = *it;
        for (std::size_t ci = 0; ci < t.children[r].size(); ++ci) {
          const int child = t.children[r][ci];
          if (through) {
            // The root passes down what its children sent up; the others what came down to them.
            kids.clear();
            if (t.parent[r] < 0)
              for (int c2 : t.children[r]) kids.push_back(up_sent[c2]);
            else
              kids.push_back(down_sent[r]);
            down_sent[child] = b.send_through(r, child, c, 1, 0, {prev_down[r][ci]}, kids, flow_base + n + child,
                                              down_label, cap);
            prev_down[r][ci] = down_sent[child].transfer;
            continue;
          }
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
  plan.shape = fmt::format("{} tree{} ({} per rail) of depth {}, {} chunk{} of {}", trees, trees > 1 ? "s" : "",
                           2, max_depth, loops, loops > 1 ? "s" : "", sim::format_size(chunk));
}

Estimate tree_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const Choice& choice = b.choice();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  const auto by_node = ranks_by_node(b.machine(), problem);
  double t = launch.count();
  std::string formula;
  // Same trees as expand_tree: a pair per rail, chains inside nodes, NCCL's double binary tree.
  const auto instances = tree_chains(b.machine(), problem, by_node, choice.channels);
  const int trees = by_node.size() > 1 ? 2 * static_cast<int>(instances.size()) : 1;
  const int per_tree = std::max(1, choice.channels / trees);
  b.cap_nvlink_channels(per_tree);
  const sim::Bytes chunk = b.protocol().step * (b.protocol().payload * per_tree);
  const sim::Bytes share = size / static_cast<double>(trees);
  const int loops = chunk_count(share, chunk);
  std::vector<Edge> edges;
  int depth = 0;
  const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(trees);
  const sim::Bytes c = loops > 1 ? chunk : share;
  const double o = b.protocol().overhead.count();
  // Filling and draining the pipeline: the first chunk's slowest way up to the root and
  // back, hop by hop (NVLink inside a node, NICs between nodes), the hops of one height (up)
  // or depth (down) across all trees sharing links.
  double full = INFINITY;
  std::vector<double> starts;
  std::vector<TreeShape> shapes;
  std::vector<std::uint32_t> flow_up, flow_down;
  for (int tree = 0; tree < trees; ++tree) {
    shapes.push_back(build_tree(instances[tree / 2], tree % 2, n));
    for (int r = 0; r < n; ++r) depth = std::max(depth, shapes.back().depth[r]);
    flow_up.push_back(static_cast<std::uint32_t>(tree * 2 * n));
    flow_down.push_back(flow_up.back() + static_cast<std::uint32_t>(n));
  }
  // A tree that forwards as it receives ends with the last chunk's final hop (its own bytes).
  const double last = b.protocol().tree_cut_through ? chunk_size(share, chunk, loops - 1).count() : 0.0;
  std::vector<double> tails;
  const double fill = trees_fill(b, shapes, flow_up, flow_down, c.count(), cap, b.reduction_time(c).count(), &edges,
                                 &full, &starts, &tails, last);
  // In the steady state every edge sends one chunk per period of the slowest and pauses for the
  // rest (overhead, waiting), independently of the others on its links (duty_shared_rates).
  const auto shared = duty_shared_rates(b, edges, cap, c.count(), std::vector<double>(edges.size(), o),
                                        std::vector<int>(edges.size(), 0), Sharing::independent);
  const double rate = *std::min_element(shared.begin(), shared.end());
  // Once the first chunk's way down reaches a link, the link carries up and down sends at
  // once: chunks before go a hop apart, later ones a steady period (staggered_spacing). A hop
  // at the fill's rate, siblings sharing their parent's NIC: 4 B200 nodes, Simple, 64 MiB (4
  // chunks a tree) was 9.0 % fast with each hop alone (the traced sends up leave a NIC 47.8 us
  // apart, not 25.9), now 5.8 %.
  const double hop = o + c.count() / full;
  const double paced = fill + staggered_spacing(b, edges, starts, shared, cap, c.count(), o, hop, o + c.count() / rate, loops - 1);
  // No link carries its bytes faster than its capacity while its edges send (each from its
  // first chunk's arrival until the rest of its last chunk's way): the ramps at both ends.
  const double carried = windowed_bound(b, edges, starts, tails, cap, c.count(), share.count());
  t += std::max(paced, carried);
  formula = fmt::format("base + max(fill (leaf-root-leaf, hop by hop) + (L - 1) chunks a hop apart, then a period apart once the links fill; each link's bytes while its edges send), D = {}, L = {}",
                        depth, loops);
  return {sim::Seconds{t}, formula};
}

// A pair of trees per rail across nodes (one tree inside a node), each rank sending up then
// down per chunk; a send that forwards as it receives is four DAG nodes (send_weight).
double tree_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  const ProtocolParams& proto = machine.params().protocol(choice.protocol);
  const auto by_node = ranks_by_node(machine, problem);
  const double trees = by_node.size() > 1 ? 2.0 * tree_rails(by_node, choice.channels) : 1.0;
  const sim::Bytes chunk = proto.step * (proto.payload * std::max(1.0, choice.channels / trees));
  return send_weight(proto.tree_cut_through) * trees * 2 * n * pipeline_units(problem.size / trees, chunk);
}

}  // namespace

extern const AlgorithmDescriptor kTreeAlgorithm{
    .id = Algorithm::tree,
    .name = "tree",
    .latency_row = Algorithm::tree,
    .collectives = {Collective::all_reduce},
    .unimplemented = "tree implements all_reduce only (as in NCCL)",
    .protocols = {Protocol::ll, Protocol::ll128, Protocol::simple},
    .nccl = {Collective::all_reduce},
    .all = {Collective::all_reduce},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = nullptr,
    .expand = expand_tree,
    .closed_form = tree_closed_form,
    .plan_size = tree_plan_size,
};

}  // namespace wiresim::models
