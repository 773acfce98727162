// CollNet Direct: all_reduce with the reduction done in the network (InfiniBand SHARP, through
// NCCL's SHARP plugin; NCCL_COLLNET_ENABLE=1), as NCCL runs it on NVSwitch nodes
// (src/device/all_reduce.h, runCollNetDirect; src/graph/connect.cc). Every GPU of a node is a
// head for one part of each loop: it gathers the node's contributions to its part (the other
// GPUs write them to it over NVLink, and it reduces them), sends the node's sum up through its
// NIC to the switch, which reduces the parts of every node and sends the result back down to
// each node's head, which writes it to the node's other GPUs. Per direction, each NIC carries
// S/g (g GPUs a node) and each GPU's NVLink port 2(g − 1)/g · S: the NIC bytes of an NVLS
// all_reduce with the network as the switch, but twice a ring's NVLink bytes per rank.
//
// Where it applies: a fabric that says `sharp: true` (topologies: every leaf and spine reduces),
// two nodes or more, the same GPU count a node, P2P on; Simple only (NCCL's tuner gives the
// other protocols no bandwidth for CollNet). What wiresim keeps of it: the reduction happens at
// the leaf each rail's NICs share, or, where a rail's nodes hang off several leaves, at each
// leaf and then at one spine over one cable from each leaf (a SHARP tree of two levels; deeper
// fabrics are refused). The chunk per head is the Simple step times the channels per head
// (channels / g, at least one), halved while fewer than 8 loops would run, down to 64 KiB (a
// simplification of NCCL's rule, src/enqueue.cc: it halves the chunk while fewer than its
// pipeline depth x 64 chunks per channel and head would run, down to 128 KiB, then while fewer
// than depth x 8, down to 32 KiB). The switches' reduction costs NCCL's CollNet Direct NET step
// latency (31 us, src/graph/tuning.cc) once per chunk, pipelined; its NVLink step is the Simple
// 3.7 us. Not validated: no shipped measurement ran CollNet.
//
// Closed form: base + the first gather's start (chunk 0 written to its head, reduced, up
// through the NIC (and the leaf's cable to the spine), reduced, down) + the writes from then on:
// the scatters that ran alone before it (n1, o + a each, a = one group's bytes over the port
// rate), then a scatter and a gather at once per period, o + max(a, 2a − φ), then the last n1
// gathers alone; or, where the network is slower, a chunk per its slowest stage. φ is the
// offset at which the first gather met a scatter (at most o): the simulation's two groups keep
// it, so for φ of each period one group sends alone (traced: 0.9 us at 1.5 MiB chunks, 2.7 us
// at 192 KiB). The last loop counts by its share of a full one. Equal to the simulation at
// 1 KiB–1 MiB and from 100 MiB on (HGX H100 and B200 nodes, 2–40 nodes); off by up to 3.0 %
// at 4–64 MiB on H100, 0.9 % at 100 MiB on B200 (tests/models/collnet_test.cpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

