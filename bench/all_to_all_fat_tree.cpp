// Benchmark (b): all-to-all of N GPUs on a two-level fat tree, every transfer at once.
//
// Leaves of k GPUs (k = 32 by default), one uplink from each leaf to each of k spines, all
// links 50 GB/s and 0.5 us: non-blocking. GPU i -> j on the same leaf uses [up i, down j];
// across leaves [up i, leaf->spine, spine->leaf, down j] with the spine chosen by
// destination modulo k (D-mod-k routing), or by a hash of (i, j) with "hash". All N(N-1)
// transfers start at 0 and share links in one connected component. With "uneven", pair
// (i, j) sends between 0.5x and 1.5x the size (a hash of i, j), as a MoE dispatch does: every
// transfer then ends at its own time, and each end re-solves the whole component. With
// "zipf", rank j also receives in proportion to a Zipf(1.2) popularity of expert j (mean
// 1; the hottest expert about 30x the mean at 1,024 ranks), times the same jitter: a
// skewed MoE dispatch.
// WINDOW and SLACK set RunOptions::window_flows / window_slack (local re-shares of giant
// components); "compare" also runs it exactly and prints the error of every transfer's end.
//
//   bench_all_to_all_fat_tree                  # 1,024 GPUs, 1.05M transfers, D-mod-k
//   bench_all_to_all_fat_tree 1024 65536 hash    # ECMP-like hashed spines: uneven load
//   bench_all_to_all_fat_tree 128 65536 uneven   # uneven sizes (exact: cost grows as N^4)
//   bench_all_to_all_fat_tree 128 65536 uneven 4096 0.01 compare   # windowed vs exact
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_util.h"
#include "sim/executor.h"
#include "sim/transfer_dag.h"

using namespace wiresim;
using namespace wiresim::sim;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;
  const Bytes bytes{argc > 2 ? std::atof(argv[2]) : 65536};
  const std::string variant = argc > 3 ? argv[3] : "";
  const bool hashed = variant == "hash";
  const bool zipf = variant == "zipf";
  const bool uneven = variant == "uneven" || zipf;
  RunOptions options;
  options.window_flows = argc > 4 ? static_cast<std::size_t>(std::atof(argv[4])) : 0;
  options.window_slack = argc > 5 ? std::atof(argv[5]) : 0.0;
  const bool compare = argc > 6 && std::string(argv[6]) == "compare";
  // Zipf(1.2) popularity of expert j (the experts' order shuffled by a hash), mean 1.
  std::vector<double> popularity(n, 1.0);
  if (zipf) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += popularity[j] = std::pow(1.0 + (std::uint32_t(j) * 2654435761u) % n, -1.2);
    for (double& p : popularity) p *= n / sum;
  }
  const int k = 32;
  const int leaves = (n + k - 1) / k;
  const int spines = k;
  const BytesPerSec rate{50e9};
  const Seconds latency{0.5e-6};

  std::vector<LinkSpec> links;
  for (int i = 0; i < n; ++i) links.push_back({rate, latency, fmt::format("gpu{}->leaf{}", i, i / k)});
  for (int i = 0; i < n; ++i) links.push_back({rate, latency, fmt::format("leaf{}->gpu{}", i / k, i)});
  const auto up = [&](int leaf, int spine) { return LinkId(2 * n + leaf * spines + spine); };
  const auto down = [&](int spine, int leaf) { return LinkId(2 * n + leaves * spines + spine * leaves + leaf); };
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s) links.push_back({rate, latency, fmt::format("leaf{}->spine{}", l, s)});
  for (int s = 0; s < spines; ++s)
    for (int l = 0; l < leaves; ++l) links.push_back({rate, latency, fmt::format("spine{}->leaf{}", s, l)});

  double t0 = bench::now_s();
  TransferDag dag;
  dag.reserve(std::size_t(n) * (n - 1), 4 * std::size_t(n) * (n - 1), 0);
  const LabelId label = dag.intern_label("all_to_all");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const int li = i / k, lj = j / k;
      const int spine = hashed ? static_cast<int>((std::uint32_t(i) * 2654435761u ^ std::uint32_t(j) * 40503u) % spines)
                               : j % spines;
      const double scale = (uneven ? 0.5 + ((std::uint32_t(i) * 2654435761u + std::uint32_t(j) * 97u) % 1000) / 1000.0 : 1.0) *
                           popularity[j];
      if (li == lj) {
        const LinkId route[2] = {LinkId(i), LinkId(n + j)};
        dag.add_transfer(route, bytes * scale, std::nullopt, BytesPerSec::unlimited(), label, i, j);
      } else {
        const LinkId route[4] = {LinkId(i), up(li, spine), down(spine, lj), LinkId(n + j)};
        dag.add_transfer(route, bytes * scale, std::nullopt, BytesPerSec::unlimited(), label, i, j);
      }
    }
  dag.freeze();
  const double build_s = bench::now_s() - t0;

  t0 = bench::now_s();
  const double c0 = bench::cpu_s();
  const RunResult result = run_dag(links, dag, options);
  const double run_s = bench::now_s() - t0;
  const double run_cpu_s = bench::cpu_s() - c0;

  fmt::print("all-to-all, {} GPUs, fat tree {} leaves x {} spines ({}): {} transfers, {} events\n", n,
             leaves, spines, hashed ? "hashed spines" : zipf ? "D-mod-k, Zipf-skewed sizes" : uneven ? "D-mod-k, uneven sizes" : "D-mod-k", dag.size(), result.events);
  bench::print_run_stats(result, dag.size(), build_s, run_s, run_cpu_s);
  fmt::print("window_flows {}  window_slack {}  local_reshares {}  approximate {}\n", options.window_flows,
             options.window_slack, result.local_reshares, result.approximate);
  if (!compare) return 0;
  const double e0 = bench::cpu_s();
  const RunResult exact = run_dag(links, dag);
  double worst = 0.0, sum = 0.0;
  for (NodeId id = 0; id < dag.size(); ++id) {
    const double err = (result.nodes[id].end - exact.nodes[id].end).count() / exact.makespan.count();
    worst = std::max(worst, std::fabs(err));
    sum += std::fabs(err);
  }
  fmt::print("exact: makespan {}  run_cpu_s {:.3f}\n", format_time(exact.makespan), bench::cpu_s() - e0);
  fmt::print("error: makespan {:+.4f}%  transfer ends (of the exact makespan) max {:.4f}%  mean {:.4f}%\n",
             100.0 * (result.makespan - exact.makespan).count() / exact.makespan.count(), 100.0 * worst,
             100.0 * sum / static_cast<double>(dag.size()));
}
