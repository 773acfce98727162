#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/executor.h"
#include "sim/stream.h"
#include "sim/transfer_dag.h"
#include "tests/approx.h"

using namespace wiresim::sim;

namespace {

std::vector<LinkSpec> uniform_links(std::size_t n, double capacity, double latency) {
  std::vector<LinkSpec> links;
  for (std::size_t i = 0; i < n; ++i)
    links.push_back({BytesPerSec{capacity}, Seconds{latency}, "link" + std::to_string(i)});
  return links;
}

// Feeds a built DAG to a stream `window` nodes per call, each with its dependencies, and
// seals a node once its last successor was added (and every node with no predecessor too).
// The DAGs below add each node's dependencies right after it, so the stream sees the
// successors in the order the DAG does.
DagSource replay(const TransferDag& dag, std::size_t window) {
  struct State {
    std::size_t next = 0;
    std::size_t last_root = 0;
    std::size_t sealed = 0;
    std::vector<NodeId> last_successor;  // per node: its highest successor, or itself
  };
  auto state = std::make_shared<State>();
  for (NodeId id = 0; id < dag.size(); ++id) {
    if (dag.predecessor_count(id) == 0) state->last_root = id;
    const auto succ = dag.successors(id);
    state->last_successor.push_back(succ.empty() ? id : *std::max_element(succ.begin(), succ.end()));
  }
  return [&dag, window, state](DagStream& s) {
    const std::size_t stop = std::min(dag.size(), state->next + window);
    for (; state->next < stop; ++state->next) {
      const auto id = static_cast<NodeId>(state->next);
      const DagNode& n = dag.node(id);
      const LabelId label = s.intern_label(dag.labels()[n.label]);
      NodeId got = 0;
      if (n.kind == NodeKind::delay) {
        got = s.add_delay(n.latency, label, n.track);
      } else {
        const auto latency = dag.latency_is_explicit(id) ? std::optional<Seconds>(n.latency) : std::nullopt;
        got = s.add_transfer(dag.links(id), n.bytes, latency, n.rate_cap, label, n.track, n.peer);
      }
      REQUIRE(got == id);
      for (const NodeId p : dag.predecessors(id)) s.add_dependency(p, id);
      // A TransferDag binding is a processor to run on and one to free: the same in two calls.
      const TransferDag::Binding b = dag.binding(id);
      if (b.processor != TransferDag::kNoProcessor) s.set_processor(id, b.processor, b.priority, b.releases != b.processor);
      if (b.releases != TransferDag::kNoProcessor && b.releases != b.processor) s.free_processor_at(id, b.releases);
    }
    if (state->next > state->last_root)
      while (state->sealed < state->next && state->last_successor[state->sealed] < state->next) ++state->sealed;
    s.seal(static_cast<NodeId>(state->sealed));
    return state->next < dag.size();
  };
}

// Streams `dag` in windows of `window` nodes and checks every number against run_dag's;
// returns the most nodes the stream held at once.
std::size_t check_same(std::span<const LinkSpec> links, const TransferDag& dag, std::size_t window,
                const RunOptions& options = {}) {
  CAPTURE(window);
  const RunResult whole = run_dag(links, dag, options);
  std::vector<NodeTiming> seen(dag.size());
  std::vector<int> calls(dag.size(), 0);
  const StreamResult streamed = run_streaming(links, replay(dag, window), options,
                                              [&](NodeId id, const DagNode&, const NodeTiming& t) {
                                                REQUIRE(id < dag.size());
                                                seen[id] = t;
                                                ++calls[id];
                                              });
  CHECK(streamed.nodes == dag.size());
  CHECK(streamed.totals.nodes.empty());
  CHECK(streamed.totals.makespan.count() == whole.makespan.count());
  CHECK(streamed.totals.events == whole.events);
  CHECK(streamed.totals.peak_concurrent_transfers == whole.peak_concurrent_transfers);
  CHECK(streamed.totals.components_solved == whole.components_solved);
  std::size_t differ = 0, once = 0;
  for (NodeId id = 0; id < dag.size(); ++id) {
    once += calls[id] == 1;
    differ += seen[id].start.count() != whole.nodes[id].start.count() ||
              seen[id].end.count() != whole.nodes[id].end.count();
  }
  CHECK(once == dag.size());  // every node reported, once
  CHECK(differ == 0);         // bit-identical starts and ends
  REQUIRE(streamed.totals.links.size() == whole.links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    CHECK(streamed.totals.links[l].carried.count() == whole.links[l].carried.count());
    CHECK(streamed.totals.links[l].busy.count() == whole.links[l].busy.count());
  }
  return streamed.peak_window;
}

// bench/ring_crossbar.cpp's DAG: 2(n-1) steps; transfer (s, r) sends r -> r+1 over
// [uplink r, downlink r+1] after (s-1, r-1) and (s-1, r).
TransferDag ring_crossbar(int n, Bytes chunk) {
  TransferDag dag;
  for (int s = 0; s < 2 * (n - 1); ++s)
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n;
      const LinkId route[2] = {LinkId(r), LinkId(n + next)};
      const NodeId id = dag.add_transfer(route, chunk, std::nullopt, BytesPerSec::unlimited(), 0, r, next);
      if (s == 0) continue;
      dag.add_dependency(id - n + (r == 0 ? n - 1 : -1), id);
      dag.add_dependency(id - n, id);
    }
  return dag;
}