namespace wiresim::models {
namespace {

// Each head's links up to its leaf (the first network switch on its way to the same GPU of
// another node) and back down from it; where a rail's nodes hang off several leaves, the
// spine that joins them (the first on the way from the first leaf to the second) and each
// leaf's cable up to it and back: a SHARP tree of two levels.
struct Rails {
  std::vector<std::vector<std::vector<sim::LinkId>>> up, down;   // [node][head]
  std::vector<std::vector<int>> leaf_of;                          // [head][node]: index into leaves[head]
  std::vector<std::vector<topo::DeviceId>> leaves;                // [head]
  std::vector<std::vector<std::pair<sim::LinkId, sim::LinkId>>> to_spine;   // [head][leaf]: up, down
};

std::optional<std::string> rails(const Machine& m, const Problem& problem, const NodeGroups& by_node, Rails* out) {
  const int nodes = static_cast<int>(by_node.size());
  const int heads = static_cast<int>(by_node.front().size());
  Rails r;
  r.up.assign(nodes, std::vector<std::vector<sim::LinkId>>(heads));
  r.down = r.up;
  r.leaf_of.assign(heads, std::vector<int>(nodes, 0));
  r.leaves.assign(heads, {});
  r.to_spine.assign(heads, {});
  const auto& g = m.graph();
  const auto is_switch = [&](topo::DeviceId d) { return g.device(d).kind == topo::DeviceKind::network_switch; };
  const auto no_sharp = [&](topo::DeviceId sw) {
    return fmt::format("collnet needs in-network reduction (fabric: {{sharp: true}}), and {} has none",
                       g.device(sw).name);
  };
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < nodes; ++i) {
      const topo::DeviceId self = problem.ranks[by_node[i][h]];
      const topo::DeviceId other = problem.ranks[by_node[i == 0 ? 1 : 0][h]];
      const auto there = m.route(self, other, 0), back = m.route(other, self, 0);
      const auto top = std::find_if(there.begin(), there.end(), [&](sim::LinkId l) { return is_switch(g.link(l).to); });
      if (top == there.end())
        return fmt::format("collnet needs a network switch between nodes, and {} reaches {} without one",
                           g.device(self).name, g.device(other).name);
      const topo::DeviceId leaf = g.link(*top).to;
      if (!g.device(leaf).multicast) return no_sharp(leaf);
      auto& known = r.leaves[h];
      const auto at = std::find(known.begin(), known.end(), leaf);
      r.leaf_of[h][i] = static_cast<int>(at - known.begin());
      if (at == known.end()) known.push_back(leaf);
      r.up[i][h].assign(there.begin(), top + 1);
      const auto from = std::find_if(back.begin(), back.end(), [&](sim::LinkId l) { return g.link(l).from == leaf; });
      r.down[i][h].assign(from, back.end());
    }
    if (r.leaves[h].size() < 2) continue;
    // The spine: where the way from a node of the first leaf to one of the second turns down.
    const auto second = std::find(r.leaf_of[h].begin(), r.leaf_of[h].end(), 1) - r.leaf_of[h].begin();
    const auto across = m.route(problem.ranks[by_node[0][h]], problem.ranks[by_node[second][h]], 0);
    const auto up = std::find_if(across.begin(), across.end(), [&](sim::LinkId l) {
      return g.link(l).from == r.leaves[h][0] && is_switch(g.link(l).to);
    });
    if (up == across.end()) return fmt::format("collnet found no switch above {}", g.device(r.leaves[h][0]).name);
    const topo::DeviceId spine = g.link(*up).to;
    if (!g.device(spine).multicast) return no_sharp(spine);
    for (const topo::DeviceId leaf : r.leaves[h]) {
      const auto link = [&](topo::DeviceId a, topo::DeviceId b) -> std::optional<sim::LinkId> {
        for (const auto l : g.out_links(a))
          if (g.link(l).to == b) return l;
        return std::nullopt;
      };
      const auto u = link(leaf, spine), d = link(spine, leaf);
      if (!u || !d)
        return fmt::format("collnet reduces over one spine per rail, and {} has no cable to {} (a deeper SHARP "
                           "tree is not modelled)",
                           g.device(leaf).name, g.device(spine).name);
      r.to_spine[h].push_back({*u, *d});
    }
  }
  if (out) *out = std::move(r);
  return std::nullopt;
}

std::optional<std::string> collnet_why_not(const Machine& m, const Problem& problem, const NodeGroups& by_node) {
  if (by_node.size() < 2) return "collnet reduces in the network between nodes; inside one node use nvls or ring";
  if (!uniform_nodes(by_node)) return "collnet needs the same number of GPUs on every node";
  if (!m.p2p()) return "collnet writes over NVLink (P2P is off: NCCL_P2P_DISABLE=1)";
  return rails(m, problem, by_node, nullptr);
}

struct CollnetShape {
  int nodes = 0, heads = 0, loops = 0;
  sim::Bytes chunk;   // per head and loop
};

CollnetShape shape_of(const Machine& m, const Problem& problem, const Choice& choice, const ProtocolParams& proto) {
  const auto by_node = ranks_by_node(m, problem);
  CollnetShape s;
  s.nodes = static_cast<int>(by_node.size());
  s.heads = static_cast<int>(by_node.front().size());
  const double per_head = std::max(1, choice.channels / std::max(1, s.heads));
  double chunk = proto.step.count() * proto.payload * per_head;
  const double bytes = problem.size.count();
  while (chunk > 65536.0 && bytes < 8.0 * s.heads * chunk) chunk /= 2.0;
  s.chunk = sim::Bytes{chunk};
  s.loops = chunk_count(problem.size, s.chunk * static_cast<double>(s.heads));
  return s;
}

