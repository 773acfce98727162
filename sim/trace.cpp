#include "sim/trace.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

namespace wiresim::sim {
namespace {

constexpr int kTrackPid = 1;
constexpr int kLinkPid = 2;

struct Slice {
  double start_us;
  double end_us;
  NodeId node;
  std::uint32_t row;   // a track, or a link
  std::uint32_t lane = 0;
  bool on_link = false;
};

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

// Greedy interval partitioning: each slice takes the lowest-numbered lane of its row that
// is free at its start, so overlapping slices never share a lane. Slices come sorted by start.
void assign_lanes(std::vector<Slice>& slices) {
  std::vector<std::size_t> order(slices.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](std::size_t i) { return std::pair{slices[i].on_link, slices[i].row}; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  for (std::size_t i = 0; i < order.size();) {
    const auto row = key(order[i]);
    using Busy = std::pair<double, std::uint32_t>;  // (end, lane)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free;
    std::uint32_t lanes = 0;
    for (; i < order.size() && key(order[i]) == row; ++i) {
      Slice& s = slices[order[i]];
      while (!busy.empty() && busy.top().first <= s.start_us) {
        free.push(busy.top().second);
        busy.pop();
      }
      if (free.empty()) {
        s.lane = lanes++;
      } else {
        s.lane = free.top();
        free.pop();
      }
      busy.emplace(s.end_us, s.lane);
    }
  }
}

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const TransferDag& dag, const RunResult& result,
              const TraceOptions& options)
      : out_(out), dag_(dag), result_(result), options_(options) {}

  void write() {
    std::vector<Slice> slices = collect();
    assign_lanes(slices);
    put(std::string_view{"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"});
    first_ = true;
    metadata(kTrackPid, -1, "process_name", "tracks");
    if (options_.link_tracks) metadata(kLinkPid, -1, "process_name", "links");
    name_lanes(slices);
    for (const Slice& s : slices) slice(s);
    fmt::format_to(std::back_inserter(buffer_), "\n],\"otherData\":{{\"nodes\":{},\"slices\":{}",
                   dag_.size(), slices.size());
    if (truncated_)
      fmt::format_to(std::back_inserter(buffer_),
                     ",\"warning\":\"trace cut at max_slices = {}: only the earliest slices are shown\"",
                     options_.max_slices);
    put(std::string_view{"}}\n"});
    flush();
  }

