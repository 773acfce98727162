// NVLS: NVLink SHARP on NVSwitch (Hopper and later), as NCCL runs it inside one domain, and
// across nodes where the network reduces too (below).
//
// The buffer is cut into n parts, one per rank. reduce-scatter: rank j loads part j through
// the switch with an in-switch reduction — one transfer that reads part j over every GPU's
// uplink and delivers the sum over j's downlink. all-gather: rank j stores its part once to
// a multicast address — one transfer over j's uplink and every GPU's downlink. all_reduce
// does both per chunk, pipelined. Every transfer is a multicast tree served at one rate;
// NCCL's NVLS efficiency (0.85 on Hopper) scales the switch's throughput.
//
// Closed form (w: one part's wire bytes per loop, L loops, B the slowest switch port, λ the
// wire latency up and down, τ the step overhead, d = λ + the reduction): all_reduce base +
// start + fill + (L−1)·period, where the period is n·w/B + τ when the two streams alternate and
// (n+1)·w/B + τ − (τ − d)/n when they overlap (docs/models.md); all_gather / reduce_scatter
// base + start + n·L·w/B + (L−1)·τ + max(last arrival, τ). Single-phase agrees with the
// simulation to 0.1%; all_reduce to 0.2% on HGX H100 and B200 at the test's sizes
// (alpha_beta_test), within 1% from 3 loops on, 2.2% at 2 loops (the formula spreads the bytes
// evenly).
//
// Across nodes (all_reduce only), as NCCL runs NVLS with CollNet (tuning.cc enables NVLS for
// nNodes > 1 only with CollNet; all_reduce.h: scatter, reduce and send to the network, receive
// and multicast, gather): the parts are per node, one per GPU; each part's reduce-scatter is in
// its node, then its owner sends it up its NIC and gets every node's sum back (sharp.h; the
// fabric must reduce: `sharp: true`), then multicasts it to its node. The network step costs
// NCCL's NVLS NET latency (18 us) once per chunk, pipelined; a part's reduce-scatter may run 8
// loops ahead of its all-gather there (NCCL_STEPS), not 2. Closed form:
// nvls_across_closed_form below; within 2.8 % of the simulation (tests/models/nvls_sharp_test.cpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"
#include "models/sharp.h"