// What the expansion and the closed form both start from.
struct Setup {
  NodeGroups by_node;
  Rails rails;
  CollnetShape shape;
};

Setup setup(const PlanBuilder& b) {
  Setup out;
  out.by_node = ranks_by_node(b.machine(), b.problem());
  rails(b.machine(), b.problem(), out.by_node, &out.rails);
  out.shape = shape_of(b.machine(), b.problem(), b.choice(), b.protocol());
  return out;
}

sim::Seconds switch_step(const PlanBuilder& b) {
  return b.machine().params().step_latency(Algorithm::collnet, Protocol::simple, TierClass::net);
}

void expand_collnet(PlanBuilder& b, Plan& plan) {
  const Machine& m = b.machine();
  const Problem& problem = b.problem();
  const auto [by_node, r, s] = setup(b);
  const int N = s.nodes, G = s.heads;
  const sim::Bytes loop_bytes = s.chunk * static_cast<double>(G);
  const auto scatter_label = b.label("collnet scatter (to heads)");
  const auto up_label = b.label("collnet up (to switch)");
  const auto switch_label = b.label("collnet switch reduction");
  const auto down_label = b.label("collnet down (from switch)");
  const auto gather_label = b.label("collnet gather (from heads)");
  const auto none = sim::BytesPerSec::unlimited();
  const sim::Seconds reduce_step = switch_step(b);
  // Program order per connection: [node][from][to] for the writes, [node][head] for the NIC.
  std::vector<std::vector<std::vector<sim::NodeId>>> prev_scatter(
      N, std::vector<std::vector<sim::NodeId>>(G, std::vector<sim::NodeId>(G, b.launch())));
  auto prev_gather = prev_scatter;
  std::vector<std::vector<sim::NodeId>> prev_up(N, std::vector<sim::NodeId>(G, b.launch())), prev_down = prev_up;
  std::vector<std::vector<sim::NodeId>> up_arrival(N, std::vector<sim::NodeId>(G));
  std::vector<std::vector<sim::NodeId>> prev_spine_up(G), prev_spine_down(G);
  for (int h = 0; h < G; ++h) prev_spine_up[h] = prev_spine_down[h] = std::vector<sim::NodeId>(r.to_spine[h].size(), b.launch());
  for (int k = 0; k < s.loops; ++k) {
    const sim::Bytes c = chunk_size(problem.size, loop_bytes, k) / static_cast<double>(G);
    for (int i = 0; i < N; ++i)
      for (int h = 0; h < G; ++h) {
        const int head = by_node[i][h];
        // The node's sum of part h is in once every other GPU's write has arrived (and been reduced).
        const sim::NodeId summed = b.delay(sim::Seconds{0.0}, {prev_up[i][h]}, scatter_label, head);
        for (int g = 0; g < G; ++g) {
          if (g == h) continue;
          const auto w = b.send(by_node[i][g], head, c, {prev_scatter[i][g][h]}, 0, scatter_label, none, true);
          prev_scatter[i][g][h] = w.transfer;
          b.depend(w.arrival, summed);
        }
        const auto& links = r.up[i][h];
        const auto up = b.send_links(links, head, head, c, {summed}, m.wire_latency(links), up_label, none);
        prev_up[i][h] = up.transfer;
        up_arrival[i][h] = up.arrival;
      }
    for (int h = 0; h < G; ++h) {
      // The sum: at the leaf, or at the spine over the leaves' sums.
      const sim::NodeId reduced = b.delay(reduce_step, {}, switch_label, by_node[0][h]);
      std::vector<sim::NodeId> from_leaf(N, reduced);
      if (r.to_spine[h].empty()) {
        for (int i = 0; i < N; ++i) b.depend(up_arrival[i][h], reduced);
      } else {
        const int leaves = static_cast<int>(r.to_spine[h].size());
        std::vector<sim::NodeId> joined(leaves);
        for (int q = 0; q < leaves; ++q) joined[q] = b.delay(sim::Seconds{0.0}, {}, up_label, by_node[0][h]);
        for (int i = 0; i < N; ++i) b.depend(up_arrival[i][h], joined[r.leaf_of[h][i]]);
        std::vector<sim::NodeId> down_at(leaves);
        for (int q = 0; q < leaves; ++q) {
          const sim::LinkId link = r.to_spine[h][q].first;
          const auto up = b.send_links({&link, 1}, by_node[0][h], by_node[0][h], c, {joined[q], prev_spine_up[h][q]},
                                       m.links()[link].latency, up_label, none);
          prev_spine_up[h][q] = up.transfer;
          b.depend(up.arrival, reduced);
        }
        for (int q = 0; q < leaves; ++q) {
          const sim::LinkId link = r.to_spine[h][q].second;
          const auto down = b.send_links({&link, 1}, by_node[0][h], by_node[0][h], c,
                                         {reduced, prev_spine_down[h][q]}, m.links()[link].latency, down_label, none);
          prev_spine_down[h][q] = down.transfer;
          down_at[q] = down.arrival;
        }
        for (int i = 0; i < N; ++i) from_leaf[i] = down_at[r.leaf_of[h][i]];
      }
      for (int i = 0; i < N; ++i) {
        const int head = by_node[i][h];
        const auto& links = r.down[i][h];
        const auto down = b.send_links(links, head, head, c, {from_leaf[i], prev_down[i][h]}, m.wire_latency(links),
                                       down_label, none);
        prev_down[i][h] = down.transfer;
        for (int g = 0; g < G; ++g) {
          if (g == h) continue;
          const auto w = b.send(head, by_node[i][g], c, {down.arrival, prev_gather[i][h][g]}, 0, gather_label, none);
          prev_gather[i][h][g] = w.transfer;
        }
      }
    }
  }
  plan.steps = 4;
  plan.loops = s.loops;
  const bool two_levels = std::any_of(r.to_spine.begin(), r.to_spine.end(), [](const auto& v) { return !v.empty(); });
  plan.shape = fmt::format("collnet: {} heads a node, {} loop{} of {} a head, reduced at {}", G, s.loops,
                           s.loops > 1 ? "s" : "", sim::format_size(s.chunk),
                           two_levels ? "the leaves and a spine" : "the leaf");
}