 private:
  std::vector<Slice> collect() {
    std::vector<NodeId> order(dag_.size());
    for (NodeId id = 0; id < order.size(); ++id) order[id] = id;
    std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
      return result_.nodes[a].start < result_.nodes[b].start;
    });
    std::vector<Slice> slices;
    for (const NodeId id : order) {
      const std::size_t want = 1 + (options_.link_tracks ? dag_.links(id).size() : 0);
      if (slices.size() + want > options_.max_slices) {
        truncated_ = true;
        break;
      }
      const double start = result_.nodes[id].start.count() * 1e6;
      const double end = result_.nodes[id].end.count() * 1e6;
      slices.push_back({start, end, id, dag_.node(id).track});
      if (!options_.link_tracks) continue;
      const double flowing = start + latency(id).count() * 1e6;
      for (const LinkId l : dag_.links(id)) slices.push_back({std::min(flowing, end), end, id, l, 0, true});
    }
    return slices;
  }

  Seconds latency(NodeId id) const {
    if (dag_.latency_is_explicit(id) || dag_.node(id).kind == NodeKind::delay)
      return dag_.node(id).latency;
    Seconds sum{0.0};
    for (const LinkId l : dag_.links(id)) sum += options_.links[l].latency;
    return sum;
  }

  std::string track_name(std::uint32_t track) const {
    if (track < options_.track_names.size()) return options_.track_names[track];
    return fmt::format("track {}", track);
  }

  std::string link_name(LinkId l) const {
    if (!options_.links[l].name.empty()) return options_.links[l].name;
    return fmt::format("link {}", l);
  }

  // One thread per (row, lane); the thread id orders lanes under their row.
  static constexpr std::int64_t kLanes = 1 << 20;
  static std::int64_t tid(const Slice& s) { return std::int64_t{s.row} * kLanes + s.lane; }

  void name_lanes(const std::vector<Slice>& slices) {
    std::vector<std::pair<int, std::int64_t>> seen;
    for (const Slice& s : slices) seen.emplace_back(s.on_link ? kLinkPid : kTrackPid, tid(s));
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const auto& [pid, t] : seen) {
      const auto row = static_cast<std::uint32_t>(t / kLanes);
      const auto lane = static_cast<std::uint32_t>(t % kLanes);
      std::string name = pid == kLinkPid ? link_name(row) : track_name(row);
      if (lane > 0) name += fmt::format(" #{}", lane + 1);
      metadata(pid, t, "thread_name", name);
      separator();
      fmt::format_to(std::back_inserter(buffer_),
                     "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\","
                     "\"args\":{{\"sort_index\":{}}}}}",
                     pid, t, t);
    }
  }

  void metadata(int pid, std::int64_t t, std::string_view what, std::string_view name) {
    separator();
    fmt::format_to(std::back_inserter(buffer_), "{{\"ph\":\"M\",\"pid\":{},", pid);
    if (t >= 0) fmt::format_to(std::back_inserter(buffer_), "\"tid\":{},", t);
    fmt::format_to(std::back_inserter(buffer_), "\"name\":\"{}\",\"args\":{{\"name\":\"{}\"}}}}",
                   what, json_escape(name));
  }

  void slice(const Slice& s) {
    const DagNode& node = dag_.node(s.node);
    std::string_view label = dag_.labels()[node.label];
    if (label.empty()) label = node.kind == NodeKind::transfer ? "transfer" : "delay";
    separator();
    fmt::format_to(std::back_inserter(buffer_),
                   "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{:.6f},\"dur\":{:.6f},\"name\":\"{}\","
                   "\"cat\":\"{}\",\"args\":{{\"node\":{}",
                   s.on_link ? kLinkPid : kTrackPid, tid(s), s.start_us, s.end_us - s.start_us,
                   json_escape(label), node.kind == NodeKind::transfer ? "transfer" : "delay", s.node);
    if (node.kind == NodeKind::transfer) transfer_args(s.node);
    put(std::string_view{"}}"});
    if (buffer_.size() > (1u << 20)) flush();
  }

  void transfer_args(NodeId id) {
    const DagNode& node = dag_.node(id);
    const Seconds lat = latency(id);
    fmt::format_to(std::back_inserter(buffer_), ",\"bytes\":{:.0f},\"latency_us\":{:.6f},\"peer\":\"{}\"",
                   node.bytes.count(), lat.us(), json_escape(track_name(node.peer)));
    const double flowing = (result_.nodes[id].end - result_.nodes[id].start - lat).count();
    if (node.bytes.count() > 0 && flowing > 0)
      fmt::format_to(std::back_inserter(buffer_), ",\"rate_GBps\":{:.3f}",
                     node.bytes.count() / flowing / 1e9);
    put(std::string_view{",\"route\":\""});
    bool first = true;
    for (const LinkId l : dag_.links(id)) {
      if (!first) put(std::string_view{", "});
      first = false;
      const std::string name = json_escape(link_name(l));
      put(name);
    }
    buffer_.push_back('"');
  }

  void put(std::string_view s) { buffer_.append(s.data(), s.data() + s.size()); }

  void separator() {
    if (!first_) put(std::string_view{",\n"});
    first_ = false;
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  std::ostream& out_;
  const TransferDag& dag_;
  const RunResult& result_;
  const TraceOptions& options_;
  fmt::memory_buffer buffer_;
  bool first_ = true;
  bool truncated_ = false;
};

}  // namespace

void write_chrome_trace(std::ostream& out, const TransferDag& dag, const RunResult& result,
                        const TraceOptions& options) {
  if (result.nodes.size() != dag.size())
    throw std::invalid_argument(fmt::format("write_chrome_trace: the result has {} nodes, the DAG {}",
                                            result.nodes.size(), dag.size()));
  for (NodeId id = 0; id < dag.size(); ++id)
    for (const LinkId l : dag.links(id))
      if (l >= options.links.size())
        throw std::invalid_argument(fmt::format("write_chrome_trace: {} uses link {}, but the "
                                                "options list {} links",
                                                dag.describe(id), l, options.links.size()));
  TraceWriter(out, dag, result, options).write();
}

}  // namespace wiresim::sim
