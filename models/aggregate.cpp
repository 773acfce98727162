// Aggregated sends (Choice::aggregation): k consecutive sends of a pipeline merged into one
// transfer of their summed bytes, whose arrival pays k step latencies. In lock step on
// uniform links, k sends of c bytes each take k (c / B + λ); the merged send takes
// k c / B + k λ: the same. docs/scale.md measures what it costs elsewhere.
#include "models/plan.h"

namespace wiresim::models {

PlanBuilder::Sent PlanBuilder::send_merged(int from, int to, sim::Bytes payload, int merged, int reductions,
                                           std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                                           sim::LabelId label, sim::BytesPerSec cap) {
  if (merged <= 1) return send(from, to, payload, deps, flow, label, cap, reductions > 0);
  // The merged send's arrival adds the other merged - 1 step latencies and the reductions
  // of every merged piece.
  const sim::Bytes piece = payload / static_cast<double>(merged);
  const sim::Seconds extra = hop(from, to, flow).step_latency * static_cast<double>(merged - 1) +
                             reduction_time(piece) * static_cast<double>(reductions);
  return send(from, to, payload, deps, flow, label, cap, false, extra, merged);
}

}  // namespace wiresim::models
