// The one event loop of run_dag (sim/executor.cpp) and run_streaming (sim/stream_executor.cpp):
// a DAG played whole and the same DAG streamed go through the same steps, so their results
// are bit-identical. It plays a Graph: a frozen TransferDag, or a DagStream's window that
// grows as the loop asks for more.
//
// The event queue holds starts of flows and ends of delays; the network holds flows. Each
// instant is handled as one batch: network completions, then queued events in the order
// they were pushed, then one reshare of what changed. What a Graph provides:
//   prepare()                   before the first event: every node with no predecessor added
//   size()                      nodes added so far
//   waiting(id)                 a reference: predecessors not ended yet, or kNodeStarted, kNodeDone
//   node(id), route_links(route), route_latency(route) (its links' latencies, seconds)
//   set_start(id, time), start(id) (as Seconds)
//   has_processors(), binding(id), take_release(id) (the processor the node frees, if any)
//   before_end(id)              the node's successors must be known once this returns
//   ended(id, time, f)          records the end, calls f on each successor, may forget the node
//   grow()                      nothing is in flight: true if nodes may have been added
//   unfinished(done)            not every node ended: throws
//   describe(id)                a node's name for messages
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/event_queue.h"
#include "sim/executor.h"
#include "sim/network.h"
#include "sim/transfer_dag.h"
#include "sim/units.h"

namespace wiresim::sim {

// An exact picosecond time rounded up to the integer picosecond, forgiving rounding noise.
inline SimTime ceil_ps(double ps) { return static_cast<SimTime>(std::ceil(ps - 1e-6)); }

// The links' capacities in bytes/s; throws std::invalid_argument for a capacity that is not
// finite and > 0 or a latency that is not finite and >= 0.
std::vector<double> link_capacities(std::span<const LinkSpec> links);

// A node's state beyond its count of predecessors not ended yet.
constexpr std::uint32_t kNodeStarted = std::numeric_limits<std::uint32_t>::max() - 1;
constexpr std::uint32_t kNodeDone = std::numeric_limits<std::uint32_t>::max();

template <class Graph>
class EventLoop {
 public:
  // The network is built (and the links checked) before the graph.
  template <class... GraphArgs>
  EventLoop(std::span<const LinkSpec> links, const RunOptions& options, GraphArgs&&... graph_args)
      : links_(links), network_(link_capacities(links)), audit_(options.check_invariants || kDebugBuild),
        progress_(options.progress), graph_(std::forward<GraphArgs>(graph_args)...) {
    network_.set_audit(audit_);
    network_.set_window(options.window_flows, options.window_slack);
  }

  // Plays the graph to its end. RunResult::nodes stays empty: timings are the graph's.
  RunResult run() {
    graph_.prepare();
    // The transfers ready now all flow at once (bar those that end first): room for them,
    // in the network's flow table and on each of their links.
    std::size_t ready = 0;
    std::vector<std::uint32_t> on_link(links_.size(), 0);
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (graph_.waiting(id) != 0 || graph_.node(id).kind != NodeKind::transfer) continue;
      ++ready;
      for (const LinkId l : graph_.route_links(graph_.node(id).route))
        if (l < on_link.size()) ++on_link[l];
    }
    network_.reserve(ready, on_link);
    for (NodeId id = 0; id < graph_.size(); ++id)
      if (graph_.waiting(id) == 0) start(id, 0);
    settle(0);
    for (;;) {
      const std::optional<SimTime> next_flow = network_.next_completion();
      if (queue_.empty() && !next_flow) {
        if (graph_.grow()) continue;
        break;
      }
      SimTime now = next_flow.value_or(std::numeric_limits<SimTime>::max());
      if (!queue_.empty()) now = std::min(now, queue_.top_time());
      step(now);
      if (progress_ && (++steps_ & 0xffff) == 0) progress_(done_, graph_.size());
    }
    if (done_ != graph_.size()) graph_.unfinished(done_);
    if (audit_) network_.audit_finish();
    return finish_result();
  }

  Graph& graph() { return graph_; }

 private:
  static constexpr std::uint8_t kActivate = 0;  // a transfer's latency has passed: its bytes start
  static constexpr std::uint8_t kEnd = 1;       // a delay, or a transfer with no bytes to share, ends
#ifdef NDEBUG
  static constexpr bool kDebugBuild = false;
#else
  static constexpr bool kDebugBuild = true;
#endif

  void step(SimTime now) {
    if (audit_) network_.audit_advance(now);
    completed_.clear();
    network_.take_completed(now, completed_);
    for (const NodeId id : completed_) end(id, now);
    result_.events += completed_.size();
    while (!queue_.empty() && queue_.top_time() == now) {
      const Event e = queue_.pop();
      ++result_.events;
      if (e.tag == kActivate) add_flow(e.payload, now);
      else end(e.payload, now);
    }
    settle(now);
  }

  // After the instant's changes: one reshare, then the statistics and checks.
  void settle(SimTime now) {
    if (!idle_with_work_.empty()) dispatch(now);
    network_.reshare(now);
    result_.peak_concurrent_transfers = std::max(result_.peak_concurrent_transfers, network_.active_flows());
    if (audit_) network_.audit_sharing();
  }