Estimate collnet_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& m = b.machine();
  const Problem& problem = b.problem();
  const auto [by_node, r, s] = setup(b);
  const int G = s.heads;
  const double o = b.protocol().overhead.count();
  // The full chunk (the last loop's is the rest: its share f below).
  const double c = std::min(s.chunk.count(), problem.size.count() / G);
  // One node's writes: every GPU to every other (scatter), and the same again (gather).
  std::vector<Edge> writes;
  for (int g = 0; g < G; ++g)
    for (int h = 0; h < G; ++h)
      if (g != h) writes.push_back({by_node[0][g], by_node[0][h], 0});
  std::vector<Edge> both = writes;
  both.insert(both.end(), writes.begin(), writes.end());
  const auto slowest = [&](const std::vector<Edge>& edges) {
    if (edges.empty()) return 0.0;
    const auto rates = shared_rates(b, edges, sim::BytesPerSec::unlimited());
    return o + c / *std::min_element(rates.begin(), rates.end());
  };
  // A node's scatter and gather writes at once, each paying its overhead in full: o + 2a a
  // period. A loop's writes of one group start together, so only the other group can fill a
  // group's overhead (the phase correction below).
  const double write_alone = slowest(writes), write_shared = slowest(both);
  const double lambda = b.step_latency(by_node[0][0], by_node[0][G > 1 ? 1 : 0]).count();
  // The NIC stage: the slowest head's way up and down (payload over its slowest link).
  double nic = 0.0, wire = 0.0;
  for (std::size_t i = 0; i < r.up.size(); ++i)
    for (int h = 0; h < G; ++h) {
      double rate = INFINITY;
      for (auto l : r.up[i][h]) rate = std::min(rate, m.links()[l].capacity.count());
      for (auto l : r.down[i][h]) rate = std::min(rate, m.links()[l].capacity.count());
      nic = std::max(nic, c / (rate * b.protocol().payload));
      wire = std::max(wire, (m.wire_latency(r.up[i][h]) + m.wire_latency(r.down[i][h])).count());
    }
  // Over a spine: each leaf's cable up and down, a stage of its own.
  double spine = 0.0, spine_wire = 0.0;
  for (const auto& cables : r.to_spine)
    for (const auto& [up, down] : cables) {
      const double rate = std::min(m.links()[up].capacity.count(), m.links()[down].capacity.count());
      spine = std::max(spine, c / (rate * b.protocol().payload));
      spine_wire = std::max(spine_wire, (m.links()[up].latency + m.links()[down].latency).count());
    }
  const double L = s.loops;
  // The last loop's share of a full one (its chunk is the rest).
  const double f = problem.size.count() / (G * c) - (L - 1.0);
  double t = launch.count() + 2.0 * (nic + spine) + wire + spine_wire + switch_step(b).count();
  nic = std::max(nic, spine);   // the network's slowest stage paces the chunks
  if (G > 1) {
    // The first gather starts once chunk 0 is written in, reduced, up, reduced, and down
    // (first_gather). Until then the scatters run alone, a period `alone` each: n1 of them.
    // From then on a scatter and a gather write at once, each period o + 2a (a: one group's
    // bytes at the port's rate) less the part of one group's overhead the other fills: the
    // groups keep the offset phi at which the first gather met a scatter (the nearer scatter
    // start, before or after), so phi of each period has one group sending alone. After the last
    // (partial) scatter, the last n1 gathers run alone. Where the network is slower, it paces
    // the gathers: one a stage time, the last its share of one.
    const double first_gather = write_alone + lambda + b.reduction_time(sim::Bytes{c}).count() + t - launch.count();
    const double a = write_alone - o;
    const double n1 = std::min(L, std::floor(first_gather / write_alone));
    const double last = o + f * a;
    double writes = 0.0;
    if (n1 >= L) {
      writes = (L - 1.0) * write_alone + last;
    } else {
      const double since = first_gather - n1 * write_alone;   // since the last scatter began
      const double phi = std::min({since, write_alone - since, o});
      const double period = std::max(write_shared - phi, write_alone);
      const double overlap = o + (1.0 + f) * a - phi;
      writes = (L - 1.0 - n1) * period + overlap + (n1 - 1.0) * write_alone + last;
    }
    t = launch.count() + first_gather + std::max(writes, (L - 2.0 + f) * nic + last) + lambda;
  } else {
    t += (L - 2.0 + f) * nic;
  }
  return {sim::Seconds{t},
          fmt::format("base + first gather's start (writes in, up, switch, down) + max(scatters alone, scatter and "
                      "gather per period, gathers alone; L chunks at the network's slowest stage); L = {}",
                      s.loops)};
}

