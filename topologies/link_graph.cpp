#include "topologies/link_graph.h"

#include <algorithm>
#include <array>
#include <cassert>

#include <fmt/format.h>

namespace wiresim::topo {
namespace {

constexpr std::array<std::string_view, 7> kKindNames = {"gpu", "nvswitch", "pcie_switch",
                                                        "cpu", "nic", "switch", "nvme"};
constexpr std::array<std::string_view, 8> kTierNames = {"nvlink", "pcie", "upi", "xgmi",
                                                        "c2c",    "ib",   "roce", "eth"};

}  // namespace

std::string_view to_string(DeviceKind kind) { return kKindNames[static_cast<int>(kind)]; }
std::string_view to_string(Tier tier) { return kTierNames[static_cast<int>(tier)]; }

std::optional<DeviceKind> device_kind_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == s) return static_cast<DeviceKind>(i);
  return std::nullopt;
}

std::optional<Tier> tier_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kTierNames.size(); ++i)
    if (kTierNames[i] == s) return static_cast<Tier>(i);
  return std::nullopt;
}

bool is_network_tier(Tier tier) {
  return tier == Tier::ib || tier == Tier::roce || tier == Tier::eth;
}

bool is_nvlink_class(Tier tier) {
  return tier == Tier::nvlink || tier == Tier::xgmi || tier == Tier::c2c;
}

const GpuArch& gpu_arch(std::string_view name) {
  for (const GpuArch& a : kGpuArchs)
    if (a.name == name) return a;
  return kGpuArchs.back();
}

DeviceId LinkGraph::add_device(Device device) {
  const auto id = static_cast<DeviceId>(boost::add_vertex(device, graph_));
  assert(id == out_.size());
  by_name_.emplace(device.name, id);
  if (device.kind == DeviceKind::gpu) {
    gpu_index_.emplace(id, gpus_.size());
    gpus_.push_back(id);
  }
  out_.emplace_back();
  in_.emplace_back();
  return id;
}

LinkId LinkGraph::add_link(Link link) {
  assert(link.from < out_.size() && link.to < out_.size() && link.from != link.to);
  assert(link.bandwidth.count() > 0.0 && link.count >= 1);
  const auto id = static_cast<LinkId>(links_.size());
  boost::add_edge(link.from, link.to, link, graph_);
  out_[link.from].push_back(id);
  in_[link.to].push_back(id);
  links_.push_back(link);
  return id;
}

void LinkGraph::fail_link(LinkId id) {
  assert(id < links_.size());
  if (failed_.size() < links_.size()) failed_.resize(links_.size(), false);
  if (failed_[id]) return;
  failed_[id] = true;
  auto& out = out_[links_[id].from];
  out.erase(std::remove(out.begin(), out.end(), id), out.end());
  auto& in = in_[links_[id].to];
  in.erase(std::remove(in.begin(), in.end(), id), in.end());
}

void LinkGraph::degrade_link(LinkId id, double share) {
  assert(id < links_.size() && share > 0.0);
  set_link_parameters(id, links_[id].bandwidth * share, links_[id].latency);
  if (shares_.size() < links_.size()) shares_.resize(links_.size(), 1.0);
  shares_[id] *= share;
}

std::string LinkGraph::link_label(LinkId id) const {
  if (link_failed(id)) return link_name(id) + " [failed]";
  if (link_share(id) < 1.0) return fmt::format("{} [{:g}%]", link_name(id), 100.0 * link_share(id));
  return link_name(id);
}

LinkId LinkGraph::add_duplex(Link link) {
  const LinkId forward = add_link(link);
  std::swap(link.from, link.to);
  add_link(link);
  return forward;
}

void LinkGraph::set_link_parameters(LinkId id, sim::BytesPerSec bandwidth, sim::Seconds latency) {
  assert(id < links_.size() && bandwidth.count() > 0.0);
  Link& link = links_[id];
  link.bandwidth = bandwidth;
  link.latency = latency;
  // Keep the Boost view in step: the edge from->to with this id is the id-th one added
  // between them, so find it by matching position among parallel edges.
  auto [first, last] = boost::out_edges(link.from, graph_);
  std::size_t nth = 0;
  for (LinkId other : out_[link.from]) {
    if (other == id) break;
    if (links_[other].to == link.to) ++nth;
  }
  for (auto it = first; it != last; ++it) {
    if (boost::target(*it, graph_) != link.to) continue;
    if (nth-- == 0) {
      graph_[*it].bandwidth = bandwidth;
      graph_[*it].latency = latency;
      break;
    }
  }
}

std::size_t LinkGraph::device_count() const { return boost::num_vertices(graph_); }

const Device& LinkGraph::device(DeviceId id) const { return graph_[id]; }

std::optional<DeviceId> LinkGraph::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> LinkGraph::gpu_index(DeviceId id) const {
  const auto it = gpu_index_.find(id);
  if (it == gpu_index_.end()) return std::nullopt;
  return it->second;
}

std::string LinkGraph::link_name(LinkId id) const {
  const Link& l = links_[id];
  return fmt::format("{}->{}", device(l.from).name, device(l.to).name);
}

std::optional<LinkId> LinkGraph::find_link(DeviceId from, DeviceId to) const {
  for (LinkId id : out_[from])
    if (links_[id].to == to) return id;
  return std::nullopt;
}

}  // namespace wiresim::topo
