// One inference step of a scenario: every collective its layout implies, with the compute
// between them, composed into one DAG and simulated together — so data-parallel replicas
// (and expert groups spanning them) that share NICs, rails or spines contend.
//
// Per layer (tokens T per replica; h hidden; b bytes per element):
//   dense layer: attention compute, TP all_reduce of T·h·b, MLP compute, TP all_reduce;
//   MoE layer (ep > 1): attention, TP all_reduce, all_to_all dispatch of (T/tp)·top_k·h·b
//   per rank (skewed by the experts' loads), expert compute, all_to_all combine;
// between pipeline stages, each TP rank sends its (T/tp)·h·b activations to the next stage.
// One prefill (or one decode iteration, T = batch), split into workload.micro_batches that
// flow one behind the other: a stage takes micro-batch k once the previous stage handed it
// over; each GPU computes one kernel at a time, earliest micro-batch first among those
// ready, so one micro-batch computes while another's collectives are on the wire.
// A communicator (a kind of collective over one GPU set) runs one collective at a time,
// earliest micro-batch first, as NCCL queues them on its stream.
//
// How communication is costed is a strategy passed in (scenarios/comm_cost.h): simulated
// (the event-driven run of every chunk), closed form (each collective its closed-form time,
// no contention between groups) or naive (total traffic over the wire's quoted bandwidth, as
// a back-of-the-envelope estimate does). A load phase copies the weights from host memory;
// a decode with workload.offload copies its offloaded KV cache and weights in every step.
//
//   const models::Machine machine(graph, models::default_params());
//   StepResult r = run_step(scenario, machine, SimulatedComm{});
//   fmt::print("{:.2f} ms\n", r.step.ms());
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/limits.h"
#include "models/machine.h"
#include "scenarios/comm_cost.h"
#include "scenarios/memory.h"
#include "scenarios/scenario.h"
#include "sim/executor.h"
#include "sim/transfer_dag.h"
#include "topologies/link_graph.h"

namespace wiresim::scenarios {

// Processor ids in a step's DAG: GPUs are their index, below kCommunicatorBase; each
// communicator (a kind of collective over one GPU set) is kCommunicatorBase + its number.
inline constexpr std::uint32_t kCommunicatorBase = 1u << 30;

struct CollectiveStats {
  int count = 0;               // in the whole step, all replicas
  sim::Bytes bytes;            // nccl-tests size summed
  sim::Seconds time;           // wall time with one in flight on replica 0 (overlaps once)
  std::string algorithm;       // "nvls/simple" (the tuner's choice; the last seen)
};

struct TierStats {
  sim::Bytes bytes;            // carried over links of this tier
  sim::Seconds busy;           // summed link busy time
};

struct StepResult {
  sim::Seconds step;
  sim::Seconds compute;        // the same step with communication free (bubbles included)
  sim::Seconds comm;           // wall time with any collective in flight on replica 0
  sim::Seconds exposed_comm;   // step − compute
  std::map<std::string, CollectiveStats> by_collective;   // tp_all_reduce, ep_all_to_all, pp_send_recv
  std::map<std::string, TierStats> by_tier;
  struct HotLink {
    std::string link;
    double utilisation;
  };
  std::vector<HotLink> busiest;        // the 5 busiest links
  std::vector<HotLink> utilisation;    // every link that carried bytes, busiest first (at most 256)
  double tokens_per_s = 0.0;
  MemoryUse memory;            // per GPU (scenarios/memory.h)
  sim::Bytes gpu_memory;       // the smallest capacity among the layout's GPUs; 0: not given
  // Mean over the layout's GPUs of the share of the step they spend computing (0 without a
  // compute model): what pipeline bubbles and exposed communication leave of the GPUs.
  double compute_utilisation = 0.0;
  sim::Seconds per_token_latency;
  std::string note;            // naive: how each wire's bandwidth was quoted
  std::vector<int> gpu_of_rank;
  // Each communicator (a kind of collective over one GPU set) and how its ring neighbours
  // exchange: "P2P/NVLink x7, SHM x1" (SHM: staged through host memory).
  struct Group {
    std::string kind;
    std::vector<int> gpus;       // indices into graph.gpus()
    std::string transports;
    bool staged = false;         // some neighbour pair goes through host memory
    bool shm = false;            // ... as SHM (GPUs of one node)
    bool net_via_host = false;   // ... as NET without GPUDirect RDMA (or over sockets)
  };
  std::vector<Group> groups;
  // A decode's offload (workload.offload), per step: the bytes its copies move over all GPUs,
  // the wall time with one of replica 0's in flight, and what the step waits for them: the
  // step minus the same step with its KV cache and weights resident (0: fully hidden).
  struct OffloadStats {
    sim::Bytes to_gpu, to_host;
    sim::Seconds time;
    sim::Seconds exposed;
  };
  std::optional<OffloadStats> offload;
  // the step's DAG and its run, for traces
  sim::TransferDag dag;
  sim::RunResult run;
};

// What holds a step back, read off its result (one rule for run --explain, sweep and plan):
// communication bounds it when exposed communication is more than a quarter of the step; the
// slowest collective is the one longest in flight on replica 0; the busiest tier carried the most
// summed link time (bytes over a slow tier weigh more than the same bytes over NVLink).
struct StepBound {
  bool communication = false;
  std::string collective;                      // "" without communication
  const CollectiveStats* slowest = nullptr;
  std::string tier;                            // "" when no link carried bytes
  const TierStats* busiest = nullptr;
};
StepBound step_bound(const StepResult& r);

// Throws input::InputError when the layout does not fit the machine's topology, or (a strategy
// that expands collectives) when the step's DAG, estimated before it is built, would exceed
// `limits`.
StepResult run_step(const Scenario& scenario, const models::Machine& machine, const CommCost& cost,
                    const models::Limits& limits = {});

// Rank -> GPU index (in graph.gpus()) for the scenario's placement.
std::vector<int> place_ranks(const Layout& layout, const topo::LinkGraph& graph);

}  // namespace wiresim::scenarios
