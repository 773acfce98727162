// Sweep: every valid (tp, ep, pp, dp) layout and placement of a model on N GPUs of a
// topology, each step simulated, ranked by an objective and explained.
//
//   SweepSpec spec{model, workload, N, Objective::step_time};
//   const SweepResult r = run_sweep(spec, models::Machine(graph, models::default_params()), threads, progress);
//   r.rows.front().layout;        // the best layout
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/machine.h"
#include "scenarios/memory.h"
#include "scenarios/scenario.h"
#include "scenarios/step.h"
#include "topologies/link_graph.h"

namespace wiresim::scenarios {

enum class Objective { step_time, comm_time, tokens_per_s };

struct SweepSpec {
  ModelShape model;
  Workload workload;      // micro_batches 0: try 1, 2, 4, 8 per layout and keep the best
  int gpus = 8;
  Objective objective = Objective::step_time;
  Compute compute;
  std::string topology;   // for messages and the scenario name
  // Each GPU's memory (GB = 1e9 B): layouts whose weights, KV cache and activations need more
  // than its usable share (scenarios/memory.h) are left out and counted; 0: no check.
  sim::Bytes gpu_memory;
  // Distributed sweeps: this process evaluates the layouts whose index % shards == shard
  // and returns them unranked; the caller gathers every shard and calls rank_sweep.
  int shard = 0;
  int shards = 1;
  // For the whole sweep: each of T worker threads may use max_memory / T for its layout.
  models::Limits limits;
  // Layouts with at most this many data-parallel replicas (0: any): a planner costs one
  // replica and multiplies.
  int max_dp = 0;
  // How each collective's algorithm is picked (Scenario::pick): fastest or nccl.
  std::string pick = "fastest";
};

struct SweepRow {
  int index = 0;          // position in enumeration order (ties rank by it)
  Layout layout;
  int micro_batches = 1;  // what the result used (the best one when the sweep chose)
  StepResult result;      // dag and run dropped to keep memory bounded
  std::string explanation;
};

// How many layouts enumerate_layouts found, and how many did not fit in gpu_memory.
struct SweepCounts {
  int enumerated = 0;
  int too_big = 0;
};

struct SweepResult {
  std::vector<SweepRow> rows;
  SweepCounts counts;
};

// Every layout with tp * pp * dp = gpus that fits the model, pack and (on more than one
// node) spread placements; ep over the divisors of the experts that divide tp * dp.
std::vector<Layout> enumerate_layouts(const ModelShape& model, int gpus, int nodes);
// Runs every layout's step on `threads` threads, each on its own copy of
// `machine`; rows are ranked best first (ties keep the enumeration order, so the output
// does not depend on the thread count). `progress` (done, total) is called from the
// calling thread.
// `cost` is how steps cost communication (null: SimulatedComm).
SweepResult run_sweep(const SweepSpec& spec, const models::Machine& machine, int threads,
                      const std::function<void(int, int)>& progress, const CommCost* cost = nullptr);
// Best first by the objective, ties by enumeration order; fills the explanations.
std::vector<SweepRow> rank_sweep(std::vector<SweepRow> rows, Objective objective);
std::string layout_name(const Layout& l);

}  // namespace wiresim::scenarios
