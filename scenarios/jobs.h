// Several jobs on one fabric: each job is a scenario (scenarios/scenario.h) placed on its own
// GPUs of one shared topology, optionally starting later than the others. Every job's step is
// built as run_step builds it, then all are spliced into one DAG and simulated together, so
// their collectives share NICs, leaves and spines; each job's time beside the others is set
// against its time alone, and the links that carried more than one job's bytes are listed.
//
// A jobs file:
//   topology: ../../topologies/cluster-h100-ib.yaml
//   set: {nodes: 4, leaf_radix: 3, oversubscription: 2}
//   jobs:
//     - {name: a, scenario: ../llama70b-2node-tp16.yaml, nodes: [0, 2]}
//     - {name: b, scenario: ../llama70b-2node-tp16.yaml, nodes: [1, 3], start: 100us}
// A job names its GPUs by node (every GPU of each node, node after node) or by index in
// topology order (`gpus:`); its ranks fill them in that order (the scenario's placement is
// replaced). Its scenario's own topology, faults and transport are not read; the file may have
// `faults:` and `transport:` sections of its own (scenario.h). Jobs may not share a GPU.
//
//   const JobsSpec spec = load_jobs("scenarios/jobs/two-tp16-prefill.yaml");
//   const topo::LinkGraph g = topo::load_topology(spec.topology, spec.set);
//   JobsResult r = run_jobs(spec, models::Machine(g, models::default_params()), SimulatedComm{});
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "models/limits.h"
#include "models/machine.h"
#include "scenarios/comm_cost.h"
#include "scenarios/scenario.h"
#include "sim/units.h"

namespace wiresim::scenarios {

struct Job {
  std::string name;
  Scenario scenario;
  std::vector<int> nodes;      // by node; or
  std::vector<int> gpus;       // by GPU index in topology order
  sim::Seconds start;          // after the shared run's start
  int line = 0, column = 0;    // of its entry in the jobs file, for messages
};

// Where a job runs, as every output names it: "nodes 0,2", or "GPUs 0,1,2" (GPU indices in
// topology order) for a job given its GPUs.
std::string placement_text(const Job& job);

struct JobsSpec {
  std::string file;
  std::string name;
  std::string topology;                    // path, resolved against the file's folder
  std::map<std::string, std::string> set;  // topology overrides
  std::vector<std::string> fail;           // `faults:` as in a scenario (its jobs' own are not read)
  std::vector<std::string> degrade;
  models::Transports transports;           // `transport:` as in a scenario (its jobs' own are not read)
  std::vector<Job> jobs;
};

// Throws input::InputError at file:line:column for anything unknown, missing or invalid.
JobsSpec load_jobs(const std::string& path, const std::map<std::string, std::string>& overrides = {});

struct JobOutcome {
  std::string name;
  std::vector<int> gpus;       // rank order, indices into graph.gpus()
  sim::Seconds start;
  sim::Seconds alone;          // its step with the fabric to itself
  sim::Seconds together;       // from its start to its last event, beside the other jobs
};

struct SharedLink {
  std::string link;
  std::vector<sim::Bytes> bytes;   // per job, in the spec's order
  double utilisation = 0.0;        // all jobs' bytes / (capacity x makespan)
};

struct JobsResult {
  std::vector<JobOutcome> jobs;
  sim::Seconds makespan;            // of the shared run
  std::vector<SharedLink> shared;   // links that carried two or more jobs' bytes, busiest first (10 at most)
  std::size_t shared_count = 0;     // how many links did
};

// Throws input::InputError (at the job's entry) when a job's GPUs do not exist, do not match
// its layout's GPU count or overlap another job's, and when the shared DAG would exceed `limits`.
JobsResult run_jobs(const JobsSpec& spec, const models::Machine& machine, const CommCost& cost,
                    const models::Limits& limits = {});

// How a scheduler might place jobs that take whole nodes, each job keeping its node count:
//   pack        each job, in file order, takes the next free nodes in index order, so its nodes
//               sit together (under one leaf, where a leaf holds them all);
//   interleave  the nodes are dealt out one at a time, job after job, so each job's nodes are
//               spread over the fabric.
enum class PlacementPolicy { pack, interleave };
std::string_view to_string(PlacementPolicy p);

// `spec` with every job's nodes chosen by `policy` among `graph`'s nodes with GPUs. Throws
// input::InputError at a job given by `gpus:` (policies move whole nodes) and when the jobs
// need more nodes than the topology has.
JobsSpec place_jobs(const JobsSpec& spec, PlacementPolicy policy, const topo::LinkGraph& graph);

// One placement of the jobs and what it gave: `names` are the placements that came out the
// same ("as given", "pack", "interleave").
struct PlacementRun {
  std::vector<std::string> names;
  JobsSpec spec;
  JobsResult result;
  double worst_slowdown() const;   // the largest together / alone of its jobs
};

// The file's placement and every policy's, each run (run_jobs), those that come out the same
// run once under all their names, ranked by when the last job ends (ties: the file's first).
std::vector<PlacementRun> compare_placements(const JobsSpec& spec, const models::Machine& machine,
                                             const CommCost& cost, const models::Limits& limits = {});

}  // namespace wiresim::scenarios
