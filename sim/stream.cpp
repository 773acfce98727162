// DagStream: the builder half of streaming execution (sim/stream.h); the engine half is
// sim/stream_executor.cpp.
#include "sim/stream.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace wiresim::sim {
namespace {

constexpr std::size_t kMaxIndex = std::numeric_limits<std::uint32_t>::max() - 2;

// FNV-1a over the link ids.
std::uint64_t route_hash(std::span<const LinkId> links) {
  std::uint64_t hash = 14695981039346656037ull ^ links.size();
  for (const LinkId l : links) hash = (hash ^ l) * 1099511628211ull;
  return hash ^ (hash >> 29);
}

}  // namespace

DagStream::DagStream(std::span<const LinkSpec> links) : links_(links), routes_(1), route_latency_(1, 0.0) {
  labels_.emplace_back();
  label_index_.emplace("", 0);
}

RouteId DagStream::add_route(std::span<const LinkId> links) {
  if (links.empty()) return 0;
  const std::uint64_t hash = route_hash(links);
  const auto [first, last] = route_index_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    const auto& known = routes_[it->second];
    if (std::equal(known.begin(), known.end(), links.begin(), links.end())) return it->second;
  }
  std::vector<LinkId> route(links.begin(), links.end());
  double latency = 0.0;  // summed in link order, as run_dag sums it
  for (const LinkId l : route) {
    if (l >= links_.size())
      throw std::out_of_range(fmt::format("add_route: link {}, but there are {} links", l, links_.size()));
    latency += links_[l].latency.count();
  }
  std::vector<LinkId> sorted = route;
  std::sort(sorted.begin(), sorted.end());
  if (const auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    throw std::invalid_argument(fmt::format("add_transfer: link {} appears twice in one transfer", *dup));
  if (routes_.size() >= kMaxIndex) throw std::length_error("DagStream: more than 2^32 routes");
  const auto id = static_cast<RouteId>(routes_.size());
  routes_.push_back(std::move(route));
  route_latency_.push_back(latency);
  route_index_.emplace(hash, id);
  return id;
}

NodeId DagStream::add_transfer(std::span<const LinkId> links, Bytes bytes, std::optional<Seconds> latency,
                               BytesPerSec rate_cap, LabelId label, std::uint32_t track, std::uint32_t peer) {
  return add_transfer_via(add_route(links), bytes, latency, rate_cap, label, track, peer);
}

NodeId DagStream::add_transfer_via(RouteId route, Bytes bytes, std::optional<Seconds> latency,
                                   BytesPerSec rate_cap, LabelId label, std::uint32_t track,
                                   std::uint32_t peer) {
  const DagNode node = make_transfer_node(route, bytes, latency, rate_cap, label, track, peer, labels_.size(),
                                         routes_.size());
  push_slot().node = node;
  return static_cast<NodeId>(end_ - 1);
}

NodeId DagStream::add_delay(Seconds duration, LabelId label, std::uint32_t track) {
  const DagNode node = make_delay_node(duration, label, track, labels_.size());
  push_slot().node = node;
  return static_cast<NodeId>(end_ - 1);
}

void DagStream::add_dependency(NodeId before, NodeId after) {
  if (after < batch_ || after >= end_)
    throw std::logic_error(fmt::format("add_dependency({}, {}): {} was not added in this call of the source "
                                       "(nodes {} to {})", before, after, after, batch_, end_));
  if (before >= after)
    throw std::logic_error(fmt::format("add_dependency({}, {}): a stream's dependencies go from a lower id "
                                       "to a higher one", before, after));
  if (before < sealed_)
    throw std::logic_error(fmt::format("add_dependency({}, {}): {} is sealed (seal({}))", before, after,
                                       describe(before), sealed_));
  std::uint32_t e = free_edge_;
  if (e != kNone) {
    free_edge_ = edges_[e].next;
    edges_[e] = Edge{after, kNone};
  } else {
    if (edges_.size() >= kMaxIndex) throw std::length_error("DagStream: more than 2^32 live dependencies");
    e = static_cast<std::uint32_t>(edges_.size());
    edges_.push_back(Edge{after, kNone});
  }
  Slot& from = slot(before);
  if (from.last_edge == kNone) from.first_edge = e;
  else edges_[from.last_edge].next = e;
  from.last_edge = e;
  ++slot(after).waiting;
}

void DagStream::seal(NodeId before) {
  sealed_ = std::max(sealed_, static_cast<NodeId>(std::min<std::size_t>(before, end_)));
}

void DagStream::set_processor(NodeId id, std::uint32_t processor, std::uint32_t priority, bool held) {
  if (id < batch_ || id >= end_)
    throw std::logic_error(fmt::format("set_processor: {} was not added in this call of the source", id));
  if (slot(id).node.kind != NodeKind::delay)
    throw std::invalid_argument(fmt::format("set_processor: {} is a transfer; only delays run on a processor", describe(id)));
  if (processor == TransferDag::kNoProcessor) throw std::invalid_argument("set_processor: processor id 2^32-1 is reserved");
  TransferDag::Binding& b = bindings_[id];
  b.processor = processor;
  b.priority = priority;
  bound_ = true;
  if (!held) free_processor_at(id, processor);
}

void DagStream::free_processor_at(NodeId id, std::uint32_t processor) {
  if (id < batch_ || id >= end_)
    throw std::logic_error(fmt::format("free_processor_at: {} was not added in this call of the source", id));
  if (processor == TransferDag::kNoProcessor) throw std::invalid_argument("free_processor_at: processor id 2^32-1 is reserved");
  TransferDag::Binding& b = bindings_[id];
  if (b.releases != TransferDag::kNoProcessor && b.releases != processor)
    throw std::invalid_argument(fmt::format("free_processor_at: {} already frees processor {}", describe(id), b.releases));
  b.releases = processor;
  bound_ = true;
}

LabelId DagStream::intern_label(std::string_view label) {
  const std::string key(label);
  if (const auto it = label_index_.find(key); it != label_index_.end()) return it->second;
  if (labels_.size() > std::numeric_limits<LabelId>::max()) throw std::length_error("DagStream: more than 65,536 labels");
  const auto id = static_cast<LabelId>(labels_.size());
  labels_.push_back(key);
  label_index_.emplace(key, id);
  return id;
}

// A fresh slot for node end_, doubling the ring when the window fills it.
DagStream::Slot& DagStream::push_slot() {
  if (end_ >= kMaxIndex) throw std::length_error("DagStream: more than 2^32 nodes");
  if (end_ - base_ == slots_.size()) {
    std::vector<Slot> grown(std::max<std::size_t>(64, 2 * slots_.size()));
    const std::size_t mask = grown.size() - 1;
    for (std::size_t id = base_; id < end_; ++id) grown[id & mask] = slots_[id & mask_];
    slots_ = std::move(grown);
    mask_ = mask;
  }
  Slot& s = slots_[end_ & mask_];
  s = Slot{};
  ++end_;
  peak_window_ = std::max(peak_window_, end_ - base_);
  return s;
}

std::string DagStream::describe(NodeId id) const {
  if (id < base_ || id >= end_) return fmt::format("#{}", id);
  const DagNode& n = slot(id).node;
  std::string_view label = labels_[n.label];
  if (label.empty()) label = n.kind == NodeKind::transfer ? "transfer" : "delay";
  return fmt::format("{} #{} (track {})", label, id, n.track);
}

}  // namespace wiresim::sim
