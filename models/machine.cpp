#include "models/machine.h"

#include <algorithm>

#include "topologies/builder.h"

namespace wiresim::models {

Machine::Machine(const topo::LinkGraph& graph, const Params& params)
    : graph_(graph), params_(params), router_(graph), links_(topo::link_specs(graph)) {
  if (!graph.gpus().empty()) arch_name_ = graph.device(graph.gpus().front()).arch;
  if (arch_name_.empty()) arch_name_ = "default";
  const ArchParams& a = arch();
  for (std::size_t i = 0; i < links_.size(); ++i)
    links_[i].capacity = links_[i].capacity * a.efficiency(graph.link(static_cast<sim::LinkId>(i)).tier);
}

sim::BytesPerSec Machine::rate(std::span<const sim::LinkId> route) const {
  sim::BytesPerSec r = sim::BytesPerSec::unlimited();
  for (auto l : route) r = std::min(r, links_[l].capacity);
  return r;
}

sim::Seconds Machine::wire_latency(std::span<const sim::LinkId> route) const {
  sim::Seconds t{0.0};
  for (auto l : route) t += links_[l].latency;
  return t;
}

TierClass Machine::tier_class(std::span<const sim::LinkId> route) const {
  TierClass worst = TierClass::nvlink;
  for (auto l : route) worst = std::max(worst, models::tier_class(graph_.link(l).tier));
  return worst;
}

std::optional<Machine::SwitchPort> Machine::nvls_port(topo::DeviceId gpu) const {
  for (auto up : graph_.out_links(gpu)) {
    const auto& link = graph_.link(up);
    const auto& sw = graph_.device(link.to);
    if (link.tier != topo::Tier::nvlink || sw.kind != topo::DeviceKind::nvswitch || !sw.multicast) continue;
    for (auto down : graph_.in_links(gpu))
      if (graph_.link(down).from == link.to) return SwitchPort{link.to, up, down};
  }
  return std::nullopt;
}

}  // namespace wiresim::models
