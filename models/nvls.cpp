// NVLS: NVLink SHARP on NVSwitch (Hopper and later), as NCCL runs it inside one domain.
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
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/closed_form.h"
#include "models/plan.h"

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
  if (by_node.size() > 1) return "nvls spans one NVLink domain; across nodes use nvls_tree, ring or tree";
  std::optional<topo::DeviceId> sw;
  for (auto gpu : problem.ranks) {
    const auto port = machine.nvls_port(gpu);
    if (!port)
      return fmt::format("nvls needs an NVSwitch with multicast (multicast: true), and {} has none",
                         machine.graph().device(gpu).name);
    if (sw && *sw != port->nvswitch) return "nvls needs all GPUs on the same NVSwitch fabric";
    sw = port->nvswitch;
  }
  return std::nullopt;
}

void expand_nvls(PlanBuilder& b, Plan& plan) {
  const Problem& problem = b.problem();
  const Machine& m = b.machine();
  const int n = static_cast<int>(problem.ranks.size());
  const int channels = m.arch().nvls_channels;
  const double efficiency = m.arch().nvls_efficiency;
  std::vector<Machine::SwitchPort> ports;
  for (auto gpu : problem.ranks) ports.push_back(*m.nvls_port(gpu));
  std::vector<sim::LinkId> all_up, all_down;
  sim::Seconds wire{0.0};
  for (const auto& p : ports) {
    all_up.push_back(p.up);
    all_down.push_back(p.down);
    wire = std::max(wire, m.links()[p.up].latency + m.links()[p.down].latency);
  }
  // A loop moves one chunk per channel and head (NCCL: loopCount = nHeads x chunkSize).
  const sim::Bytes loop_bytes =
      nvls_chunk(m, problem.size, n) * (static_cast<double>(channels) * n);
  const sim::Bytes total = problem.size;
  const int loops = chunk_count(total, loop_bytes);
  const bool reduce_scatter = problem.op != Collective::all_gather;
  const bool all_gather = problem.op != Collective::reduce_scatter;
  const auto rs_label = b.label("nvls reduce-scatter");
  const auto ag_label = b.label("nvls all-gather");
  const sim::Seconds overhead = m.arch().nvls_step_overhead;
  std::vector<sim::NodeId> prev_rs = nvls_start_nodes(b, n), prev_ag = prev_rs;
  // A part's reduce-scatter may run at most `ahead` loops ahead of its all-gather: the
  // reduced chunk waits in a buffer until it is multicast (NCCL's NVLS buffer holds a few).
  constexpr int ahead = 2;
  std::vector<std::vector<sim::NodeId>> gathered(n, std::vector<sim::NodeId>(ahead, kNoNode));
  std::vector<sim::LinkId> links;
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes part = chunk_size(total, loop_bytes, k) / static_cast<double>(n);
    for (int j = 0; j < n; ++j) {
      sim::NodeId ready = kNoNode;
      if (reduce_scatter) {
        links = all_up;
        links.push_back(ports[j].down);
        const sim::NodeId slot = all_gather && k >= ahead ? gathered[j][k % ahead] : kNoNode;
        const auto rs = b.send_links(links, j, j, part, {prev_rs[j], slot}, wire + b.reduction_time(part),
                                     rs_label, sim::BytesPerSec::unlimited(), efficiency);
        prev_rs[j] = overhead.count() > 0.0 ? b.delay(overhead, {rs.transfer}, rs_label, j) : rs.transfer;
        ready = rs.arrival;
      }
      if (all_gather) {
        links = all_down;
        links.insert(links.begin(), ports[j].up);
        const auto ag = b.send_links(links, j, j, part, {prev_ag[j], ready}, wire, ag_label,
                                     sim::BytesPerSec::unlimited(), efficiency);
        prev_ag[j] = overhead.count() > 0.0 ? b.delay(overhead, {ag.transfer}, ag_label, j) : ag.transfer;
        gathered[j][k % ahead] = ag.transfer;
      }
    }
  }
  plan.steps = (reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0);
  plan.loops = loops;
  plan.shape = fmt::format("nvls x {} channels, {} loop{} of {}", channels, loops, loops > 1 ? "s" : "",
                           sim::format_size(loop_bytes));
}

Estimate nvls_closed_form(PlanBuilder& b, sim::Seconds launch) {
  const Machine& machine = b.machine();
  const Problem& problem = b.problem();
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
  const int nodes = static_cast<int>(ranks_by_node(machine, problem).size());
  const int heads = static_cast<int>(problem.ranks.size()) / std::max(1, nodes);
  const double loops = pipeline_units(problem.size, nvls_chunk(machine, problem.size, heads) *
                                                        (channels * std::max(1, heads)));
  return 3 * n * loops + n;
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
