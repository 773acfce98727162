#include "topologies/routes.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::topo {
namespace {

constexpr std::uint16_t kUnreachable = std::numeric_limits<std::uint16_t>::max();

// Relative cost of one hop on a tier: NVLink-class beats PCIe beats the socket link.
int tier_cost(Tier t) {
  switch (t) {
    case Tier::nvlink: case Tier::xgmi: case Tier::c2c: return 1;
    case Tier::pcie: return 4;
    case Tier::upi: return 16;
    case Tier::ib: case Tier::roce: case Tier::eth: return 8;
  }
  return 1;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_gpu_fabric_end(DeviceKind k) { return k == DeviceKind::gpu || k == DeviceKind::nvswitch; }

long find_root(std::vector<long>& parent, long x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

std::string_view to_string(Transport t) {
  switch (t) {
    case Transport::p2p_nvlink: return "P2P/NVLink";
    case Transport::p2p_pcie: return "P2P/PCIe";
    case Transport::shm: return "SHM";
    case Transport::net: return "NET";
  }
  return "?";
}

Router::Router(const LinkGraph& graph) : graph_(graph) {
  const std::size_t n = graph.device_count();
  if (n >= (1u << 24))
    throw input::InputError(fmt::format("{}: {} devices; routes support at most 16,777,215",
                                      graph.source, n));
  // NVLink domains: GPUs joined through NVLink-class links, directly or via NVSwitches.
  std::vector<long> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (LinkId id = 0; id < graph.link_count(); ++id) {
    const Link& l = graph.link(id);
    if (is_nvlink_class(l.tier) && is_gpu_fabric_end(graph.device(l.from).kind) &&
        is_gpu_fabric_end(graph.device(l.to).kind))
      parent[find_root(parent, l.from)] = find_root(parent, l.to);
  }
  std::unordered_map<long, int> domain_ids;
  std::unordered_map<int, std::uint32_t> per_node;
  index_in_node_.assign(n, 0);
  for (DeviceId gpu : graph.gpus()) {
    const auto [it, _] = domain_ids.emplace(find_root(parent, gpu), static_cast<int>(domain_ids.size()));
    domain_.push_back(it->second);
    index_in_node_[gpu] = per_node[graph.device(gpu).node]++;
    gpus_by_node_[graph.device(gpu).node].push_back(gpu);
  }
  gpu_routes_.resize(n);
  switch_index_.assign(n, -1);
  for (DeviceId d = 0; d < n; ++d) {
    if (graph.device(d).kind == DeviceKind::nic) nics_by_node_[graph.device(d).node].push_back(d);
    if (graph.device(d).kind == DeviceKind::network_switch) {
      switch_index_[d] = static_cast<std::int32_t>(switches_.size());
      switches_.push_back(d);
    }
  }
}

std::size_t Router::gpus_in_node(int node) const {
  const auto it = gpus_by_node_.find(node);
  return it == gpus_by_node_.end() ? 0 : it->second.size();
}

std::unordered_map<DeviceId, Router::Best> Router::search(DeviceId src, std::optional<DeviceId> dst,
                                                         Mode mode) const {
  // Without a destination, or with one in the same node, the search stays in src's node.
  const int node = graph_.device(src).node;
  const bool one_node = node >= 0 && (!dst || graph_.device(*dst).node == node);
  std::unordered_map<DeviceId, Best> best;
  using Entry = std::tuple<int, int, DeviceId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  best[src] = {0, 0, 0};
  queue.emplace(0, 0, src);
  while (!queue.empty()) {
    const auto [cost, hops, u] = queue.top();
    queue.pop();
    const Best bu = best[u];
    if (cost != bu.cost || hops != bu.hops) continue;
    if (dst && u == *dst) break;
    const DeviceKind ku = graph_.device(u).kind;
    if (u != src && (ku == DeviceKind::gpu || ku == DeviceKind::nic || ku == DeviceKind::nvme)) continue;  // no forwarding
    for (LinkId id : graph_.out_links(u)) {
      const Link& l = graph_.link(id);
      const Device& v = graph_.device(l.to);
      if (one_node && (v.node != node || is_network_tier(l.tier))) continue;
      if (mode == Mode::host && is_gpu_fabric_end(ku) && is_gpu_fabric_end(v.kind)) continue;
      const int c = cost + tier_cost(l.tier), h = hops + 1;
      auto it = best.find(l.to);
      if (it == best.end() || std::tie(c, h) < std::tie(it->second.cost, it->second.hops)) {
        best[l.to] = {c, h, id};
        queue.emplace(c, h, l.to);
      }
    }
  }
  return best;
}

std::vector<LinkId> Router::cheapest(DeviceId src, DeviceId dst, Mode mode) const {
  auto best = search(src, dst, mode);
  std::vector<LinkId> path;
  if (!best.count(dst)) return path;
  for (DeviceId v = dst; v != src;) {
    const LinkId id = best[v].via;
    path.push_back(id);
    v = graph_.link(id).from;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

const std::vector<std::uint16_t>& Router::hops_to_switch(std::size_t target) const {
  auto [it, fresh] = switch_hops_.try_emplace(target);
  if (!fresh) return it->second;
  auto& hops = it->second;
  hops.assign(switches_.size(), kUnreachable);
  std::deque<std::size_t> queue{target};
  hops[target] = 0;
  while (!queue.empty()) {
    const std::size_t v = queue.front();
    queue.pop_front();
    for (LinkId id : graph_.in_links(switches_[v])) {
      const std::int32_t u = switch_index_[graph_.link(id).from];
      if (u >= 0 && hops[u] == kUnreachable && is_network_tier(graph_.link(id).tier)) {
        hops[u] = hops[v] + 1;
        queue.push_back(u);
      }
    }
  }
  return hops;
}

std::vector<LinkId> Router::network_route(DeviceId src_nic, DeviceId dst_nic,
                                          std::uint32_t flow) const {
  std::vector<LinkId> path;
  if (src_nic == dst_nic) return path;
  std::vector<LinkId> firsts, lasts;
  for (LinkId id : graph_.out_links(src_nic)) {
    const Link& l = graph_.link(id);
    if (!is_network_tier(l.tier)) continue;
    if (l.to == dst_nic) return {id};  // cabled back to back
    if (switch_index_[l.to] >= 0) firsts.push_back(id);
  }
  for (LinkId id : graph_.in_links(dst_nic))
    if (is_network_tier(graph_.link(id).tier) && switch_index_[graph_.link(id).from] >= 0)
      lasts.push_back(id);
  // The (first hop, last hop) pairs with the fewest switch hops between them.
  std::vector<std::pair<LinkId, LinkId>> ends;
  int fewest = kUnreachable;
  for (LinkId last : lasts) {
    const auto& hops = hops_to_switch(switch_index_[graph_.link(last).from]);
    for (LinkId first : firsts) {
      const int h = hops[switch_index_[graph_.link(first).to]];
      if (h < fewest) ends.clear(), fewest = h;
      if (h == fewest && h != kUnreachable) ends.emplace_back(first, last);
    }
  }
  if (ends.empty()) return path;
  const std::uint64_t key = (std::uint64_t{src_nic} << 32) | dst_nic;
  const auto [first, last] = ends[(mix(key) + flow) % ends.size()];
  path.push_back(first);
  DeviceId u = graph_.link(first).to;
  const DeviceId target = graph_.link(last).from;
  const auto& hops = hops_to_switch(switch_index_[target]);
  std::vector<LinkId> next;
  for (std::uint64_t hop = 1; u != target; ++hop) {
    next.clear();
    for (LinkId id : graph_.out_links(u)) {
      const std::int32_t v = switch_index_[graph_.link(id).to];
      if (v >= 0 && is_network_tier(graph_.link(id).tier) &&
          hops[v] + 1 == hops[switch_index_[u]])
        next.push_back(id);
    }
    const LinkId id = next[(mix(key ^ (hop * 0x9e3779b97f4a7c15ULL)) + flow) % next.size()];
    path.push_back(id);
    u = graph_.link(id).to;
  }
  path.push_back(last);
  return path;
}

std::span<const LinkId> Router::route(DeviceId src, DeviceId dst, std::uint32_t flow) const {
  if (src == dst) return {};
  const Device& a = graph_.device(src);
  const Device& b = graph_.device(dst);
  const bool same_node = a.node >= 0 && a.node == b.node;
  if (same_node) flow = 0;
  const std::uint64_t key = (std::uint64_t{src} << 40) | (std::uint64_t{dst} << 16) | (flow & 0xffff);
  std::vector<LinkId>* gpu_pair = nullptr;
  if (same_node && a.kind == DeviceKind::gpu && b.kind == DeviceKind::gpu) {
    auto& row = gpu_routes_[src];
    if (row.empty()) row.resize(gpus_in_node(a.node));
    gpu_pair = &row[index_in_node_[dst]];
    if (!gpu_pair->empty()) return *gpu_pair;
  } else if (auto it = cache_.find(key); it != cache_.end()) {
    return it->second;
  }

  std::vector<LinkId> path;
  if (same_node || a.node < 0 || b.node < 0) {
    path = cheapest(src, dst, Mode::route);
  } else {
    DeviceId out = a.kind == DeviceKind::nic ? src : nic_for(src, flow);
    const DeviceId in = b.kind == DeviceKind::nic ? dst : nic_for(dst, flow);
    std::vector<LinkId> head;
    const int out_rail = graph_.device(out).rail, in_rail = graph_.device(in).rail;
    // Across rails with PXN (NCCL's rule, src/graph/paths.cc): a NIC on the destination's rail that
    // src reaches through PCIe switches alone (PXB) takes the flow directly, unless the GPU
    // next to it reaches it faster; else that GPU relays over NVLink (PXN).
    const bool cross_rail = pxn_ && a.kind == DeviceKind::gpu && b.kind == DeviceKind::gpu && out_rail >= 0 &&
                            in_rail >= 0 && out_rail != in_rail;
    std::optional<DeviceId> direct;
    if (cross_rail && !graph_.bound_nic(src)) direct = pxb_nic(src, in_rail);
    const auto relay = cross_rail ? pxn_relay(src, in_rail, flow) : std::nullopt;
    const auto rate = [&](DeviceId from, DeviceId nic) { return bottleneck(cheapest(from, nic, Mode::route)); };
    if (direct && !(relay && rate(*relay, nic_for(*relay, flow)) > rate(src, *direct))) {
      out = *direct;
    } else if (relay) {
      out = nic_for(*relay, flow);
      head = cheapest(src, *relay, Mode::route);
      const auto hop = cheapest(*relay, out, Mode::route);
      head.insert(head.end(), hop.begin(), hop.end());
    }
    if (head.empty() && out != src) head = cheapest(src, out, Mode::route);
    const auto middle = network_route(out, in, flow);
    const auto tail = in == dst ? std::vector<LinkId>{} : cheapest(in, dst, Mode::route);
    if (!middle.empty() && (out == src || !head.empty()) && (in == dst || !tail.empty())) {
      path = head;
      path.insert(path.end(), middle.begin(), middle.end());
      path.insert(path.end(), tail.begin(), tail.end());
    }
  }
  if (path.empty())
    throw input::InputError(graph_.source, 0, 0,
                          fmt::format("no route from {} to {}: no chain of links joins them",
                                      a.name, b.name));
  if (gpu_pair) return *gpu_pair = std::move(path);
  return cache_.emplace(key, std::move(path)).first->second;
}

std::span<const LinkId> Router::route_on_rail(DeviceId src, DeviceId dst, int rail, std::uint32_t flow) const {
  const Device& a = graph_.device(src);
  const Device& b = graph_.device(dst);
  if (rail < 0 || a.node < 0 || b.node < 0 || a.node == b.node) return route(src, dst, flow);
  const auto key = std::make_tuple(src, dst, rail, flow);
  if (const auto it = rail_routes_.find(key); it != rail_routes_.end()) return it->second;
  const auto out = nic_on_rail(a.node, rail), in = nic_on_rail(b.node, rail);
  if (!out || !in) return route(src, dst, flow);
  const auto head = cheapest(src, *out, Mode::host);
  const auto middle = network_route(*out, *in, flow);
  const auto tail = cheapest(*in, dst, Mode::host);
  if (head.empty() || middle.empty() || tail.empty()) return route(src, dst, flow);
  std::vector<LinkId> path = head;
  path.insert(path.end(), middle.begin(), middle.end());
  path.insert(path.end(), tail.begin(), tail.end());
  return rail_routes_.emplace(key, std::move(path)).first->second;
}

std::optional<DeviceId> Router::nic_on_rail(int node, int rail) const {
  const auto it = nics_by_node_.find(node);
  if (it == nics_by_node_.end()) return std::nullopt;
  for (DeviceId d : it->second)
    if (graph_.device(d).rail == rail) return d;
  return std::nullopt;
}

std::optional<DeviceId> Router::pxb_nic(DeviceId src, int rail) const {
  const std::uint64_t key = (std::uint64_t{src} << 32) | static_cast<std::uint32_t>(rail);
  if (const auto it = pxb_nics_.find(key); it != pxb_nics_.end()) return it->second;
  std::optional<DeviceId>& found = pxb_nics_[key];
  const auto nics = nics_by_node_.find(graph_.device(src).node);
  if (nics == nics_by_node_.end()) return found;
  for (DeviceId d : nics->second) {
    if (graph_.device(d).rail != rail) continue;
    const auto path = cheapest(src, d, Mode::host);
    if (path.empty()) continue;
    bool through_cpu = false;
    for (LinkId id : path) through_cpu = through_cpu || graph_.device(graph_.link(id).to).kind == DeviceKind::cpu;
    if (!through_cpu) return found = d;
  }
  return found;
}

// The GPU of src's node, in src's NVLink domain, whose NIC for this flow is on `rail`.
std::optional<DeviceId> Router::pxn_relay(DeviceId src, int rail, std::uint32_t flow) const {
  const auto it = gpus_by_node_.find(graph_.device(src).node);
  if (it == gpus_by_node_.end()) return std::nullopt;
  const int domain = domain_of(src);
  for (DeviceId g : it->second)
    if (g != src && domain_of(g) == domain && !nearest_nics(g).empty() && graph_.device(nic_for(g, flow)).rail == rail)
      return g;
  return std::nullopt;
}

sim::Seconds Router::latency(std::span<const LinkId> links) const {
  sim::Seconds total;
  for (LinkId id : links) total += graph_.link(id).latency;
  return total;
}

sim::BytesPerSec Router::bottleneck(std::span<const LinkId> links) const {
  auto rate = sim::BytesPerSec::unlimited();
  for (LinkId id : links) rate = std::min(rate, graph_.link(id).bandwidth);
  return rate;
}

std::span<const DeviceId> Router::nearest_nics(DeviceId gpu) const {
  auto [it, fresh] = nearest_nics_.try_emplace(gpu);
  if (!fresh || graph_.device(gpu).node < 0) return it->second;
  int fewest = std::numeric_limits<int>::max();
  const auto found = search(gpu, std::nullopt, Mode::route);
  // A GPU pinned to a NIC uses it however far it is, while a path to it is left.
  if (const auto bound = graph_.bound_nic(gpu); bound && found.count(*bound)) {
    it->second.push_back(*bound);
    return it->second;
  }
  for (const auto& [d, b] : found) {
    if (graph_.device(d).kind != DeviceKind::nic) continue;
    if (b.cost < fewest) it->second.clear(), fewest = b.cost;
    if (b.cost == fewest) it->second.push_back(d);
  }
  std::sort(it->second.begin(), it->second.end());
  return it->second;
}

DeviceId Router::nic_for(DeviceId gpu, std::uint32_t flow) const {
  const auto nics = nearest_nics(gpu);
  if (nics.empty())
    throw input::InputError(graph_.source, 0, 0,
                          fmt::format("{} has no NIC in its node, so it cannot reach other nodes",
                                      graph_.device(gpu).name));
  return nics[(index_in_node_[gpu] + flow) % nics.size()];
}

std::optional<DeviceId> Router::multicast_switch(DeviceId gpu) const {
  for (LinkId id : graph_.out_links(gpu)) {
    const Link& l = graph_.link(id);
    const Device& d = graph_.device(l.to);
    if (l.tier == Tier::nvlink && d.kind == DeviceKind::nvswitch && d.multicast) return l.to;
  }
  return std::nullopt;
}

int Router::domain_of(DeviceId gpu) const {
  const auto i = graph_.gpu_index(gpu);
  return i ? domain_[*i] : -1;
}

std::string Router::host_label(DeviceId a, DeviceId b) const {
  const auto path = cheapest(a, b, Mode::host);
  if (path.empty()) return "N/A";
  int switches = 0;
  bool host_bridge = false, cpu = false;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const Link& l = graph_.link(path[i]);
    if (graph_.device(l.from).kind == DeviceKind::cpu && graph_.device(l.to).kind == DeviceKind::cpu)
      return "SYS";
    if (i == 0) continue;
    const Device& d = graph_.device(l.from);
    if (d.kind == DeviceKind::cpu) cpu = true;
    if (d.kind == DeviceKind::pcie_switch) (d.host_bridge ? host_bridge = true : ++switches);
  }
  if (cpu) return "NODE";
  if (host_bridge) return "PHB";
  return switches >= 2 ? "PXB" : "PIX";
}

std::string Router::matrix_label(DeviceId a, DeviceId b) const {
  if (a == b) return "X";
  const Device& da = graph_.device(a);
  const Device& db = graph_.device(b);
  if (da.node != db.node) return "NET";
  if (da.kind == DeviceKind::gpu && db.kind == DeviceKind::gpu) {
    const auto path = route(a, b);
    const bool fabric = std::all_of(path.begin(), path.end(), [&](LinkId id) {
      return graph_.link(id).tier == Tier::nvlink || graph_.link(id).tier == Tier::xgmi;
    });
    if (fabric) {
      int links = std::numeric_limits<int>::max();
      for (LinkId id : path) links = std::min(links, graph_.link(id).count);
      if (graph_.link(path.front()).tier == Tier::xgmi) return "XGMI";
      return fmt::format("NV{}", links);
    }
  }
  return host_label(a, b);
}

Transport Router::transport(DeviceId src_gpu, DeviceId dst_gpu) const {
  const Device& a = graph_.device(src_gpu);
  if (src_gpu == dst_gpu) return Transport::p2p_nvlink;  // a local copy
  if (a.node != graph_.device(dst_gpu).node) return Transport::net;
  const auto path = route(src_gpu, dst_gpu);
  if (std::all_of(path.begin(), path.end(),
                  [&](LinkId id) { return is_nvlink_class(graph_.link(id).tier); }))
    return Transport::p2p_nvlink;
  const std::string label = host_label(src_gpu, dst_gpu);
  return label == "PIX" || label == "PXB" ? Transport::p2p_pcie : Transport::shm;
}

}  // namespace wiresim::topo
