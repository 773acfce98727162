#include "models/machine.h"

#include <algorithm>

#include "topologies/builder.h"

namespace wiresim::models {

Machine::Machine(const topo::LinkGraph& graph, const Params& params, bool p2p)
    : graph_(graph), params_(params), router_(graph), links_(topo::link_specs(graph)), p2p_(p2p) {
  router_.set_pxn(true);
  if (!graph.gpus().empty()) arch_name_ = graph.device(graph.gpus().front()).arch;
  if (arch_name_.empty()) arch_name_ = "default";
  const ArchParams& a = arch();
  for (std::size_t i = 0; i < links_.size(); ++i)
    links_[i].capacity = links_[i].capacity * a.efficiency(graph.link(static_cast<sim::LinkId>(i)).tier);
}

std::optional<topo::DeviceId> Machine::cpu_of(topo::DeviceId gpu) const {
  const auto& d = graph_.device(gpu);
  std::optional<topo::DeviceId> first;
  for (topo::DeviceId i = 0; i < graph_.device_count(); ++i) {
    const auto& c = graph_.device(i);
    if (c.kind != topo::DeviceKind::cpu || c.node != d.node) continue;
    if (c.socket == d.socket) return i;
    if (!first) first = i;
  }
  return first;
}

bool Machine::staged(topo::DeviceId a, topo::DeviceId b) const {
  if (a == b || node_of(a) != node_of(b) || graph_.device(a).kind != topo::DeviceKind::gpu ||
      graph_.device(b).kind != topo::DeviceKind::gpu)
    return false;
  // Decided once per pair (cpu_of scans the devices): P2P off stages every same-node pair
  // with a host CPU; P2P on, NCCL still stages where the path crosses a host bridge or the
  // inter-socket link (PHB, NODE, SYS), its default P2P level being PXB.
  const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
  auto it = staged_pairs_.find(key);
  if (it == staged_pairs_.end()) {
    const bool no_peer_access = !graph_.device(a).peer_to_peer || !graph_.device(b).peer_to_peer;
    const bool staged =
        (!p2p_ || no_peer_access || router_.transport(a, b) == topo::Transport::shm) && cpu_of(a).has_value();
    it = staged_pairs_.emplace(key, staged).first;
  }
  return it->second;
}

std::span<const sim::LinkId> Machine::route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow) const {
  if (!staged(a, b)) return router_.route(a, b, flow);
  const std::uint64_t key = (static_cast<std::uint64_t>(a) << 32) | b;
  auto it = staged_routes_.find(key);
  if (it == staged_routes_.end()) {
    // Up to the sender's socket (its host memory), then from there down to the receiver.
    const topo::DeviceId cpu = *cpu_of(a);
    std::vector<sim::LinkId> links;
    for (auto l : router_.route(a, cpu)) links.push_back(l);
    for (auto l : router_.route(cpu, b)) links.push_back(l);
    it = staged_routes_.emplace(key, std::move(links)).first;
  }
  return it->second;
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

const std::vector<std::vector<int>>& Machine::mesh_rings(const std::vector<topo::DeviceId>& gpus) const {
  std::lock_guard<std::mutex> lock(mesh_cache_->mutex);
  auto it = mesh_cache_->rings.find(gpus);
  if (it == mesh_cache_->rings.end()) it = mesh_cache_->rings.emplace(gpus, search_mesh_rings(*this, gpus)).first;
  return it->second;
}

}  // namespace wiresim::models
