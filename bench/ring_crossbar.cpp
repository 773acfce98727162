// Benchmark (a)/(c): ring all-reduce on an N-GPU crossbar, driven directly on the engine.
//
// 2(N-1) steps; in step s GPU r sends one chunk to r+1 over [up r, down r+1]. Transfer
// (s, r) waits for (s-1, r-1) (the chunk it forwards has arrived) and (s-1, r) (its own
// previous send is done): 2(N-1) x N transfers, 2 edges each. Prints build and run time,
// simulated transfers per second of run time, and peak RSS.
//
//   bench_ring_crossbar            # 1,024 GPUs, 2.1M transfers
//   bench_ring_crossbar 4096       # 33.5M transfers
//   bench_ring_crossbar 8 1e6 ring.json   # a small ring's trace, to open in Perfetto
#include <cstdlib>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_util.h"
#include "sim/executor.h"
#include "sim/trace.h"
#include "sim/transfer_dag.h"

using namespace wiresim;
using namespace wiresim::sim;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const Bytes chunk{argc > 2 ? std::atof(argv[2]) : 1 << 20};
  const int steps = 2 * (n - 1);
  const auto links = bench::crossbar(n, BytesPerSec{450e9}, Seconds{0.5e-6});

  double t0 = bench::now_s();
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
  const double build_s = bench::now_s() - t0;

  t0 = bench::now_s();
  const double c0 = bench::cpu_s();
  const RunResult result = run_dag(links, dag);
  const double run_s = bench::now_s() - t0;
  const double run_cpu_s = bench::cpu_s() - c0;

  fmt::print("ring all-reduce, {} GPUs, crossbar: {} transfers, {} events\n", n, dag.size(),
             result.events);
  bench::print_run_stats(result, dag.size(), build_s, run_s, run_cpu_s);
  if (argc > 3) {
    TraceOptions options{.track_names = {}, .links = links, .link_tracks = true};
    for (int r = 0; r < n; ++r) options.track_names.push_back(fmt::format("gpu{}", r));
    std::ofstream out(argv[3]);
    write_chrome_trace(out, dag, result, options);
  }
}
