#include "sim/transfer_dag.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace wiresim::sim {
namespace {

constexpr std::size_t kMaxIndex = std::numeric_limits<std::uint32_t>::max() - 1;
static_assert(sizeof(DagNode) == 40, "DagNode is meant to stay compact");

// A route lists each link once: a link twice would be counted as two shares of itself.
void check_distinct(std::span<const LinkId> links) {
  if (links.size() <= 16) {
    for (std::size_t i = 0; i < links.size(); ++i)
      for (std::size_t j = i + 1; j < links.size(); ++j)
        if (links[i] == links[j])
          throw std::invalid_argument(
              fmt::format("add_transfer: link {} appears twice in one transfer", links[i]));
    return;
  }
  std::vector<LinkId> sorted(links.begin(), links.end());
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end())
    throw std::invalid_argument(
        fmt::format("add_transfer: link {} appears twice in one transfer", *dup));
}

// Merges `edges` into the successor lists behind the edges already there: a stable
// counting sort by source, so successors keep the order their edges were added in.
void merge_successors(std::size_t nodes, std::vector<std::uint32_t>& offsets,
                      std::vector<NodeId>& lists, const std::vector<std::pair<NodeId, NodeId>>& edges) {
  const std::size_t old_nodes = offsets.empty() ? 0 : offsets.size() - 1;
  std::vector<std::uint32_t> next(nodes + 1, 0);
  for (std::size_t n = 0; n < old_nodes; ++n) next[n + 1] = offsets[n + 1] - offsets[n];
  for (const auto& e : edges) ++next[e.first + 1];
  for (std::size_t n = 0; n < nodes; ++n) next[n + 1] += next[n];
  std::vector<NodeId> merged(next[nodes]);
  for (std::size_t n = 0; n < old_nodes; ++n)
    std::copy(lists.begin() + offsets[n], lists.begin() + offsets[n + 1], merged.begin() + next[n]);
  // next[n] now serves as the fill cursor of n's new edges, and ends as the offset of n + 1.
  for (std::size_t n = 0; n < old_nodes; ++n) next[n] += offsets[n + 1] - offsets[n];
  for (const auto& [a, b] : edges) merged[next[a]++] = b;
  for (std::size_t n = nodes; n > 0; --n) next[n] = next[n - 1];
  next[0] = 0;
  offsets = std::move(next);
  lists = std::move(merged);
}

}  // namespace

TransferDag::TransferDag() {
  labels_.emplace_back();
  label_index_.emplace("", 0);
}

void TransferDag::set_processor(NodeId id, std::uint32_t processor, std::uint32_t priority,
                                std::optional<NodeId> held_until) {
  if (id >= nodes_.size()) throw std::out_of_range(fmt::format("set_processor: no node {}", id));
  if (nodes_[id].kind != NodeKind::delay)
    throw std::invalid_argument(fmt::format("set_processor: {} is a transfer; only delays run on a processor", describe(id)));
  if (processor == kNoProcessor) throw std::invalid_argument("set_processor: processor id 2^32-1 is reserved");
  const NodeId release = held_until.value_or(id);
  if (release >= nodes_.size()) throw std::out_of_range(fmt::format("set_processor: no node {} to hold until", release));
  if (bindings_.size() <= std::max(id, release)) bindings_.resize(std::max(id, release) + 1);
  if (bindings_[release].releases != kNoProcessor && bindings_[release].releases != processor)
    throw std::invalid_argument(fmt::format("set_processor: {} already frees processor {}", describe(release),
                                            bindings_[release].releases));
  bindings_[id].processor = processor;
  bindings_[id].priority = priority;
  bindings_[release].releases = processor;
}

NodeId TransferDag::append(const TransferDag& part, std::span<const std::uint32_t> tracks) {
  const auto rename = [&](std::uint32_t t) {
    return tracks.empty() ? t : tracks[std::min<std::size_t>(t, tracks.size() - 1)];
  };
  const NodeId offset = static_cast<NodeId>(size());
  for (NodeId i = 0; i < part.size(); ++i) {
    const DagNode& n = part.node(i);
    const LabelId label = intern_label(part.labels()[n.label]);
    if (n.kind == NodeKind::delay)
      add_delay(n.latency, label, rename(n.track));
    else
      add_transfer_via(add_route(part.links(i)), n.bytes,
                       part.latency_is_explicit(i) ? std::optional<Seconds>(n.latency) : std::nullopt, n.rate_cap,
                       label, rename(n.track), rename(n.peer));
  }
  for (NodeId i = 0; i < part.size(); ++i)
    for (NodeId s : part.successors(i)) add_dependency(offset + i, offset + s);
  return offset;
}