namespace wiresim::models {
namespace {

// The chunk per channel and head for a message of `size`, as NCCL cuts it (calcCollChunking
// in src/enqueue.cc): nvls_chunk (128 KiB), and smaller for messages that would not fill the
// channels x heads in flight: 64/32/16 KiB below 64/8/2 x (channels x heads x chunk).
sim::Bytes nvls_chunk(const Machine& machine, sim::Bytes size, int heads) {
  double chunk = machine.params().nvls_chunk.count();
  const double ops = static_cast<double>(machine.arch().nvls_channels) * std::max(1, heads);
  const double bytes = size.count();
  const auto shrink = [&](double times, double to) {
    if (bytes < times * ops * chunk && chunk > to) chunk = to;
  };
  shrink(64, 65536);
  shrink(8, 32768);
  shrink(2, 16384);
  return sim::Bytes{chunk};
}

std::optional<std::string> nvls_why_not(const Machine& machine, const Problem& problem, const NodeGroups& by_node) {
  if (!machine.p2p()) return "nvls needs P2P over NVLink (P2P is off: NCCL_P2P_DISABLE=1)";
  if (machine.arch().nvls_efficiency <= 0.0)
    return fmt::format("nvls needs NVLink SHARP (Hopper or later); these GPUs are '{}'", machine.arch_name());
  if (by_node.size() > 1 && !uniform_nodes(by_node)) return "nvls across nodes needs the same number of GPUs on every node";
  for (const auto& node : by_node) {
    std::optional<topo::DeviceId> sw;
    for (int r : node) {
      const auto port = machine.nvls_port(problem.ranks[r]);
      if (!port)
        return fmt::format("nvls needs an NVSwitch with multicast (multicast: true), and {} has none",
                           machine.graph().device(problem.ranks[r]).name);
      if (sw && *sw != port->nvswitch) return "nvls needs all GPUs of a node on the same NVSwitch fabric";
      sw = port->nvswitch;
    }
  }
  // Across nodes NCCL runs NVLS only with CollNet: the network reduces each part (sharp.h).
  if (by_node.size() > 1 && problem.op != Collective::all_reduce)
    return "nvls runs all_reduce across nodes (all_gather and reduce_scatter within one node)";
  if (by_node.size() > 1)
    if (auto why = sharp_tree(machine, problem, by_node, "nvls across nodes", nullptr))
      return *why + "; else use nvls_tree, ring or tree";
  return std::nullopt;
}

// One part's all-gather: the owner stores it once to the multicast address, over its uplink and
// every downlink of its node, once `ready`; `prev` (its stream's last step) and `gathered` (the
// buffer slot the reduce-scatter waits for) move on.
void all_gather_part(PlanBuilder& b, sim::LinkId up, const std::vector<sim::LinkId>& downs, int rank, sim::Bytes part,
                     sim::NodeId ready, sim::NodeId& prev, sim::NodeId& gathered, sim::Seconds wire, sim::LabelId label,
                     double efficiency, sim::Seconds overhead) {
  std::vector<sim::LinkId> links{up};
  links.insert(links.end(), downs.begin(), downs.end());
  const auto ag = b.send_links(links, rank, rank, part, {prev, ready}, wire, label, sim::BytesPerSec::unlimited(),
                               efficiency);
  prev = overhead.count() > 0.0 ? b.delay(overhead, {ag.transfer}, label, rank) : ag.transfer;
  gathered = ag.transfer;
}

void expand_nvls(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const Machine& m = b.machine();
  const auto by_node = ranks_by_node(m, problem);
  const int N = static_cast<int>(by_node.size());
  const int g = static_cast<int>(by_node.front().size());   // parts a loop: one per GPU of a node
  const int channels = m.arch().nvls_channels;
  const double efficiency = m.arch().nvls_efficiency;
  std::vector<std::vector<Machine::SwitchPort>> ports(N);
  std::vector<std::vector<sim::LinkId>> all_up(N), all_down(N);
  sim::Seconds wire{0.0};
  for (int i = 0; i < N; ++i)
    for (int r : by_node[i]) {
      const auto p = *m.nvls_port(problem.ranks[r]);
      ports[i].push_back(p);
      all_up[i].push_back(p.up);
      all_down[i].push_back(p.down);
      wire = std::max(wire, m.links()[p.up].latency + m.links()[p.down].latency);
    }
  // A loop moves one chunk per channel and head (NCCL: loopCount = nHeads x chunkSize).
  const sim::Bytes loop_bytes = nvls_chunk(m, problem.size, g) * (static_cast<double>(channels) * g);
  const sim::Bytes total = problem.size;
  const int loops = chunk_count(total, loop_bytes);
  const bool reduce_scatter = problem.op != Collective::all_gather;
  const bool all_gather = problem.op != Collective::reduce_scatter;
  const auto rs_label = b.label("nvls reduce-scatter");
  const auto ag_label = b.label("nvls all-gather");
  const sim::Seconds overhead = m.arch().nvls_step_overhead;
  const auto starts = nvls_start_nodes(b, static_cast<int>(problem.ranks.size()));
  std::vector<std::vector<sim::NodeId>> prev_rs(N), prev_ag(N);
  for (int i = 0; i < N; ++i)
    for (int r : by_node[i]) prev_rs[i].push_back(starts[r]);
  prev_ag = prev_rs;
  // A part's reduce-scatter may run at most `ahead` loops ahead of its all-gather: the
  // reduced chunk waits in a buffer until it is multicast (NCCL's NVLS buffer holds a few);
  // across nodes it waits for the network in between, whose connection has NCCL_STEPS (8)
  // slots (src/include/device.h).
  const int ahead = N > 1 ? 8 : 2;
  std::vector<std::vector<std::vector<sim::NodeId>>> gathered(
      N, std::vector<std::vector<sim::NodeId>>(g, std::vector<sim::NodeId>(ahead, kNoNode)));
  std::optional<SharpTree> tree;
  std::optional<SharpStage> net;
  if (N > 1) {
    tree.emplace();
    sharp_tree(m, problem, by_node, "nvls", &*tree);
    net.emplace(b, *tree, by_node, m.params().step_latency(Algorithm::nvls, Protocol::simple, TierClass::net), "nvls");
  }
  std::vector<sim::LinkId> links;
  std::vector<sim::NodeId> ready(N, kNoNode);
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes part = chunk_size(total, loop_bytes, k) / static_cast<double>(g);
    for (int j = 0; j < g; ++j) {
      for (int i = 0; i < N; ++i) {
        const int rank = by_node[i][j];
        ready[i] = kNoNode;
        if (reduce_scatter) {
          links = all_up[i];
          links.push_back(ports[i][j].down);
          const sim::NodeId slot = all_gather && k >= ahead ? gathered[i][j][k % ahead] : kNoNode;
          const auto rs = b.send_links(links, rank, rank, part, {prev_rs[i][j], slot}, wire + b.reduction_time(part),
                                       rs_label, sim::BytesPerSec::unlimited(), efficiency);
          prev_rs[i][j] = overhead.count() > 0.0 ? b.delay(overhead, {rs.transfer}, rs_label, rank) : rs.transfer;
          ready[i] = rs.arrival;
        }
        if (N == 1 && all_gather) {
          all_gather_part(b, ports[i][j].up, all_down[i], rank, part, ready[i], prev_ag[i][j], gathered[i][j][k % ahead],
                          wire, ag_label, efficiency, overhead);
        }
      }
      if (N == 1) continue;
      // Across nodes (all_reduce): the network sums each node's part, then each node multicasts it.
      const auto back = net->reduce(j, part, ready);
      for (int i = 0; i < N; ++i)
        all_gather_part(b, ports[i][j].up, all_down[i], by_node[i][j], part, back[i], prev_ag[i][j],
                        gathered[i][j][k % ahead], wire, ag_label, efficiency, overhead);
    }
  }
  plan.steps = (reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0) + (N > 1 ? 2 : 0);
  plan.loops = loops;
  plan.shape = fmt::format("nvls x {} channels, {} loop{} of {}{}", channels, loops, loops > 1 ? "s" : "",
                           sim::format_size(loop_bytes) + (N > 1 ? " a node" : ""),
                           N > 1 ? (tree->two_levels() ? ", each part reduced at the leaves and a spine"
                                                        : ", each part reduced at the leaf")
                                 : "");
}

// Across nodes (all_reduce): per loop, a node's g reduce-scatters (each uplink carries g parts),
// each part up the network and back (sharp.h), and g all-gathers (each downlink carries g). The
// reduce-scatters run alone until the first part is back (n1 loops, g·w/B + τ each); then each
// loop's uplinks and downlinks carry g + 1 parts ((g + 1)·w/B + τ a loop, the two streams in
// step, as the simulation's trace shows them) until the reduce-scatters are done; then the last
// n1 all-gathers run alone. Where the network's slowest link is slower than that, it paces the
// all-gathers. The last loop counts by its share f of a full one.
Estimate nvls_across_closed_form(PlanBuilder& b, sim::Seconds launch, const NodeGroups& by_node) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const int g = static_cast<int>(by_node.front().size());
  const int channels = machine.arch().nvls_channels;
  const sim::Bytes loop_bytes = nvls_chunk(machine, problem.size, g) * (static_cast<double>(channels) * g);
  const double L = chunk_count(problem.size, loop_bytes);
  const double f = problem.size.count() / loop_bytes.count() - (L - 1.0);
  const double eff = b.protocol().payload * machine.arch().nvls_efficiency;
  const auto [bw, wire] = switch_ports(machine, problem.ranks);
  const double part = std::min(loop_bytes.count(), problem.size.count()) / g;   // a full loop's part, payload
  const double w = part / eff;
  const double tau = machine.arch().nvls_step_overhead.count();
  SharpTree tree;
  sharp_tree(machine, problem, by_node, "nvls", &tree);
  const SharpTimes net = sharp_times(b, tree, part);
  const double step = machine.params().step_latency(Algorithm::nvls, Protocol::simple, TierClass::net).count();
  const double alone = g * w / bw + tau, shared = (g + 1.0) * w / bw + tau;
  const double start = launch.count() + machine.arch().nvls_start.count();
  const double first_gather = g * w / bw + wire + b.reduction_time(sim::Bytes{part}).count() + net.way + step;
  const double n1 = std::min(L, std::floor(first_gather / alone));
  const double last = f * g * w / bw + tau;
  const double gathers = n1 >= L ? (L - 1.0) * alone + last
                                  : (L - n1 - 1.0) * shared + ((g + f) * w / bw + tau) + (n1 - 1.0) * alone + last;
  const double t = start + first_gather + std::max(gathers, (L - 2.0 + f) * net.stage + last);
  return {sim::Seconds{t},
          fmt::format("start + first gather (reduce-scatter, network up and down) + reduce-scatters alone, both "
                      "streams (g+1 parts a port), all-gathers alone; or L chunks at the network's pace; L = {}",
                      L)};
}