// Per loop, node and head: 2(g − 1) writes, a send up and one down, and the delays.
double collnet_plan_size(const Machine& machine, const Problem& problem, const Choice& choice) {
  const auto by_node = ranks_by_node(machine, problem);
  const double nodes = static_cast<double>(by_node.size());
  const double g = static_cast<double>(by_node.front().size());
  const ProtocolParams& proto = machine.params().protocol(choice.protocol);
  const double per_head = std::max(1.0, std::floor(choice.channels / std::max(1.0, g)));
  const sim::Bytes chunk = proto.step * (proto.payload * per_head * g);
  return pipeline_units(problem.size, chunk) * nodes * g * (2.0 * g + 2.0);
}

}  // namespace

extern const AlgorithmDescriptor kCollnetAlgorithm{
    .id = Algorithm::collnet,
    .name = "collnet",
    .latency_row = Algorithm::collnet,
    .collectives = {Collective::all_reduce},
    .unimplemented = "collnet implements all_reduce only (CollNet Direct)",
    .protocols = {Protocol::simple},
    .nccl = {Collective::all_reduce},
    .all = {Collective::all_reduce},
    .aggregates = {},
    .nvlink_step_at_launch = false,
    .why_not = collnet_why_not,
    .expand = expand_collnet,
    .closed_form = collnet_closed_form,
    .plan_size = collnet_plan_size,
};

}  // namespace wiresim::models
