// run_streaming: the engine half of streaming execution (sim/stream.h). Its event loop is
// run_dag's (sim/executor.cpp) step for step — network completions, then queued events in
// push order, then one reshare per instant — over a DagStream's window instead of a frozen
// DAG, asking the source for more before it ends a node that is not sealed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/event_queue.h"
#include "sim/executor_support.h"
#include "sim/network.h"
#include "sim/stream.h"

namespace wiresim::sim {

class StreamExecutor {
 public:
  StreamExecutor(std::span<const LinkSpec> links, const DagSource& source, const RunOptions& options,
                 const NodeCallback& on_node)
      : links_(links), source_(source), stream_(links), network_(link_capacities(links)),
        audit_(options.check_invariants || kDebugBuild), progress_(options.progress), on_node_(on_node) {
    network_.set_audit(audit_);
    network_.set_window(options.window_flows, options.window_slack);
  }

  StreamResult run() {
    // Nodes with no predecessor start at 0, in id order: all of them come before the first seal.
    do pull(); while (stream_.sealed_ == 0 && !exhausted_);
    stream_.running_ = true;
    for (NodeId id = 0; id < stream_.end_; ++id)
      if (stream_.slot(id).waiting == 0) start(id, 0);
    settle(0);
    for (;;) {
      const std::optional<SimTime> next_flow = network_.next_completion();
      if (queue_.empty() && !next_flow) {
        if (exhausted_) break;
        pull();  // nothing runs: what comes now could only be a node with no predecessor
        continue;
      }
      SimTime now = next_flow.value_or(std::numeric_limits<SimTime>::max());
      if (!queue_.empty()) now = std::min(now, queue_.top_time());
      step(now);
      if (progress_ && (++steps_ & 0xffff) == 0) progress_(done_, stream_.end_);
    }
    if (done_ != stream_.end_)
      throw std::logic_error(fmt::format("run_streaming: {} of {} nodes never ended", stream_.end_ - done_,
                                         stream_.end_));
    if (audit_) network_.audit_finish();
    return finish_result();
  }

 private:
  static constexpr std::uint8_t kActivate = 0;  // a transfer's latency has passed: its bytes start
  static constexpr std::uint8_t kEnd = 1;       // a delay, or a transfer with no bytes to share, ends
  static constexpr std::uint32_t kStarted = DagStream::kStarted;
  static constexpr std::uint32_t kDone = DagStream::kDone;
#ifdef NDEBUG
  static constexpr bool kDebugBuild = false;
#else
  static constexpr bool kDebugBuild = true;
#endif

  // One call of the source. Nodes it added without a predecessor are an error once the
  // run began (they would have started at 0).
  void pull() {
    const std::size_t before = stream_.end_;
    const NodeId sealed = stream_.sealed_;
    stream_.batch_ = static_cast<NodeId>(before);
    const bool more = source_(stream_);
    if (!more) {
      exhausted_ = true;
      stream_.sealed_ = static_cast<NodeId>(stream_.end_);
    } else if (stream_.end_ == before && stream_.sealed_ == sealed) {
      throw std::logic_error(fmt::format("run_streaming: the source added no node and sealed nothing, "
                                         "but says more will come (at node {})", before));
    }
    if (!stream_.running_) return;
    for (std::size_t id = before; id < stream_.end_; ++id)
      if (stream_.slot(static_cast<NodeId>(id)).waiting == 0)
        throw std::logic_error(fmt::format("run_streaming: {} has no predecessor but was added after the "
                                           "first seal(); add every such node before sealing",
                                           stream_.describe(static_cast<NodeId>(id))));
  }

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

  void settle(SimTime now) {
    if (!idle_with_work_.empty()) dispatch(now);
    network_.reshare(now);
    result_.peak_concurrent_transfers = std::max(result_.peak_concurrent_transfers, network_.active_flows());
    if (audit_) network_.audit_sharing();
  }

  void start(NodeId id, SimTime now) {
    DagStream::Slot& s = stream_.slot(id);
    s.waiting = kStarted;
    s.start = now;
    const DagNode& node = s.node;
    if (node.kind == NodeKind::delay) {
      if (stream_.bound_) {
        const auto it = stream_.bindings_.find(id);
        if (it != stream_.bindings_.end() && it->second.processor != TransferDag::kNoProcessor) {
          // Queued until the end of the instant, so that every node ready now competes.
          Processor& p = processors_[it->second.processor];
          p.ready.push((static_cast<std::uint64_t>(it->second.priority) << 32) | id);
          if (!p.busy) idle_with_work_.push_back(it->second.processor);
          return;
        }
      }
      queue_.push(now + to_sim_time(node.latency), id, kEnd);
      return;
    }
    const double begin_ps = flow_start_ps(node, now);
    const bool shares = node.bytes.count() > 0.0 && (node.route != 0 || !node.rate_cap.is_unlimited());
    const SimTime at = ceil_ps(begin_ps);
    if (!shares) queue_.push(at, id, kEnd);
    else if (at == now)
      network_.add_flow(stream_.route_links(node.route), node.bytes.count(), node.rate_cap.count(), begin_ps, id, now);
    else queue_.push(at, id, kActivate);
  }

