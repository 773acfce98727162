// TransferDag: what to simulate. Nodes are transfers (bytes over a set of links) or fixed
// delays (launch, synchronisation, reduction arithmetic); edges are dependencies. A node
// starts when all its predecessors have ended. run_dag() (sim/executor.h) plays it on a
// Network and records each node's start and end.
//
// A delay node may be bound to a processor (a GPU's compute engine): it then runs only while
// no other node bound to the same processor runs. When the processor frees, the waiting
// ready node with the lowest priority value starts (ties: lowest id) — greedy list
// scheduling, so a later micro-batch's kernel fills the gap while an earlier one waits on
// the wire. A waiting node's start is when it got the processor, not when it became ready.
//
// Routes are interned: a route (its list of links) is stored once, however many transfers
// cross it, and a transfer names it by RouteId. add_route() returns the id of an equal
// route already stored; a builder that sends many chunks between the same ranks asks once
// and then adds transfers with add_transfer_via() at no cost per link.
//
// A transfer pays its latency first (by default the sum of its links' latencies, which is
// right for a path; a multicast tree passes its deepest root-to-leaf latency explicitly),
// then its bytes flow at the max-min fair rate it is allotted on every one of its links,
// capped by rate_cap. Transfers with no links take only their latency (and, if they have a
// rate cap, bytes / rate_cap more: a local copy at engine speed).
//
//   TransferDag dag;
//   auto a = dag.add_transfer({{0, 1}}, Bytes{1e6});          // over links 0 and 1
//   auto b = dag.add_delay(Seconds{2e-6});                    // e.g. a reduction
//   dag.add_dependency(a, b);
//   auto r = dag.add_route({{0, 1}});  dag.add_transfer_via(r, Bytes{1e6});  // same links as a
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/units.h"

namespace wiresim::sim {

using LinkId = std::uint32_t;
using NodeId = std::uint32_t;
using LabelId = std::uint16_t;
using RouteId = std::uint32_t;  // 0 is the empty route (no links)

enum class NodeKind : std::uint8_t { transfer, delay };

// Compact by design (40 bytes): collectives at 16k ranks make tens of millions of nodes.
struct DagNode {
  NodeKind kind = NodeKind::delay;
  bool explicit_latency = true;  // false: the route's summed link latencies, resolved at run
  LabelId label = 0;           // index into TransferDag::labels(): what the node is ("ring step")
  std::uint32_t track = 0;     // who does it, for traces (a GPU index, say)
  std::uint32_t peer = 0;      // the other end of a transfer, for traces (informational)
  RouteId route = 0;           // its links: TransferDag::route_links(route)
  Bytes bytes;                 // transfer: payload on every link
  Seconds latency;             // transfer: paid before bytes flow; delay: its duration
  BytesPerSec rate_cap = BytesPerSec::unlimited();
};

// What is wrong with a node's arguments: the first check each fails, in the order listed.
enum class NodeFault : std::uint8_t { none, bytes, latency, duration, rate_cap, label, route };
// Throws for `fault`: std::invalid_argument for bytes, a latency or a duration (passed as
// `latency`) that is not finite and >= 0 or a rate_cap that is not > 0, std::out_of_range for
// an unknown label or route. `call` names the builder call ("add_transfer", "add_delay").
[[noreturn]] void refuse_node(NodeFault fault, const char* call, Bytes bytes, Seconds latency,
                              BytesPerSec rate_cap, LabelId label, RouteId route);

// A transfer's node, its arguments checked (refuse_node() says how): what TransferDag and
// DagStream add. `labels` and `routes` are how many the builder holds. Inline: it runs for
// every transfer a builder adds.
inline DagNode make_transfer_node(RouteId route, Bytes bytes, std::optional<Seconds> latency,
                                  BytesPerSec rate_cap, LabelId label, std::uint32_t track,
                                  std::uint32_t peer, std::size_t labels, std::size_t routes) {
  const auto bad = [](double x) { return !(x >= 0.0) || !std::isfinite(x); };
  const NodeFault fault = bad(bytes.count()) ? NodeFault::bytes
                          : latency && bad(latency->count()) ? NodeFault::latency
                          : !(rate_cap.count() > 0.0) ? NodeFault::rate_cap
                          : label >= labels ? NodeFault::label
                          : route >= routes ? NodeFault::route : NodeFault::none;
  if (fault != NodeFault::none)
    refuse_node(fault, "add_transfer", bytes, latency.value_or(Seconds{0.0}), rate_cap, label, route);
  DagNode n;
  n.kind = NodeKind::transfer;
  n.explicit_latency = latency.has_value();
  n.label = label;
  n.track = track;
  n.peer = peer;
  n.route = route;
  n.bytes = bytes;
  n.latency = latency.value_or(Seconds{0.0});
  n.rate_cap = rate_cap;
  return n;
}

// A delay's node, checked the same way.
inline DagNode make_delay_node(Seconds duration, LabelId label, std::uint32_t track, std::size_t labels) {
  const bool bad = !(duration.count() >= 0.0) || !std::isfinite(duration.count());
  const NodeFault fault = bad ? NodeFault::duration : label >= labels ? NodeFault::label : NodeFault::none;
  if (fault != NodeFault::none)
    refuse_node(fault, "add_delay", Bytes{0.0}, duration, BytesPerSec::unlimited(), label, 0);
  DagNode n;
  n.kind = NodeKind::delay;
  n.label = label;
  n.track = track;
  n.latency = duration;
  return n;
}

class TransferDag {
 public:
  TransferDag();

