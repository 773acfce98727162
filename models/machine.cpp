#include "models/machine.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "topologies/builder.h"

namespace wiresim::models {

Machine::Machine(const topo::LinkGraph& graph, const Params& params, Transports transports)
    : graph_(graph), params_(params), router_(graph), links_(topo::link_specs(graph)), transports_(transports) {
  if (!graph.gpus().empty()) arch_name_ = graph.device(graph.gpus().front()).arch;
  if (arch_name_.empty()) arch_name_ = "default";
  const ArchParams& a = arch();
  router_.set_pxn(a.pxn);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const topo::Link& link = graph.link(static_cast<sim::LinkId>(i));
    links_[i].capacity = links_[i].capacity * a.efficiency(link.tier);
    // An NVMe drive delivers no more than its media reads, whatever its link allows: the read
    // rate is a delivered rate (a datasheet's sequential read), so no efficiency applies to it.
    const sim::BytesPerSec read = graph.device(link.from).read_bandwidth;
    if (read.count() > 0.0) links_[i].capacity = std::min(links_[i].capacity, read * graph.link_share(static_cast<sim::LinkId>(i)));
  }
  for (topo::DeviceId i = 0; i < graph.device_count(); ++i) {
    const auto& d = graph.device(i);
    if (d.kind != topo::DeviceKind::cpu || d.node < 0 || d.vendor.empty()) continue;
    if (cpu_vendors_.size() <= static_cast<std::size_t>(d.node)) cpu_vendors_.resize(static_cast<std::size_t>(d.node) + 1);
    if (cpu_vendors_[static_cast<std::size_t>(d.node)].empty()) cpu_vendors_[static_cast<std::size_t>(d.node)] = d.vendor;
  }
  staged_.resize(graph.device_count());
  for (topo::DeviceId gpu : graph.gpus()) staged_[gpu].assign(router_.gpus_in_node(graph.device(gpu).node), -1);
}

const std::string& Machine::cpu_vendor(int node) const {
  static const std::string unknown;
  return node >= 0 && static_cast<std::size_t>(node) < cpu_vendors_.size() ? cpu_vendors_[static_cast<std::size_t>(node)]
                                                                           : unknown;
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
  std::int8_t& known = staged_[a][router_.index_in_node(b)];
  if (known < 0) {
    const bool no_peer_access = !graph_.device(a).peer_to_peer || !graph_.device(b).peer_to_peer;
    const PathType level = transports_.p2p ? transports_.p2p_level.value_or(PathType::pxb) : PathType::loc;
    known = (no_peer_access || path_type(a, b) > level) && cpu_of(a).has_value();
  }
  return known > 0;
}

bool Machine::gdr(topo::DeviceId gpu, topo::DeviceId nic) const {
  if (transports_.net == Net::socket) return false;   // sockets read and write host memory only
  if (transports_.gdr != Gdr::automatic) return transports_.gdr == Gdr::on;
  const std::string label = router_.matrix_label(gpu, nic);
  if (label != "PHB" && label != "NODE" && label != "SYS") return true;   // PIX, PXB (or no PCIe label)
  // P2C: over C2C to the CPU, then PCIe to a NIC of that same CPU.
  const auto path = router_.route(gpu, nic);
  return label != "SYS" && !path.empty() && graph_.link(path.front()).tier == topo::Tier::c2c;
}

std::optional<std::vector<sim::LinkId>> Machine::bounced_route(std::span<const sim::LinkId> direct) const {
  // The sender's NIC is the first NIC the route enters, its proxy GPU the last GPU before it;
  // the receiver's NIC the last NIC it leaves, its GPU the first GPU after.
  const auto kind = [&](topo::DeviceId d) { return graph_.device(d).kind; };
  std::optional<std::size_t> into_nic, out_of_nic;
  for (std::size_t i = 0; i < direct.size(); ++i) {
    if (!into_nic && kind(graph_.link(direct[i]).to) == topo::DeviceKind::nic) into_nic = i;
    if (kind(graph_.link(direct[i]).from) == topo::DeviceKind::nic) out_of_nic = i;
  }
  if (!into_nic || !out_of_nic) return std::nullopt;
  std::optional<std::size_t> proxy_from;   // the link leaving the sender's proxy GPU
  for (std::size_t i = 0; i <= *into_nic; ++i)
    if (kind(graph_.link(direct[i]).from) == topo::DeviceKind::gpu) proxy_from = i;
  std::optional<std::size_t> gpu_into;     // the link entering the receiver's GPU
  for (std::size_t i = *out_of_nic; i < direct.size() && !gpu_into; ++i)
    if (kind(graph_.link(direct[i]).to) == topo::DeviceKind::gpu) gpu_into = i;
  if (!proxy_from || !gpu_into) return std::nullopt;
  const topo::DeviceId src_gpu = graph_.link(direct[*proxy_from]).from, src_nic = graph_.link(direct[*into_nic]).to;
  const topo::DeviceId dst_nic = graph_.link(direct[*out_of_nic]).from, dst_gpu = graph_.link(direct[*gpu_into]).to;
  const bool send_bounce = !gdr(src_gpu, src_nic) && cpu_of(src_gpu);
  const bool recv_bounce = !gdr(dst_gpu, dst_nic) && cpu_of(dst_gpu);
  if (!send_bounce && !recv_bounce) return std::nullopt;
  std::vector<sim::LinkId> out(direct.begin(), direct.begin() + static_cast<std::ptrdiff_t>(*proxy_from));
  const auto append = [&](std::span<const sim::LinkId> part) { out.insert(out.end(), part.begin(), part.end()); };
  if (send_bounce) {
    append(router_.route(src_gpu, *cpu_of(src_gpu)));
    append(router_.route(*cpu_of(src_gpu), src_nic));
  } else {
    append(direct.subspan(*proxy_from, *into_nic + 1 - *proxy_from));
  }
  append(direct.subspan(*into_nic + 1, *out_of_nic - *into_nic - 1));
  if (recv_bounce) {
    append(router_.route(dst_nic, *cpu_of(dst_gpu)));
    append(router_.route(*cpu_of(dst_gpu), dst_gpu));
  } else {
    append(direct.subspan(*out_of_nic, *gpu_into + 1 - *out_of_nic));
  }
  append(direct.subspan(*gpu_into + 1));
  return out;
}