// A reduction tree: 16 leaves send to 4 aggregators over uplinks they share in pairs, each
// aggregator reduces (a delay) once its 4 inputs arrived, sends to the root over one shared
// link, the root reduces and broadcasts back down over the same links (fan-in, then fan-out).
TransferDag reduction_tree() {
  TransferDag dag;
  const LabelId up = dag.intern_label("up"), reduce = dag.intern_label("reduce"),
                down = dag.intern_label("down");
  std::vector<NodeId> leaves, aggregated;
  for (LinkId leaf = 0; leaf < 16; ++leaf) {
    const LinkId route[2] = {leaf / 2, 8 + leaf / 4};  // pair uplink, aggregator inlink
    leaves.push_back(dag.add_transfer(route, Bytes{1e6 * (1 + leaf % 3)}, std::nullopt, BytesPerSec::unlimited(), up, leaf));
  }
  for (std::uint32_t a = 0; a < 4; ++a) {
    const NodeId r = dag.add_delay(Seconds{(1 + a) * 0.7e-6}, reduce, 100 + a);
    for (std::uint32_t k = 0; k < 4; ++k) dag.add_dependency(leaves[4 * a + k], r);
    const LinkId route[1] = {12};  // every aggregator shares the link into the root
    const NodeId t = dag.add_transfer(route, Bytes{2e6}, Seconds{0.3e-6}, BytesPerSec{60e9}, up, 100 + a);
    dag.add_dependency(r, t);
    aggregated.push_back(t);
  }
  const NodeId root = dag.add_delay(Seconds{0.0}, reduce, 200);
  for (const NodeId t : aggregated) dag.add_dependency(t, root);
  for (LinkId leaf = 0; leaf < 16; ++leaf) {
    const LinkId route[2] = {13, 14 + leaf / 4};
    const NodeId t = dag.add_transfer(route, Bytes{5e5}, std::nullopt, BytesPerSec::unlimited(), down, 200, leaf);
    dag.add_dependency(root, t);
  }
  return dag;
}

