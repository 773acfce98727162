#include "sim/executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/event_queue.h"
#include "sim/executor_support.h"
#include "sim/network.h"

namespace wiresim::sim {
namespace {

constexpr std::uint8_t kActivate = 0;  // a transfer's latency has passed: its bytes start
constexpr std::uint8_t kEnd = 1;       // a delay, or a transfer with no bytes to share, ends
constexpr std::uint32_t kStarted = std::numeric_limits<std::uint32_t>::max() - 1;
constexpr std::uint32_t kDone = std::numeric_limits<std::uint32_t>::max();
constexpr std::size_t kStuckNamed = 10;

#ifdef NDEBUG
constexpr bool kDebugBuild = false;
#else
constexpr bool kDebugBuild = true;
#endif

// Plays the DAG: the event queue holds starts of flows and ends of delays; the network
// holds flows. Each instant is handled as one batch: network completions, then queued
// events in the order they were pushed, then one reshare of what changed.
class Executor {
 public:
  Executor(std::span<const LinkSpec> links, const TransferDag& dag, const RunOptions& options)
      : links_(links), dag_(dag), network_(link_capacities(links)),
        audit_(options.check_invariants || kDebugBuild), progress_(options.progress) {
    network_.set_audit(audit_);
    network_.set_window(options.window_flows, options.window_slack);
  }

  RunResult run() {
    dag_.freeze();
    check_routes();
    const std::size_t n = dag_.size();
    waiting_.resize(n);
    for (NodeId id = 0; id < n; ++id) waiting_[id] = dag_.predecessor_count(id);
    result_.nodes.resize(n);
    for (NodeId id = 0; id < n; ++id)
      if (waiting_[id] == 0) start(id, 0);
    settle(0);
    for (;;) {
      const std::optional<SimTime> next_flow = network_.next_completion();
      if (queue_.empty() && !next_flow) break;
      SimTime now = next_flow.value_or(std::numeric_limits<SimTime>::max());
      if (!queue_.empty()) now = std::min(now, queue_.top_time());
      step(now);
      if (progress_ && (++steps_ & 0xffff) == 0) progress_(done_, n);
    }
    if (done_ != n) throw stuck_error();
    if (audit_) network_.audit_finish();
    return finish_result();
  }

 private:
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
    result_.peak_concurrent_transfers =
        std::max(result_.peak_concurrent_transfers, network_.active_flows());
    if (audit_) network_.audit_sharing();
  }

