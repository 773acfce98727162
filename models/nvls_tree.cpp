// NVLSTree all_reduce: NVLS inside each node, a tree between nodes, as NCCL runs it across
// nodes on Hopper and later (NCCL disables it on one node).
//
// Each loop's chunk is cut into g parts, one per local GPU (g GPUs per node). Inside node q,
// GPU j reduces part j through the NVSwitch (NVLS reduce-scatter: one transfer over every
// local uplink and j's downlink). The g GPUs j of the nodes (one per rail: each uses its own
// NIC) then all-reduce part j over NCCL's double binary tree of nodes: each tree carries half
// the part, reduced up to the root and sent back down. Finally GPU j multicasts the result
// into its node (NVLS all-gather: j's uplink and every local downlink). Loops pipeline, each
// buffer NCCL_STEPS (`slots`) loops deep and freed by the warps that read it, hop by hop
// (src/device/all_reduce.h, NVLS_TREE: the scatter fills the head's reduce buffer, which the
// head's reduce warps free once they have sent the step up, or, at a tree's root, down and
// into the node; a parent's receive buffer is freed by its own step up or down; a child's by
// its step down and into its node. src/transport/nvls.cc: the reduce and the broadcast
// directions have buffers of their own). So loop k's reduce-scatter waits for loop k − slots
// to have left the head upward (at the root: to have come back down), not for its all-gather.
// Per GPU and loop the NVLink carries (g + 1) parts each way, each NIC about one part
// (two nodes) or two parts (interior of a deeper tree): the network sees 1/g of the data per
// GPU where a ring sends 2(n−1)/n of it, which is why NVLSTree beats the ring across nodes.
// Latency: NVLS's 25 us once (launch), NCCL's NVLSTree NET step (20.9 us) per tree hop.
//
// The tree's sends are held to NCCL's ceiling for the kernel (perChMaxNVLSTreeBws, see
// tree_send_cap): 57.7 GB/s of bus bandwidth per head on 2 Hopper nodes, 45.5 on more.
//
// Closed form (w: one part per loop, L loops, D the trees' depth): base + the larger of
//   pipe(L − 1) = fill + NVLink period + (L − 2)·period, and
//   pipe((L − 1) mod S) + ⌊(L − 1)/S⌋·round trip   (the slot window, S = `slots` loops),
// the fill being the first loop's reduce-scatter, its trees hop by hop (tree_fill) and its
// all-gather. The NVLink period is (g+1)·w/(eff·B) plus the NVLS step overhead that follows
// each reduce-scatter and all-gather; the period is the slower of it and the network side,
// where each tree edge's period counts the pauses of the other edges on its NIC (see the
// body). Two loops: the second trails the first by its own all-gather or network send.
// Against the simulation (`coll all_reduce --topo topologies/cluster-h100-ib.yaml --set
// nodes=N --algo nvls_tree --proto simple --model analytic|simulate`), 4 MiB to 8 GiB: exact at
// one and two loops, within 2.1% on 2, 4, 8 and 16 nodes. On B200 nodes (cluster-b200-ib.yaml)
// exact at one and two loops and within 2% at 48-256 MiB on 4-16 nodes, where loops after the
// first enter the network a hop apart until the way down reaches the NICs; still 3-7% slow at
// 32-40 MiB (three or four loops, the last partial), 3-5% fast at 96 MiB, 6% slow on 2 nodes at
// 64 and 128 MiB, 2-3% fast from 1 GiB on 8 and 16 nodes (docs/models.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

// The chunk per channel and head (local GPU) for a message of `size`, as NCCL cuts it
// (calcCollChunking in src/enqueue.cc): nvls_chunk (128 KiB), at most 64 KiB over 4 or more
// nodes (NCCL_NVLSTREE_MAX_CHUNKSIZE's default), and 64/32 KiB below 4/1 x (channels x heads
// x chunk).
sim::Bytes nvls_tree_chunk(const Machine& machine, sim::Bytes size, int nodes, int heads) {
  double chunk = machine.params().nvls_chunk.count();
  const double ops = static_cast<double>(machine.arch().nvls_channels) * std::max(1, heads);
  const double bytes = size.count();
  const auto shrink = [&](double times, double to) {
    if (bytes < times * ops * chunk && chunk > to) chunk = to;
  };
  if (nodes >= 4) chunk = std::min(chunk, 65536.0);
  shrink(32, 262144);
  shrink(16, 131072);
  shrink(4, 65536);
  shrink(1, 32768);
  return sim::Bytes{chunk};
}

