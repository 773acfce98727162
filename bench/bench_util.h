// Small helpers shared by the engine benchmarks: wall-clock timing, peak memory, and a
// crossbar of links (GPU i has uplink i into the switch and downlink n + i out of it).
//
//   const double t0 = bench::now_s();
//   auto links = bench::crossbar(1024, BytesPerSec{450e9}, Seconds{0.5e-6});
//   fmt::print("{:.3f} s, peak {:.0f} MiB\n", bench::now_s() - t0, bench::peak_rss_mib());
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/executor.h"

namespace wiresim::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of this process: on a shared machine, less noisy than wall time.
inline double cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Peak resident set size of this process so far (Linux reports ru_maxrss in KiB).
inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

inline std::vector<sim::LinkSpec> crossbar(int gpus, sim::BytesPerSec capacity, sim::Seconds latency) {
  std::vector<sim::LinkSpec> links;
  links.reserve(2 * gpus);
  for (int i = 0; i < gpus; ++i)
    links.push_back({capacity, latency, "gpu" + std::to_string(i) + "->switch"});
  for (int i = 0; i < gpus; ++i)
    links.push_back({capacity, latency, "switch->gpu" + std::to_string(i)});
  return links;
}

// The two lines every engine benchmark prints after a run (bench/README.md reads them):
// timings and memory, then what the engine did.
inline void print_run_stats(const sim::RunResult& result, std::size_t transfers, double build_s, double run_s,
                            double run_cpu_s) {
  fmt::print("build_s {:.3f}  run_s {:.3f}  run_cpu_s {:.3f}  transfers_per_cpu_s {:.0f}  peak_rss_MiB {:.0f}\n",
             build_s, run_s, run_cpu_s, static_cast<double>(transfers) / run_cpu_s, peak_rss_mib());
  fmt::print("makespan {}  peak_concurrent {}  components_solved {}  flows_resolved {}\n",
             sim::format_time(result.makespan), result.peak_concurrent_transfers, result.components_solved,
             result.flows_resolved);
}

}  // namespace wiresim::bench
