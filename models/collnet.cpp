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
#include "models/sharp.h"

namespace wiresim::models {
namespace {

std::optional<std::string> collnet_why_not(const Machine& m, const Problem& problem, const NodeGroups& by_node) {
  if (by_node.size() < 2) return "collnet reduces in the network between nodes; inside one node use nvls or ring";
  if (!uniform_nodes(by_node)) return "collnet needs the same number of GPUs on every node";
  if (!m.p2p()) return "collnet writes over NVLink (P2P is off: NCCL_P2P_DISABLE=1)";
  return sharp_tree(m, problem, by_node, "collnet", nullptr);
}

struct CollnetShape {
  int nodes = 0, heads = 0, loops = 0;
  sim::Bytes chunk;   // per head and loop
};

CollnetShape shape_of(const NodeGroups& by_node, const Problem& problem, const Choice& choice,
                      const ProtocolParams& proto) {
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
  SharpTree tree;
  CollnetShape shape;
};

Setup setup(const PlanBuilder& b) {
  Setup out;
  out.by_node = ranks_by_node(b.machine(), b.problem());
  sharp_tree(b.machine(), b.problem(), out.by_node, "collnet", &out.tree);
  out.shape = shape_of(out.by_node, b.problem(), b.choice(), b.protocol());
  return out;
}

sim::Seconds switch_step(const PlanBuilder& b) {
  return b.machine().params().step_latency(Algorithm::collnet, Protocol::simple, TierClass::net);
}

void expand_collnet(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const auto [by_node, tree, s] = setup(b);
  const int N = s.nodes, G = s.heads;
  const sim::Bytes loop_bytes = s.chunk * static_cast<double>(G);
  const auto scatter_label = b.label("collnet scatter (to heads)");
  const auto gather_label = b.label("collnet gather (from heads)");
  const auto none = sim::BytesPerSec::unlimited();
  SharpStage net(b, tree, by_node, switch_step(b), "collnet");
  // Program order per connection: [node][from][to].
  std::vector<std::vector<std::vector<sim::NodeId>>> prev_scatter(
      N, std::vector<std::vector<sim::NodeId>>(G, std::vector<sim::NodeId>(G, b.launch())));
  auto prev_gather = prev_scatter;
  for (int k = 0; k < s.loops; ++k) {
    const sim::Bytes c = chunk_size(problem.size, loop_bytes, k) / static_cast<double>(G);
    for (int h = 0; h < G; ++h) {
      // Node i's sum of part h is in once every other GPU's write has arrived (and been reduced).
      std::vector<sim::NodeId> summed(N);
      for (int i = 0; i < N; ++i) {
        summed[i] = b.delay(sim::Seconds{0.0}, {}, scatter_label, by_node[i][h]);
        for (int g = 0; g < G; ++g) {
          if (g == h) continue;
          const auto w = b.send(by_node[i][g], by_node[i][h], c, {prev_scatter[i][g][h]}, 0, scatter_label, none, true);
          prev_scatter[i][g][h] = w.transfer;
          b.depend(w.arrival, summed[i]);
        }
      }
      const auto back = net.reduce(h, c, summed);
      for (int i = 0; i < N; ++i)
        for (int g = 0; g < G; ++g) {
          if (g == h) continue;
          const auto w = b.send(by_node[i][h], by_node[i][g], c, {back[i], prev_gather[i][h][g]}, 0, gather_label, none);
          prev_gather[i][h][g] = w.transfer;
        }
    }
  }
  plan.steps = 4;
  plan.loops = s.loops;
  plan.shape = fmt::format("collnet: {} heads a node, {} loop{} of {} a head, reduced at {}", G, s.loops,
                           s.loops > 1 ? "s" : "", sim::format_size(s.chunk),
                           tree.two_levels() ? "the leaves and a spine" : "the leaf");
}

Estimate collnet_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Problem& problem = b.problem();
  const auto [by_node, tree, s] = setup(b);
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
  // The network: the slowest link's chunk time paces the chunks; a chunk's way up and back.
  const SharpTimes net = sharp_times(b, tree, c);
  const double nic = net.stage;
  const double L = s.loops;
  // The last loop's share of a full one (its chunk is the rest).
  const double f = problem.size.count() / (G * c) - (L - 1.0);
  double t = launch.count() + net.way + switch_step(b).count();
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
    // The scatter the first gather meets: the one whose start is nearer, before it or after.
    double n1 = std::min(L, std::floor(first_gather / write_alone));
    if (n1 < L && first_gather - n1 * write_alone > (n1 + 1.0) * write_alone - first_gather) n1 += 1.0;
    const double last = o + f * a;
    double writes = 0.0;
    if (n1 >= L) {
      writes = (L - 1.0) * write_alone + last;
    } else {
      const double since = first_gather - n1 * write_alone;   // since the last scatter began
      const double phi = std::min({std::abs(since), write_alone - since, o});
      const double period = std::max(write_shared - phi, write_alone);
      // Met after its start (since < 0), the gather's own group sent alone for phi first.
      const double overlap = o + (1.0 + f) * a - (since < 0.0 ? 0.0 : phi);
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
  const CollnetShape s = shape_of(by_node, problem, choice, machine.params().protocol(choice.protocol));
  const double g = static_cast<double>(s.heads);
  return s.loops * s.nodes * g * (2.0 * g + 2.0);
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