// NCCL's ceiling on the NVLSTree kernel (perChMaxNVLSTreeBws, `nvls_tree_per_channel`): bus
// bandwidth p per channel of its NVLS graph, a channel per head GPU (g heads: one per local
// GPU, each with its NIC; where GPUs share NICs the NICs bind first). Bus bandwidth is algbw
// x 2(n-1)/n and a head moves 1/g of the data, half on each of its two trees, whose sends run
// at once: so a tree send of `half` takes at least half / (p n / (4(n-1))). NCCL's figure is
// what the kernel achieves in all, its per-step cost included, so the bytes get what the send's
// overhead o leaves of that time. Unlimited where the architecture gives no ceiling or the
// overhead alone takes as long.
sim::BytesPerSec tree_send_cap(const PlanBuilder& b, int n, int nodes, sim::Bytes half) {
  const sim::BytesPerSec per = b.machine().arch().nvls_tree_per_channel[nodes <= 2 ? 0 : 1];
  if (per.is_unlimited() || n < 2 || half.count() <= 0.0) return sim::BytesPerSec::unlimited();
  const double rate = per.count() * n / (4.0 * (n - 1));
  const double room = half.count() / rate - b.protocol().overhead.count();
  if (room <= 0.0) return sim::BytesPerSec::unlimited();
  return sim::BytesPerSec{half.count() / room};
}

std::optional<std::string> nvls_tree_why_not(const Machine& machine, const Problem& problem,
                                             const NodeGroups& by_node) {
  if (!machine.p2p()) return "nvls_tree needs P2P over NVLink (P2P is off: NCCL_P2P_DISABLE=1)";
  if (machine.arch().nvls_efficiency <= 0.0)
    return fmt::format("nvls_tree needs NVLink SHARP (Hopper or later); these GPUs are '{}'", machine.arch_name());
  if (by_node.size() < 2) return "nvls_tree needs GPUs on more than one node (NCCL disables it on one node; use nvls)";
  if (!uniform_nodes(by_node)) return "nvls_tree needs the same number of GPUs on every node";
  for (const auto& local : by_node) {
    std::optional<topo::DeviceId> sw;
    for (int r : local) {
      const auto port = machine.nvls_port(problem.ranks[r]);
      if (!port)
        return fmt::format("nvls_tree needs an NVSwitch with multicast (multicast: true), and {} has none",
                           machine.graph().device(problem.ranks[r]).name);
      if (sw && *sw != port->nvswitch) return "nvls_tree needs each node's GPUs on one NVSwitch fabric";
      sw = port->nvswitch;
    }
  }
  return std::nullopt;
}