bool Machine::any_bounce() const {
  if (transports_.net == Net::socket || transports_.gdr == Gdr::off) return true;
  if (transports_.gdr == Gdr::on) return false;
  if (!any_bounce_) {
    any_bounce_ = false;
    for (auto g : graph_.gpus())
      for (auto nic : router_.nearest_nics(g))
        if (!gdr(g, nic)) any_bounce_ = true;
  }
  return *any_bounce_;
}

std::string Machine::Exchange::name() const {
  if (transport == topo::Transport::net && socket) return "NET/Socket";
  if (transport == topo::Transport::net && via_host) return "NET via host memory";
  return std::string(topo::to_string(transport));
}

PathType Machine::path_type(topo::DeviceId a, topo::DeviceId b) const {
  if (a == b) return PathType::loc;
  if (router_.transport(a, b) == topo::Transport::p2p_nvlink) return PathType::nvl;
  const std::string label = router_.matrix_label(a, b);
  if (label == "PIX") return PathType::pix;
  if (label == "PXB") return PathType::pxb;
  if (label == "SYS") return PathType::sys;
  return PathType::phb;   // PHB, NODE
}

Machine::Exchange Machine::exchange(topo::DeviceId a, topo::DeviceId b) const {
  if (staged(a, b)) return {topo::Transport::shm, true};
  topo::Transport t = router_.transport(a, b);
  if (t == topo::Transport::shm) t = topo::Transport::p2p_pcie;   // a far pair within a raised P2P level
  if (t != topo::Transport::net || !any_bounce()) return {t, false};
  // route() decides, per pair, whether a side lacks GDR (its route may cross the same links
  // as the direct one: a NIC across the socket link is reached through the CPU either way).
  route(a, b);
  return {t, net_routes_.at(std::make_tuple(a, b, std::uint32_t{0})).via_host, transports_.net == Net::socket};
}

sim::BytesPerSec Machine::stream_cap(topo::DeviceId a, topo::DeviceId b) const {
  if (transports_.net == Net::socket && node_of(a) != node_of(b)) return params_.net_socket.stream_bandwidth;
  return sim::BytesPerSec::unlimited();
}

sim::Seconds Machine::step_extra(topo::DeviceId a, topo::DeviceId b) const {
  if (transports_.net == Net::socket && node_of(a) != node_of(b)) return params_.net_socket.step_extra;
  return sim::Seconds{0.0};
}

std::span<const sim::LinkId> Machine::route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow) const {
  if (node_of(a) != node_of(b) && any_bounce() && graph_.device(a).kind == topo::DeviceKind::gpu &&
      graph_.device(b).kind == topo::DeviceKind::gpu) {
    const auto key = std::make_tuple(a, b, flow);
    auto it = net_routes_.find(key);
    if (it == net_routes_.end()) {
      const auto direct = router_.route(a, b, flow);
      auto bounced = bounced_route(direct);
      NetRoute r{bounced ? std::move(*bounced) : std::vector<sim::LinkId>(direct.begin(), direct.end()),
                 bounced.has_value()};
      it = net_routes_.emplace(key, std::move(r)).first;
    }
    return it->second.links;
  }
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

std::span<const sim::LinkId> Machine::route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow, int rail) const {
  if (rail < 0 || node_of(a) == node_of(b)) return route(a, b, flow);
  return router_.route_on_rail(a, b, rail, flow);
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

std::optional<bool> parse_p2p(std::string_view s) {
  if (s == "on") return true;
  if (s == "off") return false;
  return std::nullopt;
}

std::optional<Gdr> parse_gdr(std::string_view s) {
  if (s == "auto") return Gdr::automatic;
  if (s == "on") return Gdr::on;
  if (s == "off") return Gdr::off;
  return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 10> kPathTypeNames{"LOC", "NVL", "NVB", "C2C", "PIX",
                                                          "PXB", "P2C", "PXN", "PHB", "SYS"};
}  // namespace

std::optional<PathType> parse_path_type(std::string_view s) {
  for (std::size_t i = 0; i < kPathTypeNames.size(); ++i) {
    const std::string_view n = kPathTypeNames[i];
    if (s.size() == n.size() && std::equal(s.begin(), s.end(), n.begin(), [](char x, char y) {
          return std::toupper(static_cast<unsigned char>(x)) == y;
        }))
      return static_cast<PathType>(i);
  }
  return std::nullopt;
}

std::string_view to_string(PathType t) { return kPathTypeNames[static_cast<std::size_t>(t)]; }

std::optional<Net> parse_net(std::string_view s) {
  if (s == "ib") return Net::ib;
  if (s == "socket") return Net::socket;
  return std::nullopt;
}

}  // namespace wiresim::models
