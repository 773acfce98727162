// The planner's question: for a model, a workload and a latency target, which system of the
// hardware catalogue (topologies/catalog.h), how many of its GPUs, laid out how and at which
// batch — cheapest per token first, with the latency/cost Pareto front and what bounds each.
//
// For every system, GPU count (powers of two up to the system's, at most max_gpus), batch
// (1, 2, 4, ... max_batch, stopping once nothing fits or the target is missed) and layout of
// one replica (tp x ep x pp, scenarios/sweep.h with max_dp 1), the step runs with a roofline
// compute model at efficiency x the catalogue's peak FLOP/s (the model's dtype) and HBM
// bandwidth. Layouts that do not fit the catalogue's GPU memory are left out and counted.
// Decode: latency = one iteration (TPOT), tokens = batch; prefill: latency = the prefill of
// `batch` prompts of `prompt` tokens (TTFT), tokens = batch x prompt. Cost per million tokens
// = price per GPU-hour x GPUs / 3600 / tokens per second x 1e6 (one replica; replicas scale
// both alike).
//
//   PlanSpec spec;
//   spec.model = load_model("scenarios/models/llama-70b.yaml");
//   spec.max_latency = sim::Seconds{0.05};                       // TPOT <= 50 ms
//   const PlanResult r = run_plan(spec, topo::default_catalog(), models::default_params(), 2, {});
//   r.plans.front();                                             // the cheapest feasible plan
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/limits.h"
#include "models/machine.h"
#include "models/params.h"
#include "scenarios/comm_cost.h"
#include "scenarios/scenario.h"
#include "scenarios/step.h"
#include "topologies/catalog.h"

namespace wiresim::scenarios {

// Achievable shares of the peak: model FLOP/s utilisation and memory bandwidth utilisation.
// Defaults: MFU 0.5 (PaLM's 46.2% in training, Chowdhery et al. 2022, rounded; prefill
// GEMMs reach about as much), MBU 0.6 (Databricks, "LLM Inference Performance Engineering",
// 2023: ~60% MBU decoding Llama-2-70B on A100/H100). Not per architecture: no source gives
// both for every GPU here; set them per run.
struct Efficiency {
  double mfu = 0.5;
  double mbu = 0.6;
};

struct PlanSpec {
  ModelShape model;
  Phase phase = Phase::decode;
  long context = 4096;        // decode: tokens in each sequence's KV cache
  long prompt = 2048;         // prefill: tokens per prompt
  long max_batch = 256;
  std::optional<sim::Seconds> max_latency;   // TPOT (decode) or TTFT (prefill)
  double min_tokens_per_s = 0.0;             // per replica
  std::vector<std::string> systems;          // catalogue names; empty: every system but clusters
  int nodes = 1;                             // clusters (a `nodes` or `racks` parameter): how many
  int max_gpus = 64;
  Efficiency efficiency;
  models::Limits limits;
  models::Transports transports;             // NCCL's transport knobs, on every system alike
};

struct Plan {
  std::string system;
  std::string accelerator;
  int gpus = 0;                 // of one replica
  int system_gpus = 0;          // in the system as configured
  Layout layout;
  long batch = 0;
  StepResult result;            // dag and run dropped
  double tokens_per_s = 0.0;    // one replica
  double cost_per_mtok = 0.0;   // USD per million tokens
  double price_per_gpu_hour = 0.0;
  bool meets_target = true;
  bool front = false;           // on the latency/cost Pareto front of the plans that meet the target
  std::string bottleneck;
};

struct PlanCounts {
  int evaluated = 0;            // plans run
  int too_big = 0;              // layouts left out for memory
  int missed = 0;               // plans run that missed the target
};

struct PlanResult {
  std::vector<Plan> plans;      // meeting the target, cheapest first (ties: faster first)
  std::vector<Plan> closest;    // when none does: the 5 fastest that ran
  PlanCounts counts;
  std::vector<std::string> notes;   // systems left out, and why
  // Per system, per GPU count tried: the largest batch some layout held in memory (0: none;
  // max_batch: every batch tried fitted). Larger batches than the target allows are not tried,
  // so this is what was found, not always the memory's limit.
  struct Fit {
    std::string system;
    int gpus = 0;
    long largest_batch = 0;
    std::string stopped;   // "memory", "target", or empty (max_batch reached)
  };
  std::vector<Fit> fits;
};

// `cost` costs communication (null: SimulatedComm). `progress` is called with a line per system.
PlanResult run_plan(const PlanSpec& spec, const topo::Catalog& catalog, const models::Params& params, int threads,
                    const std::function<void(const std::string&)>& progress, const CommCost* cost = nullptr);

// What bounds a step: "compute" when at most a quarter of it is exposed communication, else
// the collective with the most time and the tier with the most bytes.
std::string bottleneck(const StepResult& r);

}  // namespace wiresim::scenarios
