// Benchmark (a)/(c): ring all-reduce on an N-GPU crossbar, driven directly on the engine.
//
// 2(N-1) steps; in step s GPU r sends one chunk to r+1 over [up r, down r+1]. Transfer
// (s, r) waits for (s-1, r-1) (the chunk it forwards has arrived) and (s-1, r) (its own
// previous send is done): 2(N-1) x N transfers, 2 edges each. By default the steps are
// streamed (sim/stream.h): one step is added as the simulation reaches the one before, so
// memory holds a few steps, not the whole DAG. `whole` builds the whole DAG and runs
// run_dag; `compare` runs both and counts the transfers whose start or end differ. Prints
// build and run time, simulated transfers per second of run time, and peak RSS.
//
//   bench_ring_crossbar            # 1,024 GPUs, 2.1M transfers, streamed
//   bench_ring_crossbar 4096       # 33.5M transfers
//   bench_ring_crossbar 4096 1048576 whole     # the same, the DAG built whole first
//   bench_ring_crossbar 8 1e6 ring.json        # a small ring's trace, to open in Perfetto
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_util.h"
#include "sim/executor.h"
#include "sim/stream.h"
#include "sim/trace.h"
#include "sim/transfer_dag.h"

using namespace wiresim;
using namespace wiresim::sim;

namespace {

TransferDag build_ring(int n, Bytes chunk) {
  const int steps = 2 * (n - 1);
  TransferDag dag;
  dag.reserve(std::size_t(steps) * n, 2 * std::size_t(steps) * n, 2 * std::size_t(steps) * n);
  const LabelId label = dag.intern_label("ring step");
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n;
      const LinkId route[2] = {LinkId(r), LinkId(n + next)};
      const NodeId id = dag.add_transfer(route, chunk, std::nullopt, BytesPerSec::unlimited(), label,
                                         r, next);
      if (s > 0) {
        dag.add_dependency(id - n + (r == 0 ? n - 1 : -1), id);  // (s-1, r-1)
        dag.add_dependency(id - n, id);                          // (s-1, r)
      }
    }
  dag.freeze();
  return dag;
}

// The same DAG a step per call: step s is added, and step s-1, whose successors are all
// in step s, is sealed.
DagSource ring_source(int n, Bytes chunk) {
  struct State {
    int step = 0;
    LabelId label = 0;
    std::vector<RouteId> routes;  // per rank: [up r, down r+1]
  };
  auto state = std::make_shared<State>();
  return [n, chunk, state](DagStream& s) {
    if (state->step == 0) {
      state->label = s.intern_label("ring step");
      for (int r = 0; r < n; ++r) {
        const LinkId route[2] = {LinkId(r), LinkId(n + (r + 1) % n)};
        state->routes.push_back(s.add_route(route));
      }
    }
    for (int r = 0; r < n; ++r) {
      const NodeId id = s.add_transfer_via(state->routes[r], chunk, std::nullopt, BytesPerSec::unlimited(),
                                           state->label, r, r + 1 == n ? 0 : r + 1);
      if (state->step > 0) {
        s.add_dependency(id - n + (r == 0 ? n - 1 : -1), id);  // (s-1, r-1)
        s.add_dependency(id - n, id);                          // (s-1, r)
      }
    }
    s.seal(static_cast<NodeId>(state->step * n));
    return ++state->step < 2 * (n - 1);
  };
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const Bytes chunk{argc > 2 ? std::atof(argv[2]) : 1 << 20};
  const std::string mode = argc > 3 ? argv[3] : "stream";
  const auto links = bench::crossbar(n, BytesPerSec{450e9}, Seconds{0.5e-6});

  if (mode == "stream") {
    const double t0 = bench::now_s();
    const double c0 = bench::cpu_s();
    const StreamResult result = run_streaming(links, ring_source(n, chunk));
    const double run_s = bench::now_s() - t0;
    const double run_cpu_s = bench::cpu_s() - c0;
    fmt::print("ring all-reduce, {} GPUs, crossbar, streamed: {} transfers, {} events, at most {} held\n", n,
               result.nodes, result.totals.events, result.peak_window);
    bench::print_run_stats(result.totals, result.nodes, 0.0, run_s, run_cpu_s);
    return 0;
  }

  double t0 = bench::now_s();
  const TransferDag dag = build_ring(n, chunk);
  const double build_s = bench::now_s() - t0;
  t0 = bench::now_s();
  const double c0 = bench::cpu_s();
  const RunResult result = run_dag(links, dag);
  const double run_s = bench::now_s() - t0;
  const double run_cpu_s = bench::cpu_s() - c0;
  fmt::print("ring all-reduce, {} GPUs, crossbar: {} transfers, {} events\n", n, dag.size(), result.events);
  bench::print_run_stats(result, dag.size(), build_s, run_s, run_cpu_s);

  if (mode == "compare") {
    std::size_t differ = 0;
    const StreamResult streamed =
        run_streaming(links, ring_source(n, chunk), {}, [&](NodeId id, const DagNode&, const NodeTiming& t) {
          differ += t.start.count() != result.nodes[id].start.count() || t.end.count() != result.nodes[id].end.count();
        });
    std::size_t links_differ = 0;
    for (std::size_t l = 0; l < links.size(); ++l)
      links_differ += streamed.totals.links[l].carried.count() != result.links[l].carried.count() ||
                      streamed.totals.links[l].busy.count() != result.links[l].busy.count();
    fmt::print("streamed: makespan {} ({}), {} of {} transfers and {} links differ\n",
               format_time(streamed.totals.makespan),
               streamed.totals.makespan.count() == result.makespan.count() ? "identical" : "DIFFERENT", differ,
               streamed.nodes, links_differ);
    return differ == 0 && links_differ == 0 && streamed.totals.makespan.count() == result.makespan.count() ? 0 : 1;
  }
  if (mode != "whole") {
    TraceOptions options{.track_names = {}, .links = links, .link_tracks = true};
    for (int r = 0; r < n; ++r) options.track_names.push_back(fmt::format("gpu{}", r));
    std::ofstream out(mode);
    write_chrome_trace(out, dag, result, options);
  }
}