  void start(NodeId id, SimTime now) {
    waiting_[id] = kStarted;
    result_.nodes[id].start = to_seconds(now);
    const DagNode& node = dag_.node(id);
    if (node.kind == NodeKind::delay) {
      const auto bound = dag_.binding(id);
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
    const double begin_ps = flow_start_ps(id, now);
    const bool shares = node.bytes.count() > 0.0 && (node.route != 0 || !node.rate_cap.is_unlimited());
    const SimTime at = ceil_ps(begin_ps);
    if (!shares) queue_.push(at, id, kEnd);
    else if (at == now) network_.add_flow(dag_.links(id), node.bytes.count(), node.rate_cap.count(), begin_ps, id, now);
    else queue_.push(at, id, kActivate);
  }

  // Exact picoseconds at which a transfer's first byte leaves: its start plus its latency.
  double flow_start_ps(NodeId id, SimTime start) const {
    const DagNode& node = dag_.node(id);
    const double latency = node.explicit_latency ? node.latency.count() : route_latency_[node.route];
    return static_cast<double>(start) + latency * 1e12;
  }

  void add_flow(NodeId id, SimTime now) {
    const DagNode& node = dag_.node(id);
    // The start is an integer picosecond stored as seconds; llround recovers it exactly.
    const auto start = static_cast<SimTime>(std::llround(result_.nodes[id].start.count() * 1e12));
    network_.add_flow(dag_.links(id), node.bytes.count(), node.rate_cap.count(),
                      flow_start_ps(id, start), id, now);
  }

  void end(NodeId id, SimTime now) {
    if (waiting_[id] != kStarted)
      throw std::logic_error(fmt::format("{} ended twice or before it started", dag_.describe(id)));
    waiting_[id] = kDone;
    result_.nodes[id].end = to_seconds(now);
    makespan_ = std::max(makespan_, now);
    ++done_;
    if (dag_.has_processors()) release(id);
    for (const NodeId next : dag_.successors(id)) {
      if (audit_ && (waiting_[next] == 0 || waiting_[next] >= kStarted))
        throw std::logic_error(fmt::format("{} released more often than it has predecessors",
                                           dag_.describe(next)));
      if (--waiting_[next] == 0) start(next, now);
    }
  }

  // A node that frees a processor ended (the bound node itself, or the end of what it holds
  // the processor for): the processor is free for the next waiting node.
  void release(NodeId id) {
    const std::uint32_t freed = dag_.binding(id).releases;
    if (freed == TransferDag::kNoProcessor) return;
    Processor& p = processors_[freed];
    p.busy = false;
    if (!p.ready.empty()) idle_with_work_.push_back(freed);
  }

  // End of an instant: each idle processor with waiting nodes starts the lowest priority one.
  void dispatch(SimTime now) {
    std::sort(idle_with_work_.begin(), idle_with_work_.end());   // a reproducible order
    for (const std::uint32_t id : idle_with_work_) {
      Processor& p = processors_[id];
      if (p.busy || p.ready.empty()) continue;
      const auto next = static_cast<NodeId>(p.ready.top() & 0xffffffffu);
      p.ready.pop();
      p.busy = true;
      result_.nodes[next].start = to_seconds(now);
      queue_.push(now + to_sim_time(dag_.node(next).latency), next, kEnd);
    }
    idle_with_work_.clear();
  }

  // Every route's links exist; each route's summed link latency, once (in link order, as a
  // transfer's own sum would be).
  void check_routes() {
    route_latency_.assign(dag_.routes(), 0.0);
    std::vector<std::uint8_t> bad(dag_.routes(), 0);
    for (RouteId r = 0; r < dag_.routes(); ++r)
      for (const LinkId l : dag_.route_links(r)) {
        if (l >= links_.size()) bad[r] = 1;
        else route_latency_[r] += links_[l].latency.count();
      }
    if (std::find(bad.begin(), bad.end(), 1) == bad.end()) return;
    for (NodeId id = 0; id < dag_.size(); ++id)
      for (const LinkId l : dag_.links(id))
        if (l >= links_.size())
          throw std::out_of_range(fmt::format("{} uses link {}, but there are {} links",
                                              dag_.describe(id), l, links_.size()));
  }

  // Every node that never ended has a predecessor that never ended, so walking back from
  // one along such predecessors must come round to a node already seen: a cycle.
  StuckDagError stuck_error() const {
    std::vector<NodeId> stuck;
    for (NodeId id = 0; id < dag_.size(); ++id)
      if (waiting_[id] != kDone) stuck.push_back(id);
    std::vector<NodeId> walk;
    std::vector<std::uint8_t> seen(dag_.size(), 0);
    for (NodeId at = stuck.front(); !seen[at];) {
      seen[at] = 1;
      walk.push_back(at);
      const auto preds = dag_.predecessors(at);
      const auto p = std::find_if(preds.begin(), preds.end(),
                                  [&](NodeId q) { return waiting_[q] != kDone; });
      if (p == preds.end()) throw std::logic_error(dag_.describe(at) + " started but never ended");
      at = *p;
      if (seen[at]) walk.push_back(at);
    }
    const auto cycle_begin = std::find(walk.begin(), walk.end(), walk.back());
    std::string cycle;
    for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
      cycle += (cycle.empty() ? "" : " -> ") + dag_.describe(*it);
      if (it.base() - 1 == cycle_begin) break;
    }
    std::string named;
    for (std::size_t i = 0; i < std::min(stuck.size(), kStuckNamed); ++i)
      named += (i ? ", " : "") + dag_.describe(stuck[i]);
    if (stuck.size() > kStuckNamed) named += fmt::format(" and {} more", stuck.size() - kStuckNamed);
    return StuckDagError(
        fmt::format("the transfer DAG cannot finish: {} of {} nodes never started, waiting on a "
                    "dependency cycle ({}); stuck: {}",
                    stuck.size(), dag_.size(), cycle, named),
        std::move(stuck));
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
  const TransferDag& dag_;
  Network network_;
  EventQueue queue_;
  bool audit_;
  const std::function<void(std::size_t, std::size_t)>& progress_;
  std::uint64_t steps_ = 0;
  struct Processor {
    bool busy = false;
    // Ready nodes waiting: (priority << 32 | id), smallest first.
    std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> ready;
  };
  std::unordered_map<std::uint32_t, Processor> processors_;
  std::vector<std::uint32_t> idle_with_work_;   // processors to dispatch at the end of the instant
  std::vector<double> route_latency_;   // per route: its links' latencies summed, in seconds
  std::vector<std::uint32_t> waiting_;  // predecessors not ended yet, or kStarted, kDone
  std::vector<std::uint32_t> completed_;
  std::size_t done_ = 0;
  SimTime makespan_ = 0;
  RunResult result_;
};

}  // namespace

std::vector<double> link_capacities(std::span<const LinkSpec> links) {
  std::vector<double> c;
  c.reserve(links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    const LinkSpec& s = links[l];
    if (!(s.capacity.count() > 0.0) || !std::isfinite(s.capacity.count()))
      throw std::invalid_argument(fmt::format("link {} ({}): capacity must be finite and > 0", l,
                                              s.name));
    if (!(s.latency.count() >= 0.0) || !std::isfinite(s.latency.count()))
      throw std::invalid_argument(fmt::format("link {} ({}): latency must be finite and >= 0", l,
                                              s.name));
    c.push_back(s.capacity.count());
  }
  return c;
}

RunResult run_dag(std::span<const LinkSpec> links, const TransferDag& dag,
                  const RunOptions& options) {
  return Executor(links, dag, options).run();
}

std::vector<NodeId> critical_path(const TransferDag& dag, const RunResult& result) {
  if (result.nodes.size() != dag.size())
    throw std::invalid_argument(fmt::format(
        "critical_path: the result has {} nodes but the DAG {}", result.nodes.size(), dag.size()));
  if (dag.size() == 0) return {};
  // Latest end wins; among equal ends, the lowest id, so the answer is reproducible.
  const auto latest = [&](std::span<const NodeId> candidates) {
    NodeId best = candidates.front();
    for (const NodeId id : candidates)
      if (result.nodes[id].end > result.nodes[best].end ||
          (result.nodes[id].end == result.nodes[best].end && id < best))
        best = id;
    return best;
  };
  NodeId last = 0;
  for (NodeId id = 1; id < dag.size(); ++id)
    if (result.nodes[id].end > result.nodes[last].end) last = id;
  std::vector<NodeId> path{last};
  while (dag.predecessor_count(path.back()) > 0) path.push_back(latest(dag.predecessors(path.back())));
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace wiresim::sim
