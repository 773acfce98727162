// Streaming execution: a TransferDag built while it runs, a window at a time, so that memory
// follows the nodes in flight, not all nodes ever. run_streaming() plays it with run_dag()'s
// event loop (sim/event_loop.h): same integer times, same order of equal-time events, so
// every node's start and end, the makespan and the link statistics are bit-identical.
//
// The caller's source appends nodes to a DagStream in topological order (ids rise; a node's
// predecessors are added before it, its dependencies in the same call that adds it) and
// seals what is complete: seal(n) promises that no node added later depends on a node
// before n. The engine asks the source for more only when it is about to end a node not
// yet sealed (its list of successors may still grow), so the window is what the source
// adds ahead of the simulation's frontier. A node ends only once sealed, so its list of
// successors is complete when it releases them; the list is then freed, and the node's slot
// is reused once every node before it has ended too (a node that runs long keeps the nodes
// added after it). Nodes with no predecessor start at time 0, so the source adds all of
// them before its first seal(). Delays bound to a processor run one at a time on it, as in
// run_dag (sim/transfer_dag.h); a hold that a later node releases is split in two calls.
//
//   int step = 0;  // a chain of delays, one added per call
//   auto source = [&](DagStream& s) { s.add_delay(Seconds{1e-6});
//     if (step > 0) s.add_dependency(step - 1, step); s.seal(step); return ++step < 10; };
//   StreamResult r = run_streaming(links, source);   // r.totals.makespan = 10 us
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/executor.h"
#include "sim/transfer_dag.h"
#include "sim/units.h"

namespace wiresim::sim {

class DagStream {
 public:
  // Routes are checked against the links the stream will run on.
  explicit DagStream(std::span<const LinkSpec> links);

  // The builder calls are TransferDag's (sim/transfer_dag.h says what each takes, does and
  // checks), with a stream's rules: add_route() checks its links against the stream's, and
  // add_dependency's `after` and the node given to set_processor() or free_processor_at()
  // were added in this call of the source.
  RouteId add_route(std::span<const LinkId> links);
  NodeId add_transfer(std::span<const LinkId> links, Bytes bytes,
                      std::optional<Seconds> latency = std::nullopt,
                      BytesPerSec rate_cap = BytesPerSec::unlimited(), LabelId label = 0,
                      std::uint32_t track = 0, std::uint32_t peer = 0);
  NodeId add_transfer_via(RouteId route, Bytes bytes, std::optional<Seconds> latency = std::nullopt,
                          BytesPerSec rate_cap = BytesPerSec::unlimited(), LabelId label = 0,
                          std::uint32_t track = 0, std::uint32_t peer = 0);
  NodeId add_delay(Seconds duration, LabelId label = 0, std::uint32_t track = 0);
  // Here before < after, and `before` is not sealed.
  void add_dependency(NodeId before, NodeId after);
  // No node added from now on depends on a node before `before` (monotone; capped at size()).
  void seal(NodeId before);
  // As TransferDag's, a hold in two calls: with `held`, the processor stays taken until a
  // node given to free_processor_at() ends.
  void set_processor(NodeId id, std::uint32_t processor, std::uint32_t priority = 0, bool held = false);
  // Node `id` frees `processor` when it ends (the end of a hold).
  void free_processor_at(NodeId id, std::uint32_t processor);
  bool has_processors() const { return bound_; }
  LabelId intern_label(std::string_view label);
  const std::vector<std::string>& labels() const { return labels_; }

  std::size_t size() const { return end_; }     // nodes added so far: the next node's id
  NodeId sealed() const { return sealed_; }
  std::span<const LinkId> route_links(RouteId route) const { return routes_[route]; }
  // Nodes held now (added, not retired) and the most ever held.
  std::size_t window() const { return end_ - base_; }
  std::size_t peak_window() const { return peak_window_; }

 private:
  friend class StreamGraph;
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static constexpr std::uint32_t kStarted = 0xfffffffeu;
  static constexpr std::uint32_t kDone = 0xffffffffu;
  // A node in the window: what it is, and the engine's state for it.
  struct Slot {
    DagNode node;
    SimTime start = 0;
    std::uint32_t waiting = 0;  // predecessors not ended yet, or kStarted, kDone
    std::uint32_t first_edge = kNone, last_edge = kNone;  // its successors, in order added
  };
  struct Edge {
    NodeId after = 0;
    std::uint32_t next = kNone;
  };
  Slot& slot(NodeId id) { return slots_[id & mask_]; }
  const Slot& slot(NodeId id) const { return slots_[id & mask_]; }
  Slot& push_slot();
  // Returns a node's successor list to the free list.
  void free_edges(Slot& s) {
    if (s.first_edge == kNone) return;
    edges_[s.last_edge].next = free_edge_;
    free_edge_ = s.first_edge;
    s.first_edge = s.last_edge = kNone;
  }
  // Forgets the ended nodes at the front of the window.
  void retire() {
    while (base_ < end_ && slots_[base_ & mask_].waiting == kDone) ++base_;
  }
  std::string describe(NodeId id) const;

  std::span<const LinkSpec> links_;
  // Routes: each its own array, so a flow's pointer to its links survives routes added later.
  std::vector<std::vector<LinkId>> routes_;
  std::vector<double> route_latency_;  // per route: its links' latencies summed, in seconds
  std::unordered_multimap<std::uint64_t, RouteId> route_index_;  // by hash of the links
  std::vector<std::string> labels_;
  std::unordered_map<std::string, LabelId> label_index_;  // lookup only, never iterated
  // Nodes [base_, end_) live in a ring of 2^k slots: node id sits at slot id & mask_.
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t base_ = 0, end_ = 0, peak_window_ = 0;
  NodeId sealed_ = 0;
  NodeId batch_ = 0;          // first node of the source's current call
  bool running_ = false;       // the run began: a node added now must have a predecessor
  std::vector<Edge> edges_;    // successor lists, slots reused through free_edge_
  // Bound and freeing nodes not ended yet, by id (lookup only, never iterated).
  std::unordered_map<NodeId, TransferDag::Binding> bindings_;
  bool bound_ = false;         // some node was ever bound or frees a processor
  std::uint32_t free_edge_ = kNone;
};

// Appends the next nodes; returns false once it has added its last (in this call or before).
using DagSource = std::function<bool(DagStream&)>;
// Called as each node ends, with its id, what it was, and when it started and ended.
using NodeCallback = std::function<void(NodeId, const DagNode&, const NodeTiming&)>;

struct StreamResult {
  RunResult totals;              // makespan, links and counters; totals.nodes stays empty
  std::size_t nodes = 0;         // nodes run
  std::size_t peak_window = 0;   // most nodes held at once (added, not retired)
};

// Plays the source's DAG (no processor bindings) as run_dag would play it whole.
// RunOptions::progress gets the nodes ended and the nodes added so far.
StreamResult run_streaming(std::span<const LinkSpec> links, const DagSource& source,
                           const RunOptions& options = {}, const NodeCallback& on_node = {});

}  // namespace wiresim::sim