// Random nodes over 10 links: transfers of 1-3 links (some with no bytes, explicit latency,
// a rate cap, or no links and a cap), delays (some of length 0), 0-3 predecessors among
// the previous 40 nodes; a quarter of the first 60 nodes have none (a stream adds those
// before its first seal).
TransferDag random_dag(std::uint32_t seed, std::size_t count) {
  std::mt19937 rng(seed);
  const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  TransferDag dag;
  for (std::size_t i = 0; i < count; ++i) {
    NodeId id = 0;
    if (pick(4) == 0) {
      id = dag.add_delay(Seconds{pick(3) == 0 ? 0.0 : pick(1000) * 1e-9}, 0, pick(8));
    } else {
      std::vector<LinkId> route;
      const std::uint32_t hops = pick(8) == 0 ? 0 : 1 + pick(3);
      while (route.size() < hops) {
        const LinkId l = pick(10);
        if (std::find(route.begin(), route.end(), l) == route.end()) route.push_back(l);
      }
      const Bytes bytes{pick(10) == 0 ? 0.0 : 1e3 * (1 + pick(2000))};
      const auto latency = pick(3) == 0 ? std::optional<Seconds>(Seconds{pick(500) * 1e-9}) : std::nullopt;
      const BytesPerSec cap = route.empty() || pick(4) == 0 ? BytesPerSec{1e9 * (1 + pick(40))} : BytesPerSec::unlimited();
      id = dag.add_transfer(route, bytes, latency, cap, 0, pick(8), pick(8));
    }
    if (i == 0 || (i < 60 && pick(4) == 0)) continue;
    for (std::uint32_t k = 1 + pick(3); k > 0; --k)
      dag.add_dependency(static_cast<NodeId>(i - 1 - pick(std::min<std::uint32_t>(40, i))), id);
  }
  return dag;
}

// Micro-batches on 3 GPUs sharing one link: per (micro-batch m, GPU g) a kernel bound to
// GPU g after the send of micro-batch m - 2, a launch bound to communicator 100 and held
// until the transfer's arrival node, the transfer over [g, 3], and the arrival. Priorities
// are not in id order, so that they decide who goes first.
TransferDag micro_batches() {
  TransferDag dag;
  std::vector<NodeId> sent(3 * 6);
  for (std::uint32_t m = 0; m < 6; ++m)
    for (std::uint32_t g = 0; g < 3; ++g) {
      const NodeId kernel = dag.add_delay(Seconds{1e-6 * (1 + (g + m) % 3)}, 0, g);
      dag.set_processor(kernel, g, (m + 3 * g) % 6);
      if (m >= 2) dag.add_dependency(sent[3 * (m - 2) + g], kernel);
      const NodeId launch = dag.add_delay(Seconds{0.5e-6}, 0, g);
      dag.add_dependency(kernel, launch);
      const LinkId route[2] = {g, 3};
      const NodeId t = dag.add_transfer(route, Bytes{4e4 * (1 + m % 2)}, std::nullopt, BytesPerSec::unlimited(), 0, g);
      dag.add_dependency(launch, t);
      const NodeId arrived = dag.add_delay(Seconds{0.0}, 0, g);
      dag.add_dependency(t, arrived);
      dag.set_processor(launch, 100, 5 - m, arrived);
      sent[3 * m + g] = arrived;
    }
  return dag;
}

}  // namespace

TEST_CASE("stream: a ring all-reduce on a crossbar streams bit-identical to run_dag") {
  const int n = 12;
  const TransferDag dag = ring_crossbar(n, Bytes{1 << 20});
  std::vector<LinkSpec> links;
  for (int i = 0; i < 2 * n; ++i) links.push_back({BytesPerSec{450e9}, Seconds{0.5e-6}, "l" + std::to_string(i)});
  for (const std::size_t window : {5, 12, 100, 100000}) check_same(links, dag, window);
  // One node per call: node p is sealed once its last successor (p + n + 1) was added, and
  // retired once the nodes before it ended, so about three steps of n are ever held.
  CHECK(check_same(links, dag, 1) <= std::size_t(4 * n));
}

TEST_CASE("stream: a reduction tree with shared links and delays streams bit-identical") {
  const TransferDag dag = reduction_tree();
  const auto links = uniform_links(18, 50e9, 0.4e-6);
  for (const std::size_t window : {1, 2, 3, 7, 1000}) check_same(links, dag, window, {.check_invariants = true});
}

