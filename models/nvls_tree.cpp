// NVLSTree all_reduce: NVLS inside each node, a tree between nodes, as NCCL runs it across
// nodes on Hopper and later (NCCL disables it on one node).
//
// Each loop's chunk is cut into g parts, one per local GPU (g GPUs per node). Inside node q,
// GPU j reduces part j through the NVSwitch (NVLS reduce-scatter: one transfer over every
// local uplink and j's downlink). The g GPUs j of the nodes (one per rail: each uses its own
// NIC) then all-reduce part j over NCCL's double binary tree of nodes: each tree carries half
// the part, reduced up to the root and sent back down. Finally GPU j multicasts the result
// into its node (NVLS all-gather: j's uplink and every local downlink). Loops pipeline; a
// part's reduce-scatter runs at most `slots` loops ahead of its all-gather (NCCL_STEPS).
// Per GPU and loop the NVLink carries (g + 1) parts each way, each NIC about one part
// (two nodes) or two parts (interior of a deeper tree): the network sees 1/g of the data per
// GPU where a ring sends 2(n−1)/n of it, which is why NVLSTree beats the ring across nodes.
// Latency: NVLS's 25 us once (launch), NCCL's NVLSTree NET step (20.9 us) per tree hop.
//
// Closed form (w: one part per loop, L loops, D the trees' depth): base + the larger of
//   pipe(L − 1) = fill + NVLink period + (L − 2)·period, and
//   pipe((L − 1) mod S) + ⌊(L − 1)/S⌋·round trip   (the slot window, S = `slots` loops),
// the fill being the first loop's reduce-scatter, its trees hop by hop (tree_fill) and its
// all-gather. The NVLink period is (g+1)·w/(eff·B) plus the NVLS step overhead that follows
// each reduce-scatter and all-gather; the period is the slower of it and the network side,
// o + (w/2)/r with r the tree edges' share of the NICs by duty (duty_shared_rates). The second
// loop trails the first by the NVLink period alone: its network sends fall between the
// first's, spread over the trees' fill (seen in the simulation's trace at 4 and 8 nodes).
// Against the simulation (`coll all_reduce --topo topologies/cluster-h100-ib.yaml --set
// nodes=N --algo nvls_tree --proto simple --model analytic|simulate`): within 1% on 4 and 8
// nodes from 4 MiB to 1 GiB and on 2 nodes at 4, 16 MiB and 1 GiB; 2 nodes −3.9% at 64 MiB
// (each NIC carries one tree's reduce and the other's broadcast, which the period's duty
// sharing undercounts); 16 nodes −5% at 64-256 MiB (docs/models.md).
#include <algorithm>
#include <array>
#include <cmath>

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
  // The tree's network connections hold NCCL_STEPS chunks per channel (protocol slots):
  // that many loops may be in flight between a part's reduce-scatter and its all-gather.
  const int ahead = std::max(2, b.protocol().slots);
  std::vector<sim::NodeId> prev_rs = nvls_start_nodes(b, n), prev_ag = prev_rs;
  std::vector<std::vector<sim::NodeId>> gathered(n, std::vector<sim::NodeId>(ahead, kNoNode));
  std::vector<std::array<sim::NodeId, 2>> prev_up(n, {b.launch(), b.launch()});
  std::vector<std::array<std::vector<sim::NodeId>, 2>> prev_down(n);
  for (int q = 0; q < nodes; ++q)
    for (int j = 0; j < g; ++j)
      for (int w = 0; w < 2; ++w) {
        const int r = by_node[q][j];
        prev_down[r][w].assign(trees[j][w].children[r].size(), b.launch());
      }
  std::vector<sim::NodeId> reduced(n, kNoNode);
  std::vector<sim::NodeId> up_arrival(n, kNoNode);
  std::vector<std::array<sim::NodeId, 2>> have(n);
  std::vector<sim::LinkId> links;
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes part = chunk_size(total, loop_bytes, k) / static_cast<double>(g);
    const sim::Bytes half = part / 2.0;
    for (int j = 0; j < g; ++j) {
      for (int q = 0; q < nodes; ++q) {
        const int r = by_node[q][j];
        links = ups[q];
        links.push_back(port[r].down);
        const sim::NodeId slot = k >= ahead ? gathered[r][k % ahead] : kNoNode;
        const auto rs = b.send_links(links, r, r, part, {prev_rs[r], slot}, wire + b.reduction_time(part),
                                     rs_label, sim::BytesPerSec::unlimited(), efficiency);
        prev_rs[r] = overhead.count() > 0.0 ? b.delay(overhead, {rs.transfer}, rs_label, r) : rs.transfer;
        reduced[r] = rs.arrival;
      }
      for (int w = 0; w < 2; ++w) {
        const TreeShape& t = trees[j][w];
        std::vector<int> members;
        for (int q = 0; q < nodes; ++q) members.push_back(by_node[q][j]);
        std::stable_sort(members.begin(), members.end(), [&](int a, int c) { return t.depth[a] > t.depth[c]; });
        const std::uint32_t flow = static_cast<std::uint32_t>(w * n);
        for (int r : members) {
          if (t.parent[r] < 0) continue;
          const auto sent = b.send(r, t.parent[r], half, {prev_up[r][w], reduced[r]}, flow + r, up_label,
                                   sim::BytesPerSec::unlimited(), true);
          for (int child : t.children[r]) b.depend(up_arrival[child], sent.transfer);
          prev_up[r][w] = sent.transfer;
          up_arrival[r] = sent.arrival;
        }
        have[t.root][w] = b.delay(sim::Seconds{0.0}, {reduced[t.root]}, root_label, t.root);
        for (int child : t.children[t.root]) b.depend(up_arrival[child], have[t.root][w]);
        for (auto it = members.rbegin(); it != members.rend(); ++it) {
          const int r = *it;
          for (std::size_t ci = 0; ci < t.children[r].size(); ++ci) {
            const int child = t.children[r][ci];
            const auto sent = b.send(r, child, half, {prev_down[r][w][ci], have[r][w]}, flow + n + child,
                                     down_label, sim::BytesPerSec::unlimited());
            prev_down[r][w][ci] = sent.transfer;
            have[child][w] = sent.arrival;
          }
        }
      }
      for (int q = 0; q < nodes; ++q) {
        const int r = by_node[q][j];
        links = downs[q];
        links.insert(links.begin(), port[r].up);
        const auto ag = b.send_links(links, r, r, part, {prev_ag[r], have[r][0], have[r][1]}, wire, ag_label,
                                     sim::BytesPerSec::unlimited(), efficiency);
        prev_ag[r] = overhead.count() > 0.0 ? b.delay(overhead, {ag.transfer}, ag_label, r) : ag.transfer;
        gathered[r][k % ahead] = ag.transfer;
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
  const double red_part = b.reduction_time(sim::Bytes{part}).count();
  const double red_half = b.reduction_time(sim::Bytes{half}).count();
  // The trees' edges, and the fill's part in them: each tree hop by hop (tree_fill: a parent's
  // children send to it at once and it sends down to them at once, over shared NICs).
  std::vector<Edge> edges;
  int depth = 0;
  double hop = 0.0, trees_fill = 0.0;
  for (int j = 0; j < g; ++j) {
    std::vector<std::vector<int>> members;
    for (int q = 0; q < nodes; ++q) members.push_back({by_node[q][j]});
    for (int w = 0; w < 2; ++w) {
      const TreeShape tree = build_tree(members, w, n);
      trees_fill = std::max(trees_fill, tree_fill(b, tree, static_cast<std::uint32_t>(w * n),
                                                  static_cast<std::uint32_t>(w * n + n), half,
                                                  sim::BytesPerSec::unlimited(), red_half, nullptr, nullptr));
      for (int r = 0; r < n; ++r) {
        depth = std::max(depth, tree.depth[r]);
        if (tree.parent[r] < 0) continue;
        edges.push_back({r, tree.parent[r], static_cast<std::uint32_t>(w * n + r)});
        edges.push_back({tree.parent[r], r, static_cast<std::uint32_t>(w * n + n + r)});
        hop = std::max(hop, b.step_latency(r, tree.parent[r]).count());
      }
    }
  }
  // The fill: the first loop's reduce-scatter, its trees, its all-gather. The last all-gather
  // ends with its wire or, where longer, its NVLS step overhead (the expansion's delay after
  // every all-gather, the last one's included: its flags are synchronised too).
  const double fill = 2.0 * g * part / (eff * bw) + wire + std::max(wire, overhead) + red_part + trees_fill;
  // The NVLink side: each GPU's reduce-scatter and all-gather share its port ((g + 1) parts
  // each way per loop) and each is followed by the NVLS step overhead before the next loop's.
  const double nvlink = (g + 1.0) * part / (eff * bw) + overhead;
  // A part's reduce-scatter waits for its all-gather `ahead` loops back (the expansion's
  // slots): a loop's round trip (reduce-scatter, D hops up and D down, all-gather).
  const int ahead = std::max(2, b.protocol().slots);
  std::vector<double> rates;
  double floor = nvlink, trip = 0.0;
  for (int round = 0; round < 3; ++round) {
    // The network side: every tree edge sends half a part per period and pauses for the rest
    // (its per-send overhead, or waiting for the NVLink side or the window), leaving its NIC
    // to the other trees' edges (duty_shared_rates).
    rates = duty_shared_rates(b, edges, sim::BytesPerSec::unlimited(), half, std::vector<double>(edges.size(), o),
                              std::vector<int>(edges.size(), 0), Sharing::mean_concurrency, floor);
    const double send = o + half / *std::min_element(rates.begin(), rates.end());
    trip = 2.0 * ((g + 1.0) * part / (eff * bw) + wire) + red_part + depth * (2.0 * (send + hop) + red_half);
    floor = std::max(nvlink, trip / ahead);
  }
  const double net_rate = *std::min_element(rates.begin(), rates.end());
  const double period = std::max(nvlink, o + half / net_rate);
  // The second loop leaves the NVLink side one NVLink period after the first, and its network
  // sends fall between the first loop's, which are spread over the trees' fill (traced in the
  // simulation: loop 2 trails loop 1 by the NVLink period at 4 and 8 nodes); from the third on
  // the network's own period shows.
  const auto pipe = [&](double k) { return fill + std::min(k, 1.0) * nvlink + std::max(0.0, k - 1.0) * period; };
  // Two loops: the second moves what is left (a share f of a loop) and trails the first by the
  // step overhead and its own bytes (traced: 16 MiB on 2 B200 nodes is loops of 12 and 4 MiB,
  // and counting two full loops made the form 7.8% slow; now +0.4%). From three loops on the
  // last one is counted whole: scaling its network period by f made 32 MiB on 2 B200 nodes
  // 3.6% fast, where the simulation's last loop still waits for the one before.
  const double f = loops > 1 ? (size.count() - (loops - 1.0) * loop_bytes.count()) / loop_bytes.count() : 1.0;
  const double last = loops == 2 ? (g + 1.0) * f * part / (eff * bw) + overhead : period;
  const double piped = loops > 1 ? pipe(loops - 2.0) + last : fill;
  // The window: loop k's reduce-scatter waits for loop k − ahead's all-gather, so past
  // `ahead` loops each group of `ahead` costs at least a round trip (the recurrence's bound).
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
  return 7 * n * loops + n;
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
