// run_streaming: the engine half of streaming execution (sim/stream.h). A DagStream's window
// played by run_dag's event loop (sim/event_loop.h), which asks the source for more before
// it ends a node that is not sealed.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/event_loop.h"
#include "sim/stream.h"

namespace wiresim::sim {

// run_streaming's graph for the event loop: the nodes in the stream's window, their engine
// state in their slots, and the source that adds more.
class StreamGraph {
 public:
  static_assert(DagStream::kStarted == kNodeStarted && DagStream::kDone == kNodeDone);
  StreamGraph(std::span<const LinkSpec> links, const DagSource& source, const NodeCallback& on_node)
      : stream_(links), source_(source), on_node_(on_node) {}

  // Nodes with no predecessor start at 0, in id order: all of them come before the first seal.
  void prepare() {
    do pull(); while (stream_.sealed_ == 0 && !exhausted_);
    stream_.running_ = true;
  }
  std::size_t size() const { return stream_.end_; }
  std::uint32_t& waiting(NodeId id) { return stream_.slot(id).waiting; }
  const DagNode& node(NodeId id) const { return stream_.slot(id).node; }
  std::span<const LinkId> route_links(RouteId route) const { return stream_.route_links(route); }
  double route_latency(RouteId route) const { return stream_.route_latency_[route]; }
  void set_start(NodeId id, SimTime now) { stream_.slot(id).start = now; }
  Seconds start(NodeId id) const { return to_seconds(stream_.slot(id).start); }
  bool has_processors() const { return stream_.bound_; }
  TransferDag::Binding binding(NodeId id) const {
    if (!stream_.bound_) return {};
    const auto it = stream_.bindings_.find(id);
    return it == stream_.bindings_.end() ? TransferDag::Binding{} : it->second;
  }
  // A bound or freeing node's binding is forgotten as it ends.
  std::uint32_t take_release(NodeId id) {
    const auto it = stream_.bindings_.find(id);
    if (it == stream_.bindings_.end()) return TransferDag::kNoProcessor;
    const std::uint32_t freed = it->second.releases;
    stream_.bindings_.erase(it);
    return freed;
  }
  // Its successors must all be known before it ends: ask the source until it is sealed.
  void before_end(NodeId id) {
    while (id >= stream_.sealed_ && !exhausted_) pull();
  }
  // Reports the node and releases its successors; then its list of them is freed, and its
  // slot once every node before it ended too.
  template <class F>
  void ended(NodeId id, SimTime now, F&& release) {
    DagStream::Slot& s = stream_.slot(id);
    if (on_node_) on_node_(id, s.node, NodeTiming{to_seconds(s.start), to_seconds(now)});
    for (std::uint32_t e = s.first_edge; e != DagStream::kNone; e = stream_.edges_[e].next)
      release(stream_.edges_[e].after);
    stream_.free_edges(s);
    stream_.retire();
  }
  // Nothing runs: what comes now could only be a node with no predecessor.
  bool grow() {
    if (exhausted_) return false;
    pull();
    return true;
  }
  [[noreturn]] void unfinished(std::size_t done) const {
    throw std::logic_error(fmt::format("run_streaming: {} of {} nodes never ended", stream_.end_ - done,
                                       stream_.end_));
  }
  std::string describe(NodeId id) const { return stream_.describe(id); }
  std::size_t peak_window() const { return stream_.peak_window_; }

 private:
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

  DagStream stream_;
  const DagSource& source_;
  const NodeCallback& on_node_;
  bool exhausted_ = false;
};

StreamResult run_streaming(std::span<const LinkSpec> links, const DagSource& source, const RunOptions& options,
                           const NodeCallback& on_node) {
  EventLoop<StreamGraph> loop(links, options, links, source, on_node);
  RunResult totals = loop.run();
  return StreamResult{std::move(totals), loop.graph().size(), loop.graph().peak_window()};
}

}  // namespace wiresim::sim