NodeId TransferDag::append(const TransferDag& part, std::span<const std::uint32_t> tracks,
                           const std::function<std::uint32_t(std::uint32_t)>& processor) {
  const NodeId offset = append(part, tracks);
  if (!part.has_processors()) return offset;
  if (bindings_.size() < size()) bindings_.resize(size());
  for (NodeId i = 0; i < part.size(); ++i) {
    const Binding b = part.binding(i);
    Binding& to = bindings_[offset + i];
    if (b.processor != kNoProcessor) to.processor = processor(b.processor), to.priority = b.priority;
    if (b.releases != kNoProcessor) to.releases = processor(b.releases);
  }
  return offset;
}

NodeId TransferDag::add_transfer(std::span<const LinkId> links, Bytes bytes,
                                 std::optional<Seconds> latency, BytesPerSec rate_cap,
                                 LabelId label, std::uint32_t track, std::uint32_t peer) {
  return add_transfer_via(add_route(links), bytes, latency, rate_cap, label, track, peer);
}

namespace {
// FNV-1a over the link ids.
std::uint64_t route_hash(std::span<const LinkId> links) {
  std::uint64_t hash = 14695981039346656037ull ^ links.size();
  for (const LinkId l : links) hash = (hash ^ l) * 1099511628211ull;
  return hash ^ (hash >> 29);
}
}  // namespace

// The slot holding the route equal to `links`, or the free slot where it would go.
std::size_t TransferDag::find_route_slot(std::span<const LinkId> links) const {
  const std::size_t mask = route_slots_.size() - 1;
  for (std::size_t i = route_hash(links) & mask;; i = (i + 1) & mask) {
    const RouteId r = route_slots_[i];
    if (r == 0) return i;
    const auto known = route_links(r);
    if (std::equal(known.begin(), known.end(), links.begin(), links.end())) return i;
  }
}

void TransferDag::reserve_routes(std::size_t count) {
  std::size_t slots = 64;
  while (slots < 2 * count + 2) slots *= 2;
  if (slots <= route_slots_.size()) return;
  std::vector<RouteId> old(slots, 0);
  old.swap(route_slots_);
  for (const RouteId r : old)
    if (r != 0) route_slots_[find_route_slot(route_links(r))] = r;
  route_offsets_.reserve(count + 1);
}

RouteId TransferDag::add_route(std::span<const LinkId> links) {
  if (links.empty()) return 0;
  if (2 * routes() + 2 > route_slots_.size()) reserve_routes(std::max<std::size_t>(64, routes()) * 2);  // at most half full
  const std::size_t slot = find_route_slot(links);
  if (route_slots_[slot] != 0) return route_slots_[slot];
  check_distinct(links);
  if (link_pool_.size() + links.size() >= kMaxIndex || routes() >= kMaxIndex)
    throw std::length_error("TransferDag: more than 2^32 routes or route links");
  const auto id = static_cast<RouteId>(routes());
  link_pool_.insert(link_pool_.end(), links.begin(), links.end());
  route_offsets_.push_back(static_cast<std::uint32_t>(link_pool_.size()));
  route_slots_[slot] = id;
  return id;
}

void refuse_node(NodeFault fault, const char* call, Bytes bytes, Seconds latency, BytesPerSec rate_cap,
                 LabelId label, RouteId route) {
  switch (fault) {
    case NodeFault::bytes:
      throw std::invalid_argument(fmt::format("{}: bytes must be finite and >= 0, got {}", call, bytes.count()));
    case NodeFault::latency:
      throw std::invalid_argument(fmt::format("{}: latency must be finite and >= 0, got {} s", call, latency.count()));
    case NodeFault::duration:
      throw std::invalid_argument(fmt::format("{}: duration must be finite and >= 0, got {} s", call, latency.count()));
    case NodeFault::rate_cap:
      throw std::invalid_argument(fmt::format("{}: rate_cap must be > 0, got {} B/s", call, rate_cap.count()));
    case NodeFault::label: throw std::out_of_range(fmt::format("{}: unknown label {}", call, label));
    case NodeFault::route: throw std::out_of_range(fmt::format("{}: unknown route {}", call, route));
    case NodeFault::none: break;
  }
  throw std::logic_error(fmt::format("{}: refused with no fault", call));
}