TEST_CASE("stream: a random DAG streams bit-identical, exact and windowed sharing") {
  const auto links = uniform_links(10, 25e9, 0.2e-6);
  for (const std::uint32_t seed : {1u, 7u, 2026u}) {
    CAPTURE(seed);
    const TransferDag dag = random_dag(seed, 1500);
    for (const std::size_t window : {3, 64, 5000}) check_same(links, dag, window);
    // Predecessors lie within 40 nodes, so a window of one holds a small part of the DAG.
    CHECK(check_same(links, dag, 1) < dag.size() / 4);
    // Windowed re-shares (not exactly max-min) take the same path in both engines too.
    check_same(links, dag, 16, {.window_flows = 4, .window_slack = 0.1});
  }
}

TEST_CASE("stream: memory follows the window, not the DAG") {
  // A 64-GPU ring streamed one step (64 transfers) per call: 8,064 transfers, but at most a
  // few steps are held at once.
  const int n = 64;
  std::vector<LinkSpec> links;
  for (int i = 0; i < 2 * n; ++i) links.push_back({BytesPerSec{450e9}, Seconds{0.5e-6}, "l" + std::to_string(i)});
  int step = 0;
  const DagSource source = [&](DagStream& s) {
    for (int r = 0; r < n; ++r) {
      const LinkId route[2] = {LinkId(r), LinkId(n + (r + 1) % n)};
      const NodeId id = s.add_transfer(route, Bytes{1 << 20});
      if (step == 0) continue;
      s.add_dependency(id - n + (r == 0 ? n - 1 : -1), id);
      s.add_dependency(id - n, id);
    }
    s.seal(static_cast<NodeId>(step * n));  // the previous step has all its successors
    return ++step < 2 * (n - 1);
  };
  const StreamResult r = run_streaming(links, source);
  const RunResult whole = run_dag(links, ring_crossbar(n, Bytes{1 << 20}));
  CHECK(r.nodes == std::size_t(2 * (n - 1) * n));
  CHECK(r.totals.makespan.count() == whole.makespan.count());
  // The engine needs step s+1 only as step s ends, so at most 4 steps are held.
  CHECK(r.peak_window <= std::size_t(4 * n));
}

TEST_CASE("stream: a source that breaks the contract is told so") {
  const auto links = uniform_links(1, 1e9, 0.0);
  SUBCASE("a node with no predecessor after the first seal") {
    int calls = 0;
    const DagSource source = [&](DagStream& s) {
      const NodeId id = s.add_delay(Seconds{1e-6});
      if (calls == 1) s.add_dependency(0, id);  // node 2 has none: it would have started at 0
      s.seal(id);
      return ++calls < 3;
    };
    CHECK_THROWS_AS(run_streaming(links, source), std::logic_error);
  }
  SUBCASE("a dependency on a sealed node") {
    int calls = 0;
    const DagSource source = [&](DagStream& s) {
      const NodeId id = s.add_delay(Seconds{1e-6});
      if (calls > 0) s.add_dependency(0, id);  // node 0 was sealed by the second call
      s.seal(id);
      return ++calls < 3;
    };
    CHECK_THROWS_AS(run_streaming(links, source), std::logic_error);
  }
  SUBCASE("a dependency on a node from an earlier call") {
    int calls = 0;
    const DagSource source = [&](DagStream& s) {
      s.add_delay(Seconds{1e-6});
      if (calls == 1) s.add_dependency(0, 0);
      return ++calls < 2;
    };
    CHECK_THROWS_AS(run_streaming(links, source), std::logic_error);
  }
  SUBCASE("a transfer bound to a processor, or a node of an earlier call") {
    int calls = 0;
    const DagSource source = [&](DagStream& s) {
      const LinkId route[1] = {0};
      const NodeId t = s.add_transfer(route, Bytes{1.0});
      if (calls == 0) CHECK_THROWS_AS(s.set_processor(t, 0), std::invalid_argument);
      if (calls == 1) CHECK_THROWS_AS(s.free_processor_at(0, 0), std::logic_error);
      if (calls > 0) s.add_dependency(t - 1, t);
      s.seal(t);
      return ++calls < 2;
    };
    const StreamResult r = run_streaming(links, source);
    CHECK(r.nodes == 2);
  }
  SUBCASE("a link that does not exist") {
    const DagSource source = [&](DagStream& s) {
      const LinkId route[1] = {3};
      s.add_transfer(route, Bytes{1.0});
      return false;
    };
    CHECK_THROWS_AS(run_streaming(links, source), std::out_of_range);
  }
}

