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

}  // namespace wiresim::bench
