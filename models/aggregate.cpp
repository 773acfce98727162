// Aggregated sends (Choice::aggregation): k consecutive sends of a pipeline merged into one
// transfer of their summed bytes, whose arrival pays k step latencies. In lock step on
// uniform links, k sends of c bytes each take k (c / B + λ); the merged send takes
// k c / B + k λ: the same. docs/scale.md measures what it costs elsewhere.
#include "models/plan.h"

#include <algorithm>

namespace wiresim::models {

PlanBuilder::Sent PlanBuilder::send_merged(int from, int to, sim::Bytes payload, int merged, int reductions,
                                           std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                                           sim::LabelId label, sim::BytesPerSec cap) {
  if (merged <= 1) return send(from, to, payload, deps, flow, label, cap, reductions > 0);
  const sim::Seconds extra = merged_extra(hop(from, to, flow), payload, merged, reductions);
  return send(from, to, payload, deps, flow, label, cap, false, extra, merged);
}

PlanBuilder::Sent PlanBuilder::send_through(int from, int to, sim::Bytes payload, int merged, int reductions,
                                            std::initializer_list<sim::NodeId> deps, const Sent& forwarded,
                                            std::uint32_t flow, sim::LabelId label, sim::BytesPerSec cap) {
  return send_through(from, to, payload, merged, reductions, deps, std::span<const Sent>(&forwarded, 1), flow, label,
                      cap);
}

PlanBuilder::Sent PlanBuilder::send_through(int from, int to, sim::Bytes payload, int merged, int reductions,
                                            std::initializer_list<sim::NodeId> deps, std::span<const Sent> forwarded,
                                            std::uint32_t flow, sim::LabelId label, sim::BytesPerSec cap) {
  merged = std::max(1, merged);
  const Hop& h = hop(from, to, flow);
  const sim::NodeId start = delay(protocol().overhead * static_cast<double>(merged), deps, label, from);
  for (const Sent& f : forwarded) depend(whole_steps(h) ? f.arrival : f.head, start);
  const sim::Seconds extra = merged_extra(h, payload, merged, reductions);
  const sim::Seconds latency = h.step_latency;
  Sent sent = transfer(from, to, payload, {start}, flow, label, cap, false, extra, sim::Seconds{0.0});
  for (const Sent& f : forwarded) depend(f.arrival, sent.arrival);
  sent.head = delay(latency, {start}, label, to);
  return sent;
}

sim::Seconds PlanBuilder::merged_extra(const Hop& h, sim::Bytes payload, int merged, int reductions) const {
  const sim::Bytes piece = payload / static_cast<double>(merged);
  return h.step_latency * static_cast<double>(merged - 1) + reduction_time(piece) * static_cast<double>(reductions);
}

}  // namespace wiresim::models
