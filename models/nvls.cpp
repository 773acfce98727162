// NVLS: NVLink SHARP on NVSwitch (Hopper and later), as NCCL runs it inside one domain.
//
// The buffer is cut into n parts, one per rank. reduce-scatter: rank j loads part j through
// the switch with an in-switch reduction — one transfer that reads part j over every GPU's
// uplink and delivers the sum over j's downlink. all-gather: rank j stores its part once to
// a multicast address — one transfer over j's uplink and every GPU's downlink. all_reduce
// does both per chunk, pipelined. Every transfer is a multicast tree served at one rate;
// NCCL's NVLS efficiency (0.85 on Hopper) scales the switch's throughput.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/plan.h"

namespace wiresim::models {

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
      nvls_chunk(m, Algorithm::nvls, problem.size, 1, n) * (static_cast<double>(channels) * n);
  const sim::Bytes total = problem.size;
  const int loops = chunk_count(total, loop_bytes);
  const bool reduce_scatter = problem.op != Collective::all_gather;
  const bool all_gather = problem.op != Collective::reduce_scatter;
  const auto rs_label = b.label("nvls reduce-scatter");
  const auto ag_label = b.label("nvls all-gather");
  const sim::Seconds overhead = m.arch().nvls_step_overhead;
  std::vector<sim::NodeId> prev_rs(n, b.launch()), prev_ag(n, b.launch());
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

}  // namespace wiresim::models