Estimate nvls_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
  const auto by_node = ranks_by_node(machine, problem);
  if (by_node.size() > 1) return nvls_across_closed_form(b, launch, by_node);
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  double t = launch.count() + machine.arch().nvls_start.count();
  std::string formula;
  const int channels = machine.arch().nvls_channels;
  const sim::Bytes loop_bytes = nvls_chunk(machine, size, n) * (static_cast<double>(channels) * n);
  const int loops = chunk_count(size, loop_bytes);
  const double eff = b.protocol().payload * machine.arch().nvls_efficiency;
  const auto [bw, wire] = switch_ports(machine, problem.ranks);
  // Every loop moves one part per rank; a part's wire bytes are its share over the efficiency.
  const double w = size.count() / loops / n / eff;
  if (problem.op == Collective::all_reduce) {
    // The first loop: every part's reduce-scatter (n parts through each uplink), its wire and
    // reduction, its all-gather (n parts through each downlink); the last all-gather ends with
    // its wire or, where longer, its step overhead.
    const double tau = machine.arch().nvls_step_overhead.count();
    const double red = b.reduction_time(sim::Bytes{w * eff}).count();
    const double fill = wire + red + 2.0 * n * w / bw + std::max(wire, tau);
    // Each further loop: the two streams' overlap (nvls_period; docs/models.md).
    const double period = nvls_period(n, w / bw, tau, wire + red);
    t += fill + (loops - 1.0) * period;
    formula = "start + fill + (L-1) x max(n part/B + tau, (n+1) part/B + tau + (d - tau) x ((n-1)/n if d > tau, "
              "else 1/n)); fill = wire + reduction + 2n part/B + max(wire, tau); d = wire + reduction";
  } else {
    // The last loop's arrival (wire, plus the reduction) overlaps its step overhead.
    const double tau = machine.arch().nvls_step_overhead.count();
    const double last = wire + (problem.op == Collective::reduce_scatter ? b.reduction_time(sim::Bytes{w * eff}).count() : 0.0);
    t += n * loops * w / bw + (loops - 1.0) * tau + std::max(last, tau);
    formula = "start + n L x part/(eff x B) + (L-1) x step overhead + max(last arrival, step overhead)";
  }
  return {sim::Seconds{t}, formula};
}

