// Closed-form (α–β) time of a collective, on the same parameters the simulation uses.
//
// Each algorithm's formula is its descriptor's closed_form (models/algorithm.h), in the
// algorithm's own file beside the expansion it must match: the schedule with every link shared
// only by the algorithm's own symmetric traffic (a link used by k of its transfers at once
// gives each 1/k), on the blocks of models/closed_form.h. With no contention beyond that, the
// event-driven simulation agrees with ring, chain, direct, pairwise, send_recv and
// single-phase nvls exactly (tests check 0.1%); nvls all_reduce (2%), tree (6%), nvls_tree
// (15%) and hierarchical overlap phases that the formula adds up (or, for nvls_tree, overlaps
// more evenly than the simulation does). A host launch floor applies to every algorithm.
//
//   Estimate e = estimate(machine, problem, Choice{Algorithm::ring, Protocol::simple, 16});
//   fmt::print("{} = {}\n", e.formula, sim::format_time(e.time));
#pragma once

#include <string>

#include "models/plan.h"

namespace wiresim::models {

struct Estimate {
  sim::Seconds time;
  std::string formula;   // the formula with its numbers, for --explain
};

// Throws input::InputError when the algorithm does not apply (same reasons as expand()).
Estimate estimate(const Machine& machine, const Problem& problem, const Choice& choice);

}  // namespace wiresim::models
