// run_dag: a frozen TransferDag played by the event loop it shares with run_streaming
// (sim/event_loop.h).
#include "sim/executor.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/event_loop.h"

namespace wiresim::sim {
namespace {

constexpr std::size_t kStuckNamed = 10;

// run_dag's graph for the event loop: the whole DAG, known before the first event, and the
// nodes' start and end times.
class DagGraph {
 public:
  DagGraph(std::span<const LinkSpec> links, const TransferDag& dag) : links_(links), dag_(dag) {}

  void prepare() {
    dag_.freeze();
    check_routes();
    const std::size_t n = dag_.size();
    waiting_.resize(n);
    for (NodeId id = 0; id < n; ++id) waiting_[id] = dag_.predecessor_count(id);
    timings_.resize(n);
  }
  std::size_t size() const { return dag_.size(); }
  std::uint32_t& waiting(NodeId id) { return waiting_[id]; }
  const DagNode& node(NodeId id) const { return dag_.node(id); }
  std::span<const LinkId> route_links(RouteId route) const { return dag_.route_links(route); }
  double route_latency(RouteId route) const { return route_latency_[route]; }
  void set_start(NodeId id, SimTime now) { timings_[id].start = to_seconds(now); }
  Seconds start(NodeId id) const { return timings_[id].start; }
  bool has_processors() const { return dag_.has_processors(); }
  TransferDag::Binding binding(NodeId id) const { return dag_.binding(id); }
  std::uint32_t take_release(NodeId id) const { return dag_.binding(id).releases; }
  void before_end(NodeId) const {}
  template <class F>
  void ended(NodeId id, SimTime now, F&& release) {
    timings_[id].end = to_seconds(now);
    for (const NodeId next : dag_.successors(id)) release(next);
  }
  bool grow() const { return false; }
  [[noreturn]] void unfinished(std::size_t) const { throw stuck_error(); }
  std::string describe(NodeId id) const { return dag_.describe(id); }
  std::vector<NodeTiming>& timings() { return timings_; }

 private:
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
      if (waiting_[id] != kNodeDone) stuck.push_back(id);
    std::vector<NodeId> walk;
    std::vector<std::uint8_t> seen(dag_.size(), 0);
    for (NodeId at = stuck.front(); !seen[at];) {
      seen[at] = 1;
      walk.push_back(at);
      const auto preds = dag_.predecessors(at);
      const auto p = std::find_if(preds.begin(), preds.end(),
                                  [&](NodeId q) { return waiting_[q] != kNodeDone; });
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

  std::span<const LinkSpec> links_;
  const TransferDag& dag_;
  std::vector<double> route_latency_;   // per route: its links' latencies summed, in seconds
  std::vector<std::uint32_t> waiting_;  // predecessors not ended yet, or kNodeStarted, kNodeDone
  std::vector<NodeTiming> timings_;     // indexed by NodeId
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
  EventLoop<DagGraph> loop(links, options, links, dag);
  RunResult result = loop.run();
  result.nodes = std::move(loop.graph().timings());
  return result;
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
