// Closed-form (α–β) time of every algorithm, on the same parameters the simulation uses.
//
// Each formula is the algorithm's schedule with every link shared only by the algorithm's
// own symmetric traffic (a link used by k of its transfers at once gives each 1/k):
//   ring (all_reduce, all_gather, reduce_scatter), per loop k and step s:
//       t = base + Σ_k Σ_s max_edges( c_k / (payload·rate_e) + λ_e ) [+ reduction]
//   chain (broadcast, reduce): the pipeline recurrence T(i,k) = max(T(i,k−1), A(i−1,k)) + c_k/r
//   one_shot: base + (n−1)·S/r + λ + reduce;  two_shot: twice (n−1)·S/(n·r) + λ, with a reduce
//   direct all_to_all: base + (n−1)·S/(n·r) + λ;  pairwise: Σ over n−1 steps of S/(n·r) + λ
//   send_recv: base + S/r + λ
//   nvls: base + 2λ + ((n+1)·L + n − 1)·w/B + (L−1)·λ·(n−1)/n (all_reduce; w: one part per loop)
//   tree: base + 2·(Σλ + D·c/r) + (L − 1)·c/r_shared  (D = depth, Σλ the slowest path's steps)
//   nvls_tree: base + fill + (L − 1)·max((g+1)·w/(eff·B), (w/2)/r_net)  (w: one part per loop;
//       fill: reduce-scatter, D hops up and down, all-gather of the first loop)
//   hierarchical: the sum of its three ring stages.
// With no contention beyond that, the event-driven simulation agrees with ring, chain,
// direct, pairwise, send_recv and single-phase nvls exactly (tests check 0.1%); nvls
// all_reduce (2%), tree (6%), nvls_tree (15%) and hierarchical overlap phases that the formula
// adds up (or, for nvls_tree, overlaps more evenly than the simulation does).
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

// Throws sim::InputError when the algorithm does not apply (same reasons as expand()).
Estimate estimate(const Machine& machine, const Problem& problem, const Choice& choice);

}  // namespace wiresim::models