  void start(NodeId id, SimTime now) {
    graph_.waiting(id) = kNodeStarted;
    graph_.set_start(id, now);
    const DagNode& node = graph_.node(id);
    if (node.kind == NodeKind::delay) {
      const TransferDag::Binding bound = graph_.binding(id);
      if (bound.processor != TransferDag::kNoProcessor) {
        // Queued until the end of the instant, so that every node ready now competes.
        Processor& p = processors_[bound.processor];
        p.ready.push((static_cast<std::uint64_t>(bound.priority) << 32) | id);
        if (!p.busy) idle_with_work_.push_back(bound.processor);
        return;
      }
      queue_.push(now + to_sim_time(node.latency), id, kEnd);
      return;
    }
    const double begin_ps = flow_start_ps(node, now);
    const bool shares = node.bytes.count() > 0.0 && (node.route != 0 || !node.rate_cap.is_unlimited());
    const SimTime at = ceil_ps(begin_ps);
    if (!shares) queue_.push(at, id, kEnd);
    else if (at == now)
      network_.add_flow(graph_.route_links(node.route), node.bytes.count(), node.rate_cap.count(), begin_ps, id, now);
    else queue_.push(at, id, kActivate);
  }

  // Exact picoseconds at which a transfer's first byte leaves: its start plus its latency.
  double flow_start_ps(const DagNode& node, SimTime start) const {
    const double latency = node.explicit_latency ? node.latency.count() : graph_.route_latency(node.route);
    return static_cast<double>(start) + latency * 1e12;
  }

  void add_flow(NodeId id, SimTime now) {
    const DagNode& node = graph_.node(id);
    // The start is an integer picosecond stored as seconds; llround recovers it exactly.
    const auto start = static_cast<SimTime>(std::llround(graph_.start(id).count() * 1e12));
    network_.add_flow(graph_.route_links(node.route), node.bytes.count(), node.rate_cap.count(),
                      flow_start_ps(node, start), id, now);
  }

  void end(NodeId id, SimTime now) {
    graph_.before_end(id);
    std::uint32_t& waiting = graph_.waiting(id);
    if (waiting != kNodeStarted)
      throw std::logic_error(fmt::format("{} ended twice or before it started", graph_.describe(id)));
    waiting = kNodeDone;
    makespan_ = std::max(makespan_, now);
    ++done_;
    if (graph_.has_processors()) release(graph_.take_release(id));
    graph_.ended(id, now, [&](NodeId next) {
      std::uint32_t& left = graph_.waiting(next);
      if (audit_ && (left == 0 || left >= kNodeStarted))
        throw std::logic_error(fmt::format("{} released more often than it has predecessors",
                                           graph_.describe(next)));
      if (--left == 0) start(next, now);
    });
  }

  // A node that frees a processor ended (the bound node itself, or the end of what it holds
  // the processor for): the processor is free for the next waiting node.
  void release(std::uint32_t freed) {
    if (freed == TransferDag::kNoProcessor) return;
    Processor& p = processors_[freed];
    p.busy = false;
    if (!p.ready.empty()) idle_with_work_.push_back(freed);
  }

  // End of an instant: each idle processor with waiting nodes starts the lowest priority one.
  void dispatch(SimTime now) {
    std::sort(idle_with_work_.begin(), idle_with_work_.end());  // a reproducible order
    for (const std::uint32_t id : idle_with_work_) {
      Processor& p = processors_[id];
      if (p.busy || p.ready.empty()) continue;
      const auto next = static_cast<NodeId>(p.ready.top() & 0xffffffffu);
      p.ready.pop();
      p.busy = true;
      graph_.set_start(next, now);
      queue_.push(now + to_sim_time(graph_.node(next).latency), next, kEnd);
    }
    idle_with_work_.clear();
  }

  RunResult finish_result() {
    result_.makespan = to_seconds(makespan_);
    result_.components_solved = network_.components_solved();
    result_.flows_resolved = network_.flows_resolved();
    result_.local_reshares = network_.local_reshares();
    result_.approximate = network_.approximate();
    result_.links.resize(links_.size());
    for (LinkId l = 0; l < links_.size(); ++l) {
      LinkStats& s = result_.links[l];
      s.carried = Bytes{network_.carried(l)};
      s.busy = to_seconds(network_.busy(l));
      if (makespan_ > 0) s.utilisation = s.carried.count() / (links_[l].capacity.count() * result_.makespan.count());
    }
    return std::move(result_);
  }

  std::span<const LinkSpec> links_;
  Network network_;
  EventQueue queue_;
  bool audit_;
  const std::function<void(std::size_t, std::size_t)>& progress_;
  Graph graph_;
  std::uint64_t steps_ = 0;
  struct Processor {
    bool busy = false;
    // Ready nodes waiting: (priority << 32 | id), smallest first.
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> ready;
  };
  std::unordered_map<std::uint32_t, Processor> processors_;  // lookup only, never iterated
  std::vector<std::uint32_t> idle_with_work_;  // processors to dispatch at the end of the instant
  std::vector<std::uint32_t> completed_;
  std::size_t done_ = 0;
  SimTime makespan_ = 0;
  RunResult result_;
};

}  // namespace wiresim::sim