NodeId TransferDag::add_transfer_via(RouteId route, Bytes bytes, std::optional<Seconds> latency,
                                     BytesPerSec rate_cap, LabelId label, std::uint32_t track,
                                     std::uint32_t peer) {
  return push_node(make_transfer_node(route, bytes, latency, rate_cap, label, track, peer, labels_.size(), routes()));
}

NodeId TransferDag::add_delay(Seconds duration, LabelId label, std::uint32_t track) {
  return push_node(make_delay_node(duration, label, track, labels_.size()));
}

void TransferDag::add_dependency(NodeId before, NodeId after) {
  if (before >= nodes_.size() || after >= nodes_.size())
    throw std::out_of_range(fmt::format("add_dependency({}, {}): the DAG has {} nodes", before,
                                        after, nodes_.size()));
  edges_.emplace_back(before, after);
  ++pred_count_[after];
  frozen_ = false;
}

LabelId TransferDag::intern_label(std::string_view label) {
  const std::string key(label);
  if (const auto it = label_index_.find(key); it != label_index_.end()) return it->second;
  if (labels_.size() > std::numeric_limits<LabelId>::max())
    throw std::length_error("TransferDag: more than 65,536 labels");
  const auto id = static_cast<LabelId>(labels_.size());
  labels_.push_back(key);
  label_index_.emplace(key, id);
  return id;
}

std::span<const NodeId> TransferDag::successors(NodeId id) const {
  freeze();
  return {succ_.data() + succ_offsets_[id], succ_offsets_[id + 1] - succ_offsets_[id]};
}

std::span<const NodeId> TransferDag::predecessors(NodeId id) const {
  freeze();
  if (!pred_built_) {
    // Transpose the successor lists: each node's predecessors come in order of id.
    const std::size_t n = nodes_.size();
    pred_offsets_.assign(n + 1, 0);
    for (const NodeId s : succ_) ++pred_offsets_[s + 1];
    for (std::size_t i = 0; i < n; ++i) pred_offsets_[i + 1] += pred_offsets_[i];
    pred_.resize(succ_.size());
    std::vector<std::uint32_t> fill(pred_offsets_.begin(), pred_offsets_.end() - 1);
    for (NodeId a = 0; a < n; ++a)
      for (std::uint32_t i = succ_offsets_[a]; i < succ_offsets_[a + 1]; ++i) pred_[fill[succ_[i]]++] = a;
    pred_built_ = true;
  }
  return {pred_.data() + pred_offsets_[id], pred_offsets_[id + 1] - pred_offsets_[id]};
}

void TransferDag::freeze() const {
  if (frozen_) return;
  merge_successors(nodes_.size(), succ_offsets_, succ_, edges_);
  edges_.clear();
  edges_.shrink_to_fit();
  pred_built_ = false;
  pred_offsets_.clear();
  pred_.clear();
  pred_offsets_.shrink_to_fit();
  pred_.shrink_to_fit();
  frozen_ = true;
}

void TransferDag::reserve(std::size_t nodes, std::size_t links, std::size_t dependencies) {
  nodes_.reserve(nodes);
  pred_count_.reserve(nodes);
  link_pool_.reserve(links);
  edges_.reserve(dependencies);
}

std::string TransferDag::describe(NodeId id) const {
  if (id >= nodes_.size()) return fmt::format("#{} (no such node)", id);
  const DagNode& n = nodes_[id];
  std::string_view label = labels_[n.label];
  if (label.empty()) label = n.kind == NodeKind::transfer ? "transfer" : "delay";
  return fmt::format("{} #{} (track {})", label, id, n.track);
}

}  // namespace wiresim::sim