void expand_nvls_tree(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const Machine& m = b.machine();
  const int n = static_cast<int>(problem.ranks.size());
  const auto by_node = ranks_by_node(m, problem);
  const int nodes = static_cast<int>(by_node.size());
  const int g = static_cast<int>(by_node.front().size());
  const double efficiency = m.arch().nvls_efficiency;
  std::vector<Machine::SwitchPort> port;
  for (auto gpu : problem.ranks) port.push_back(*m.nvls_port(gpu));
  std::vector<std::vector<sim::LinkId>> ups(nodes), downs(nodes);
  sim::Seconds wire{0.0};
  for (int q = 0; q < nodes; ++q)
    for (int r : by_node[q]) {
      ups[q].push_back(port[r].up);
      downs[q].push_back(port[r].down);
      wire = std::max(wire, m.links()[port[r].up].latency + m.links()[port[r].down].latency);
    }
  // Trees of part j: over the nodes' GPU j (each node a one-GPU chain).
  std::vector<std::array<TreeShape, 2>> trees(g);
  for (int j = 0; j < g; ++j) {
    std::vector<std::vector<int>> members;
    for (int q = 0; q < nodes; ++q) members.push_back({by_node[q][j]});
    for (int w = 0; w < 2; ++w) trees[j][w] = build_tree(members, w, n);
  }
  // A loop moves one chunk per channel and head (local GPU), as NCCL's loopSize.
  const sim::Bytes loop_bytes = nvls_tree_chunk(m, problem.size, nodes, g) *
                                (static_cast<double>(m.arch().nvls_channels) * g);
  const sim::Bytes total = problem.size;
  const int loops = chunk_count(total, loop_bytes);
  const auto rs_label = b.label("nvls reduce-scatter");
  const auto up_label = b.label("tree reduce (up)");
  const auto down_label = b.label("tree broadcast (down)");
  const auto ag_label = b.label("nvls all-gather");
  const auto root_label = b.label("tree root");
  const sim::Seconds overhead = m.arch().nvls_step_overhead;
  // Every buffer is NCCL_STEPS (the protocol's slots) loops deep per channel.
  const int ahead = std::max(2, b.protocol().slots);
  // Each tree is its own pipeline: a channel runs one of the two (src/graph/connect.cc: channel
  // c's NVLS tree is tree c % 2), its own scatter, reduce, broadcast and gather warps and
  // buffers, so a tree's loop waits for nothing of the other tree's but the links they share.
  // Per rank and tree: the scatter and gather chains (each NVLS step followed by its step
  // overhead), the last send up and down, and per slot (loop k % ahead) the sends and the
  // gather that free the buffers loop k + ahead fills.
  struct Pipe {
    sim::NodeId rs = kNoNode, ag = kNoNode, up = kNoNode;
    std::vector<sim::NodeId> down;                 // per child
    std::vector<sim::NodeId> up_sent, gathered;    // per slot
    std::vector<sim::NodeId> down_sent;            // per slot and child (a binary tree: 2)
    sim::NodeId reduced = kNoNode, up_arrival = kNoNode, have = kNoNode;
  };
  const std::vector<sim::NodeId> start = nvls_start_nodes(b, n);
  std::vector<std::array<Pipe, 2>> pipe(n);
  for (int j = 0; j < g; ++j)
    for (int q = 0; q < nodes; ++q)
      for (int w = 0; w < 2; ++w) {
        const int r = by_node[q][j];
        Pipe& p = pipe[r][w];
        p.rs = p.ag = start[r];
        p.up = b.launch();
        p.down.assign(trees[j][w].children[r].size(), b.launch());
        p.up_sent.assign(ahead, kNoNode);
        p.gathered.assign(ahead, kNoNode);
        p.down_sent.assign(static_cast<std::size_t>(2 * ahead), kNoNode);
      }
  // `after` waits until rank r has freed slot s of its broadcast buffer in tree w (its sends down
  // and its gather into the node have read it), or of its reduce buffer (its send up has; at the
  // root, where the reduce turns round, its sends down and its gather).
  const auto after_down = [&](int r, int w, int s, sim::NodeId after) {
    const Pipe& p = pipe[r][w];
    b.depend(p.down_sent[2 * s], after);
    b.depend(p.down_sent[2 * s + 1], after);
    b.depend(p.gathered[s], after);
  };
  const auto after_up = [&](const TreeShape& t, int r, int w, int s, sim::NodeId after) {
    if (t.parent[r] >= 0) b.depend(pipe[r][w].up_sent[s], after);
    else after_down(r, w, s, after);
  };
  std::vector<sim::LinkId> links;
  std::vector<int> members;
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes part = chunk_size(total, loop_bytes, k) / static_cast<double>(g);
    const sim::Bytes half = part / 2.0;
    const sim::BytesPerSec tree_cap = tree_send_cap(b, n, nodes, half);
    const int s = k % ahead;
    for (int j = 0; j < g; ++j)
      for (int w = 0; w < 2; ++w) {
        const TreeShape& t = trees[j][w];
        // Scatter: every local GPU's share of the half into head r's reduce buffer.
        for (int q = 0; q < nodes; ++q) {
          const int r = by_node[q][j];
          Pipe& p = pipe[r][w];
          links = ups[q];
          links.push_back(port[r].down);
          const auto rs = b.send_links(links, r, r, half, {p.rs}, wire + b.reduction_time(half), rs_label,
                                       sim::BytesPerSec::unlimited(), efficiency);
          if (k >= ahead) after_up(t, r, w, s, rs.transfer);
          p.rs = overhead.count() > 0.0 ? b.delay(overhead, {rs.transfer}, rs_label, r) : rs.transfer;
          p.reduced = rs.arrival;
        }
        members.clear();
        for (int q = 0; q < nodes; ++q) members.push_back(by_node[q][j]);
        std::stable_sort(members.begin(), members.end(), [&](int a, int c) { return t.depth[a] > t.depth[c]; });
        const std::uint32_t flow = static_cast<std::uint32_t>(w * n);
        // Reduce up the tree, deepest first: a rank sends once its children's halves are in.
        for (int r : members) {
          if (t.parent[r] < 0) continue;
          Pipe& p = pipe[r][w];
          const auto sent = b.send(r, t.parent[r], half, {p.up, p.reduced}, flow + r, up_label,
                                   tree_cap, true);
          for (int child : t.children[r]) b.depend(pipe[child][w].up_arrival, sent.transfer);
          if (k >= ahead) after_up(t, t.parent[r], w, s, sent.transfer);
          p.up = sent.transfer;
          p.up_sent[s] = sent.transfer;
          p.up_arrival = sent.arrival;
        }
        Pipe& root = pipe[t.root][w];
        root.have = b.delay(sim::Seconds{0.0}, {root.reduced}, root_label, t.root);
        for (int child : t.children[t.root]) b.depend(pipe[child][w].up_arrival, root.have);
        // Broadcast down, root first.
        for (auto it = members.rbegin(); it != members.rend(); ++it) {
          const int r = *it;
          Pipe& p = pipe[r][w];
          for (std::size_t ci = 0; ci < t.children[r].size(); ++ci) {
            const int child = t.children[r][ci];
            const auto sent = b.send(r, child, half, {p.down[ci], p.have}, flow + n + child, down_label,
                                     tree_cap);
            if (k >= ahead) after_down(child, w, s, sent.transfer);
            if (ci < 2) p.down_sent[2 * s + ci] = sent.transfer;
            p.down[ci] = sent.transfer;
            pipe[child][w].have = sent.arrival;
          }
        }
        // Gather: head r multicasts the half into its node.
        for (int q = 0; q < nodes; ++q) {
          const int r = by_node[q][j];
          Pipe& p = pipe[r][w];
          links = downs[q];
          links.insert(links.begin(), port[r].up);
          const auto ag = b.send_links(links, r, r, half, {p.ag, p.have}, wire, ag_label,
                                       sim::BytesPerSec::unlimited(), efficiency);
          p.ag = overhead.count() > 0.0 ? b.delay(overhead, {ag.transfer}, ag_label, r) : ag.transfer;
          p.gathered[s] = ag.transfer;
        }
      }
  }
  int depth = 0;
  for (int r = 0; r < n; ++r) depth = std::max({depth, trees.front()[0].depth[r], trees.front()[1].depth[r]});
  plan.steps = 2 + 2 * depth;
  plan.loops = loops;
  plan.shape = fmt::format("nvls in {} nodes x {} GPUs, 2 trees of depth {} per rail, {} loop{} of {}", nodes, g,
                           depth, loops, loops > 1 ? "s" : "", sim::format_size(loop_bytes));
}