  // Adds a transfer over `links` (a path or a multicast tree: one rate on every link).
  // latency defaults to the sum of the links' latencies, known only to the network, so it
  // is resolved when the DAG runs; pass it to override.
  NodeId add_transfer(std::span<const LinkId> links, Bytes bytes,
                      std::optional<Seconds> latency = std::nullopt,
                      BytesPerSec rate_cap = BytesPerSec::unlimited(), LabelId label = 0,
                      std::uint32_t track = 0, std::uint32_t peer = 0);
  // The same over a route from add_route(): no copy, no check of its links again.
  NodeId add_transfer_via(RouteId route, Bytes bytes, std::optional<Seconds> latency = std::nullopt,
                          BytesPerSec rate_cap = BytesPerSec::unlimited(), LabelId label = 0,
                          std::uint32_t track = 0, std::uint32_t peer = 0);
  // Stores a route (each link at most once) or finds the equal one stored; 0 when empty.
  RouteId add_route(std::span<const LinkId> links);
  std::span<const LinkId> route_links(RouteId route) const {
    return {link_pool_.data() + route_offsets_[route], route_offsets_[route + 1] - route_offsets_[route]};
  }
  std::size_t routes() const { return route_offsets_.size() - 1; }
  NodeId add_delay(Seconds duration, LabelId label = 0, std::uint32_t track = 0);
  // `after` starts only once `before` has ended.
  void add_dependency(NodeId before, NodeId after);
  // Splices `part` in: a copy of its nodes (labels re-interned) and dependencies, returning
  // the id its node 0 got (its others follow in order). Tracks and peers are renamed through
  // `tracks` (part track t becomes tracks[min(t, size - 1)]; empty: kept). The part's
  // processor bindings are not carried: processors are the receiving DAG's to assign.
  NodeId append(const TransferDag& part, std::span<const std::uint32_t> tracks = {});
  // The same with the part's processor bindings carried, each processor renamed through
  // `processor` (a job spliced beside others keeps its GPUs, and its communicators stay its
  // own): node k bound to p is bound to processor(p), and what it held it still holds.
  NodeId append(const TransferDag& part, std::span<const std::uint32_t> tracks,
                const std::function<std::uint32_t(std::uint32_t)>& processor);
  // Binds delay node `id` to `processor` (one node at a time on it; lowest priority first).
  // With `held_until`, the processor stays taken after `id` ends, until node `held_until`
  // ends: a communicator that runs one whole collective (launch to last arrival) at a time.
  void set_processor(NodeId id, std::uint32_t processor, std::uint32_t priority = 0,
                     std::optional<NodeId> held_until = std::nullopt);
  struct Binding {
    std::uint32_t processor = kNoProcessor;
    std::uint32_t priority = 0;
    std::uint32_t releases = kNoProcessor;  // the processor this node frees when it ends
  };
  static constexpr std::uint32_t kNoProcessor = 0xffffffffu;
  // processor == kNoProcessor when unbound. Costs no memory for a DAG with no bound node.
  Binding binding(NodeId id) const { return id < bindings_.size() ? bindings_[id] : Binding{}; }
  bool has_processors() const { return !bindings_.empty(); }

