// Limits: how big a simulation may get, and an estimate of a plan's size made before it is
// expanded, so that an absurd request (an exabyte, a million GPUs) is refused up front with
// the estimate and the limit, never killed by the kernel for want of memory.
//
// A plan of N DAG nodes holds each node (48 B), its route links, its dependency edges (kept
// twice: successors and predecessors) and the executor's timing per node: about
// kBytesPerNode all told: a ring all_reduce of 1.8 million nodes peaks at 170 MB (95 B per
// node), and the estimate keeps a third in hand.
// The engine handles about two events per node (its start and its end).
//
//   Problem p{...};  p.limits.max_memory = parse_size("2GiB");
//   check_plan_limits(machine, p, choice);   // throws input::InputError when it would not fit
#pragma once

#include <string>

#include "sim/units.h"

namespace wiresim::models {

class Machine;
struct Problem;
struct Choice;

struct Limits {
  sim::Bytes max_memory{8.0 * (1ull << 30)};  // --max-memory
  double max_events = 2e9;                    // --max-events
};

// Bytes a plan needs per DAG node, everything included (DAG, CSR lists, run result).
constexpr double kBytesPerNode = 128.0;

struct PlanEstimate {
  double nodes = 0.0;   // DAG nodes (transfers and delays)
  double events = 0.0;  // events the engine will process
  sim::Bytes memory;    // nodes x kBytesPerNode
};

// The size of expand(machine, problem, choice), from the sends the algorithm's descriptor
// counts (its plan_size, models/algorithm.h: the same loop and chunk arithmetic as its
// expansion), without building anything. An estimate, not exact: within a factor of two of
// the real plan for every algorithm.
PlanEstimate estimate_plan(const Machine& machine, const Problem& problem, const Choice& choice);

// Throws input::InputError naming the estimate and the limit when the plan would exceed
// problem.limits.
void check_plan_limits(const Machine& machine, const Problem& problem, const Choice& choice);

// Parses --max-memory ("8GiB") and --max-events ("2e9"); throws InputError naming the option.
sim::Bytes parse_max_memory(const std::string& text);
double parse_max_events(const std::string& text);

}  // namespace wiresim::models