Estimate nvls_tree_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  const auto by_node = ranks_by_node(machine, problem);
  double t = launch.count() + machine.arch().nvls_start.count();
  std::string formula;
  // Pipeline of L loops: the first fills every stage (reduce-scatter, D hops up, D down,
  // all-gather); then one loop per period, the slower of the NVLink side (g + 1 parts
  // each way per GPU) and the network side (every tree edge moving half a part at once).
  const int g = static_cast<int>(by_node.front().size());
  const int nodes = static_cast<int>(by_node.size());
  const sim::Bytes loop_bytes = nvls_tree_chunk(machine, size, nodes, g) *
                                (static_cast<double>(machine.arch().nvls_channels) * g);
  const int loops = chunk_count(size, loop_bytes);
  const double eff = b.protocol().payload * machine.arch().nvls_efficiency;
  const auto [bw, wire] = switch_ports(machine, problem.ranks);
  const double part = std::min(size.count(), loop_bytes.count()) / g;
  const double half = part / 2.0;
  const double o = b.protocol().overhead.count();
  const double overhead = machine.arch().nvls_step_overhead.count();
  const double red_half = b.reduction_time(sim::Bytes{half}).count();
  const sim::BytesPerSec tree_cap = tree_send_cap(b, n, nodes, sim::Bytes{half});
  // The trees' edges, and the fill's part in them: each tree hop by hop (tree_fill: a parent's
  // children send to it at once and it sends down to them at once, over shared NICs).
  std::vector<Edge> edges;
  std::vector<int> together;   // per edge: the edges that leave at the same moment share a value
  int depth = 0;
  double hop = 0.0, tree_way = 0.0;
  std::vector<TreeShape> shapes;   // per rail j, its two trees
  std::vector<std::uint32_t> flow_up, flow_down;
  for (int j = 0; j < g; ++j) {
    std::vector<std::vector<int>> members;
    for (int q = 0; q < nodes; ++q) members.push_back({by_node[q][j]});
    for (int w = 0; w < 2; ++w) {
      const TreeShape& tree = shapes.emplace_back(build_tree(members, w, n));
      flow_up.push_back(static_cast<std::uint32_t>(w * n));
      flow_down.push_back(static_cast<std::uint32_t>(w * n + n));
      tree_way = std::max(tree_way, tree_fill(b, tree, flow_up.back(), flow_down.back(), half, tree_cap, red_half,
                                              nullptr, nullptr));
      for (int r = 0; r < n; ++r) {
        depth = std::max(depth, tree.depth[r]);
        if (tree.parent[r] < 0) continue;
        edges.push_back({r, tree.parent[r], static_cast<std::uint32_t>(w * n + r)});
        edges.push_back({tree.parent[r], r, static_cast<std::uint32_t>(w * n + n + r)});
        together.push_back(2 * (w * n + r));                   // a send up: alone
        together.push_back(2 * (w * n + tree.parent[r]) + 1);  // a parent's sends down: together
        hop = std::max(hop, b.step_latency(r, tree.parent[r]).count());
      }
    }
  }
  // The fill: the first loop's reduce-scatter, its trees, its all-gather. The last all-gather
  // ends with its wire or, where longer, its NVLS step overhead (the expansion's delay after
  // every all-gather, the last one's included: its flags are synchronised too).
  const double fill = g * (part + half) / (eff * bw) + wire + std::max(wire, overhead) + red_half + tree_way;
  // The NVLink side: each GPU's reduce-scatter and all-gather share its port ((g + 1) parts
  // each way per loop) and each is followed by the NVLS step overhead before the next loop's.
  const double nvlink = (g + 1.0) * part / (eff * bw) + overhead;
  // A root's reduce buffer is freed only once the loop has turned round there (its sends down):
  // `ahead` loops per round trip, the way up (reduce-scatter, D hops) and one send down.
  const int ahead = std::max(2, b.protocol().slots);
  // The network side: each tree edge sends half a part per period after its per-send overhead
  // o. On its busiest link (its NIC), the edges pause at different moments, but a parent's
  // sends down to its children leave together and so pause together: the link's k edges form
  // m groups. While a group of j edges pauses, the other k - j share the link and move
  // r_(k-j) = min(cap, r_k k / (k - j)) each, r_k being the rate with all k sending
  // (shared_rates). An edge's period P solves
  //   half = r_k (P - m o) + sum over the other groups G of r_(k-|G|) o,
  // which is o + half / r_k where the cap holds every edge at r_k anyway and the link's own
  // bound where the link binds and no cap does.
  const std::vector<double> rates = shared_rates(b, edges, tree_cap);
  std::map<sim::LinkId, std::vector<std::size_t>> on_link;
  for (std::size_t i = 0; i < edges.size(); ++i)
    for (sim::LinkId l : b.route(edges[i].from, edges[i].to, edges[i].flow)) on_link[l].push_back(i);
  double send = 0.0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const std::vector<std::size_t>* busiest = nullptr;
    for (sim::LinkId l : b.route(edges[i].from, edges[i].to, edges[i].flow))
      if (!busiest || on_link[l].size() > busiest->size()) busiest = &on_link[l];
    const double k = static_cast<double>(busiest->size());
    std::map<int, int> groups;
    for (std::size_t e : *busiest) ++groups[together[e]];
    const double r_k = rates[i];
    const auto rate_with = [&](double sending) { return std::min(tree_cap.count(), r_k * k / sending); };
    double moved = 0.0;
    for (const auto& [key, size] : groups)
      if (key != together[i]) moved += rate_with(k - size) * o;
    const double period = (half - moved) / r_k + static_cast<double>(groups.size()) * o;
    send = std::max({send, o + half / rate_with(1.0), period});
  }
  const double trip = (g + 1.0) * part / (eff * bw) + wire + red_half + depth * (send + hop + red_half) + send;
  const double period = std::max(nvlink, send);
  // Loops after the first: the second leaves the NVLink side one NVLink period after the first
  // (traced: loop 2 trails loop 1 by the NVLink period on 4 and 8 H100 nodes). Until the first
  // loop's way back down reaches a NIC, that NIC carries sends up only: loops enter the network
  // a hop apart (the NVLink period, or one send up alone where that is longer) and pass each
  // link at the rate of the edges started on it, and at the steady period once all its edges
  // send (staggered_spacing over the first loop's arrival at each tree edge: trees_fill). On 4
  // B200 nodes at 64 MiB (6 loops of 12 MiB) the traced sends up leave a leaf 38 us apart for
  // the first four loops, against a 67 us steady period; counting every loop after the second
  // at that period made the form 14% slow.
  std::vector<Edge> staged;
  std::vector<double> starts;
  double wave = INFINITY;   // the slowest tree edge's rate in its hop of the fill
  trees_fill(b, shapes, flow_up, flow_down, half, tree_cap, red_half, &staged, &wave, &starts);
  // With every edge sending, each passes a loop per network period `send` (counted above).
  const std::vector<double> staged_rates(staged.size(), half / std::max(send - o, 1e-12));
  const double entry = std::max(nvlink, o + half / wave);
  const auto pipe = [&](double k) {
    const double steps = fill + std::min(k, 1.0) * nvlink + std::max(0.0, k - 1.0) * period;
    if (k < 2.0) return steps;
    return std::min(steps, fill + staggered_spacing(b, staged, starts, staged_rates, tree_cap, half, o, entry, period,
                                                    static_cast<int>(k)));
  };
  // The last loop moves what is left (a share f of a loop). Of two loops, the second trails the
  // first by the NVLS step overhead and its own all-gather, f g half / (eff B): each tree's
  // pipeline gathers its own half (traced: 8 and 16 MiB on 2 B200 nodes, loops of 6 + 2 and
  // 12 + 4 MiB, end 13.6 and 15.2 us after the first; the (g + 1) f part of the one-pipeline
  // shape gave 15.6 and 19.1), or by its own send up, alone on its NIC, where that is longer
  // (4 and 8 H100 nodes at 16 MiB; the steady period there made 24 MiB on 4 B200 nodes 8% slow).
  // From three loops on, the last trails the one before by at least f steady periods, as the
  // simulation's last loop still waits for the one before.
  const double f = loops > 1 ? (size.count() - (loops - 1.0) * loop_bytes.count()) / loop_bytes.count() : 1.0;
  double piped = fill;
  if (loops == 2) piped = fill + std::max(g * f * half / (eff * bw) + overhead, o + f * half / wave);
  if (loops > 2) piped = std::max(pipe(loops - 1.0), pipe(loops - 2.0) + f * period);
  // The window: loop k's reduce-scatter at a root waits for loop k − ahead to have turned
  // round, so past `ahead` loops each group of `ahead` costs at least a round trip.
  const int windows = (loops - 1) / ahead;
  const double window = windows > 0 ? pipe((loops - 1) % ahead) + windows * trip : piped;
  t += std::max(piped, window);
  formula = fmt::format("base + start + max(pipe(L - 1), pipe((L - 1) mod slots) + ((L - 1) / slots) x round trip); "
                        "pipe(k) = fill + NVLink period + (k - 1) x period; fill = 2 (g part/(eff B) + wire) + trees "
                        "hop by hop; NVLink period = (g+1) part/(eff B) + NVLS overhead; period = max(NVLink period, "
                        "o + part/2 / net rate); g = {}, D = {}, L = {}",
                        g, depth, loops);
  return {sim::Seconds{t}, formula};
}