TEST_CASE("stream: a bad node is refused as TransferDag refuses it, with the same message") {
  const auto links = uniform_links(2, 1e9, 0.0);
  const LinkId route[1] = {0};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // What a builder call throws: its type and message, or "" when it adds the node.
  const auto refusal = [](const auto& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string("invalid_argument: ") + e.what();
    } catch (const std::out_of_range& e) {
      return std::string("out_of_range: ") + e.what();
    }
    return "";
  };
  const auto same = [&](const auto& call) {
    TransferDag dag;
    DagStream stream(links);
    dag.add_route(route);
    stream.add_route(route);
    const std::string by_dag = refusal([&] { call(dag); });
    CHECK(!by_dag.empty());
    CHECK(refusal([&] { call(stream); }) == by_dag);
  };
  same([&](auto& b) { b.add_transfer(route, Bytes{-1.0}); });
  same([&](auto& b) { b.add_transfer(route, Bytes{nan}); });
  same([&](auto& b) { b.add_transfer(route, Bytes{1.0}, Seconds{-1.0}); });
  same([&](auto& b) { b.add_transfer(route, Bytes{1.0}, Seconds{nan}); });
  same([&](auto& b) { b.add_transfer(route, Bytes{1.0}, std::nullopt, BytesPerSec{0.0}); });
  same([&](auto& b) { b.add_transfer(route, Bytes{1.0}, std::nullopt, BytesPerSec::unlimited(), 9); });
  same([&](auto& b) { b.add_transfer_via(7, Bytes{1.0}); });
  same([&](auto& b) { b.add_delay(Seconds{-1.0}); });
  same([&](auto& b) { b.add_delay(Seconds{std::numeric_limits<double>::infinity()}); });
  same([&](auto& b) { b.add_delay(Seconds{1.0}, 9); });
}

TEST_CASE("stream: the header's chain of delays") {
  // Ten 1 us delays, each after the one before, one added per call: 10 us, and the stream
  // never holds more than the node running and the one added after it.
  const auto links = uniform_links(1, 1e9, 0.0);
  int step = 0;
  const DagSource source = [&](DagStream& s) {
    s.add_delay(Seconds{1e-6});
    if (step > 0) s.add_dependency(step - 1, step);
    s.seal(step);
    return ++step < 10;
  };
  std::vector<NodeId> order;
  const StreamResult r = run_streaming(links, source, {}, [&](NodeId id, const DagNode& node, const NodeTiming& t) {
    CHECK(node.kind == NodeKind::delay);
    CHECK(t.end.count() - t.start.count() == rel_approx(1e-6));
    order.push_back(id);
  });
  CHECK(r.totals.makespan.count() == rel_approx(10e-6));
  CHECK(r.nodes == 10);
  CHECK(order == std::vector<NodeId>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(r.peak_window <= 2);
}

TEST_CASE("stream: delays bound to processors (micro-batches, a held communicator) stream bit-identical") {
  const TransferDag dag = micro_batches();
  REQUIRE(dag.has_processors());
  const auto links = uniform_links(4, 40e9, 0.3e-6);
  for (const std::size_t window : {1, 2, 4, 9, 1000}) check_same(links, dag, window, {.check_invariants = true});
}
