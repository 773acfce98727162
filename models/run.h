// Running one collective: expand and simulate it (or evaluate its closed form), and report
// what nccl-tests would print — time, algbw, busbw — plus the links that limited it.
//
//   Outcome o = run_collective(machine, problem, choice, Method::simulate);
//   fmt::print("{:.1f} us, busbw {:.1f} GB/s\n", o.time.us(), o.busbw_GBps);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/plan.h"
#include "sim/executor.h"

namespace wiresim::models {

enum class Method { simulate, analytic };

struct Outcome {
  Choice choice;
  sim::Seconds time;
  double algbw_GBps = 0.0;   // size / time, GB = 1e9 B (nccl-tests)
  double busbw_GBps = 0.0;   // algbw x bus_factor
  std::string shape;
  std::size_t transfers = 0;
  struct HotLink {
    sim::LinkId link;
    double utilisation;      // bytes carried / (capacity x time)
    sim::Bytes carried;
  };
  std::vector<HotLink> hottest;   // simulate only: the busiest links, busiest first
  std::uint64_t local_reshares = 0;  // simulate only: windowed re-shares (sim::RunResult)
};

// A simulated run, kept for traces.
struct Detail {
  Plan plan;
  sim::RunResult run;
};

// `options` are the engine's (windowed max-min, a progress callback); the default is exact.
Outcome run_collective(const Machine& machine, const Problem& problem, const Choice& choice, Method method,
                       Detail* detail = nullptr, const sim::RunOptions& options = {});

}  // namespace wiresim::models