// Per rank and loop: the reduce-scatter, the all-gather, a send up and a send down in each of
// its two trees; each NVLS send may be followed by a step-overhead delay (half a send); and
// each rank's start delay.
double nvls_tree_plan_size(const Machine& machine, const Problem& problem, const Choice&) {
  const double n = static_cast<double>(problem.ranks.size());
  const double channels = std::max(1, machine.arch().nvls_channels);
  const int nodes = node_count(machine, problem);
  const int heads = static_cast<int>(problem.ranks.size()) / std::max(1, nodes);
  const double loops = pipeline_units(problem.size, nvls_tree_chunk(machine, problem.size, nodes, heads) *
                                                        (channels * std::max(1, heads)));
  return 8 * n * loops + n;
}

}  // namespace

extern const AlgorithmDescriptor kNvlsTreeAlgorithm{
    .id = Algorithm::nvls_tree,
    .name = "nvls_tree",
    .latency_row = Algorithm::nvls_tree,
    .collectives = {Collective::all_reduce},
    .unimplemented = "nvls_tree implements all_reduce only (as in NCCL)",
    .protocols = {Protocol::simple},
    // NCCL's default set; it refuses one node, as NCCL disables it there.
    .nccl = {Collective::all_reduce},
    .all = {Collective::all_reduce},
    .aggregates = {},
    .nvlink_step_at_launch = true,
    .why_not = nvls_tree_why_not,
    .expand = expand_nvls_tree,
    .closed_form = nvls_tree_closed_form,
    .plan_size = nvls_tree_plan_size,
};

}  // namespace wiresim::models