  double flow_start_ps(const DagNode& node, SimTime start) const {
    const double latency = node.explicit_latency ? node.latency.count() : stream_.route_latency_[node.route];
    return static_cast<double>(start) + latency * 1e12;
  }

  void add_flow(NodeId id, SimTime now) {
    const DagStream::Slot& s = stream_.slot(id);
    // run_dag keeps the start as seconds and recovers the picosecond with llround: the same here.
    const auto start = static_cast<SimTime>(std::llround(to_seconds(s.start).count() * 1e12));
    network_.add_flow(stream_.route_links(s.node.route), s.node.bytes.count(), s.node.rate_cap.count(),
                      flow_start_ps(s.node, start), id, now);
  }

  void end(NodeId id, SimTime now) {
    // Its successors must all be known before it ends: ask the source until it is sealed.
    while (id >= stream_.sealed_ && !exhausted_) pull();
    DagStream::Slot& s = stream_.slot(id);
    if (s.waiting != kStarted)
      throw std::logic_error(fmt::format("{} ended twice or before it started", stream_.describe(id)));
    s.waiting = kDone;
    makespan_ = std::max(makespan_, now);
    ++done_;
    if (stream_.bound_) release(id);
    if (on_node_) on_node_(id, s.node, NodeTiming{to_seconds(s.start), to_seconds(now)});
    for (std::uint32_t e = s.first_edge; e != DagStream::kNone; e = stream_.edges_[e].next) {
      const NodeId next = stream_.edges_[e].after;
      DagStream::Slot& n = stream_.slot(next);
      if (audit_ && (n.waiting == 0 || n.waiting >= kStarted))
        throw std::logic_error(fmt::format("{} released more often than it has predecessors",
                                           stream_.describe(next)));
      if (--n.waiting == 0) start(next, now);
    }
    stream_.free_edges(s);
    stream_.retire();
  }

  // A node that frees a processor ended: the processor is free for the next waiting node.
  void release(NodeId id) {
    const auto it = stream_.bindings_.find(id);
    if (it == stream_.bindings_.end()) return;
    const std::uint32_t freed = it->second.releases;
    stream_.bindings_.erase(it);
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
      DagStream::Slot& s = stream_.slot(next);
      s.start = now;
      queue_.push(now + to_sim_time(s.node.latency), next, kEnd);
    }
    idle_with_work_.clear();
  }

  StreamResult finish_result() {
    RunResult& r = result_;
    r.makespan = to_seconds(makespan_);
    r.components_solved = network_.components_solved();
    r.flows_resolved = network_.flows_resolved();
    r.local_reshares = network_.local_reshares();
    r.approximate = network_.approximate();
    r.links.resize(links_.size());
    for (LinkId l = 0; l < links_.size(); ++l) {
      LinkStats& ls = r.links[l];
      ls.carried = Bytes{network_.carried(l)};
      ls.busy = to_seconds(network_.busy(l));
      if (makespan_ > 0) ls.utilisation = ls.carried.count() / (links_[l].capacity.count() * r.makespan.count());
    }
    return StreamResult{std::move(result_), stream_.end_, stream_.peak_window_};
  }

  std::span<const LinkSpec> links_;
  const DagSource& source_;
  DagStream stream_;
  Network network_;
  EventQueue queue_;
  bool audit_;
  const std::function<void(std::size_t, std::size_t)>& progress_;
  const NodeCallback& on_node_;
  struct Processor {
    bool busy = false;
    // Ready nodes waiting: (priority << 32 | id), smallest first.
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> ready;
  };
  std::unordered_map<std::uint32_t, Processor> processors_;  // lookup only, never iterated
  std::vector<std::uint32_t> idle_with_work_;  // processors to dispatch at the end of the instant
  bool exhausted_ = false;
  std::uint64_t steps_ = 0;
  std::vector<std::uint32_t> completed_;
  std::size_t done_ = 0;
  SimTime makespan_ = 0;
  RunResult result_;
};

StreamResult run_streaming(std::span<const LinkSpec> links, const DagSource& source, const RunOptions& options,
                           const NodeCallback& on_node) {
  return StreamExecutor(links, source, options, on_node).run();
}

}  // namespace wiresim::sim