// Per rank and loop: the reduce-scatter and the all-gather, each send possibly followed by a
// step-overhead delay (counted as half a send); and each rank's start delay.
double nvls_plan_size(const Machine& machine, const Problem& problem, const Choice&) {
  const double n = static_cast<double>(problem.ranks.size());
  const double channels = std::max(1, machine.arch().nvls_channels);
  const int nodes = node_count(machine, problem);
  const int heads = static_cast<int>(problem.ranks.size()) / std::max(1, nodes);
  const double loops = pipeline_units(problem.size, nvls_chunk(machine, problem.size, heads) *
                                                        (channels * std::max(1, heads)));
  // Per loop: each rank's reduce-scatter and all-gather (and their pauses); across nodes also
  // each part up the network and back from every node, and its reduction (sharp.h).
  const double across = nodes > 1 ? 2 * n + heads : 0.0;
  return (3 * n + across) * loops + n;
}

}  // namespace

extern const AlgorithmDescriptor kNvlsAlgorithm{
    .id = Algorithm::nvls,
    .name = "nvls",
    .latency_row = Algorithm::nvls,
    .collectives = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter},
    .unimplemented = "nvls implements all_reduce, all_gather and reduce_scatter only",
    .protocols = {Protocol::simple},
    .nccl = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter},
    .all = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter},
    .aggregates = {},
    .nvlink_step_at_launch = true,
    .why_not = nvls_why_not,
    .expand = expand_nvls,
    .closed_form = nvls_closed_form,
    .plan_size = nvls_plan_size,
};

}  // namespace wiresim::models