  // Labels name what nodes are ("all_reduce ring step", "launch"); interned, 65,535 at most.
  LabelId intern_label(std::string_view label);
  const std::vector<std::string>& labels() const { return labels_; }

  std::size_t size() const { return nodes_.size(); }
  const DagNode& node(NodeId id) const { return nodes_[id]; }
  std::span<const LinkId> links(NodeId id) const { return route_links(nodes_[id].route); }
  bool latency_is_explicit(NodeId id) const { return nodes_[id].explicit_latency; }
  // Successors of a node (available after freeze(); run_dag freezes on its own).
  std::span<const NodeId> successors(NodeId id) const;
  std::uint32_t predecessor_count(NodeId id) const { return pred_count_[id]; }
  std::span<const NodeId> predecessors(NodeId id) const;
  // Builds the compressed successor/predecessor lists; adding nodes afterwards unfreezes.
  // (The predecessor lists are built on first use: running a DAG needs only successors.)
  void freeze() const;
  // Makes room for this many nodes, route links (all routes together) and dependencies,
  // so that building a large DAG does not reallocate, and briefly double, its arrays.
  void reserve(std::size_t nodes, std::size_t links, std::size_t dependencies);
  // Makes room for this many distinct routes (their table would otherwise grow by doubling).
  void reserve_routes(std::size_t routes);
  // A name for messages: "<label> #<id> (track t)".
  std::string describe(NodeId id) const;

 private:
  NodeId push_node(const DagNode& node) {
    if (nodes_.size() >= kMaxNodes) throw std::length_error("TransferDag: more than 2^32 nodes");
    nodes_.push_back(node);
    pred_count_.push_back(0);
    frozen_ = false;
    return static_cast<NodeId>(nodes_.size() - 1);
  }
  static constexpr std::size_t kMaxNodes = 0xffffffffu - 1;
  std::vector<DagNode> nodes_;
  std::vector<LinkId> link_pool_;  // every route's links, back to back
  // Route r is link_pool_[route_offsets_[r], route_offsets_[r + 1]); route 0 is empty.
  std::vector<std::uint32_t> route_offsets_{0, 0};
  // Interning: an open-addressing table of route ids by a hash of their links (0 = free
  // slot; at most half full), 8 bytes a route at most.
  std::vector<RouteId> route_slots_;
  std::size_t find_route_slot(std::span<const LinkId> links) const;
  std::vector<Binding> bindings_;  // empty, or one per node up to the last bound one
  // Edges added since the last freeze(); freeze() merges them into the CSR lists and
  // empties this, so a frozen DAG holds each edge twice (4 bytes each way), not three times.
  mutable std::vector<std::pair<NodeId, NodeId>> edges_;
  std::vector<std::uint32_t> pred_count_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, LabelId> label_index_;  // lookup only, never iterated
  // CSR adjacency, built lazily by freeze(): succ_[succ_offsets_[n], succ_offsets_[n + 1]).
  // Edges keep the order they were added in, so runs are reproducible.
  mutable bool frozen_ = false;
  mutable bool pred_built_ = false;
  mutable std::vector<std::uint32_t> succ_offsets_, pred_offsets_;
  mutable std::vector<NodeId> succ_, pred_;
};

}  // namespace wiresim::sim
