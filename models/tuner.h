// The tuner: like NCCL, for each collective and size, evaluate every applicable algorithm and
// protocol with the closed-form model and pick the fastest; keep every candidate so the
// choice can be explained.
//
// Candidate sets, from the algorithm table (models/algorithm.h), in its order: `nccl`
// (default) holds what NCCL itself would consider (all_reduce: ring, tree, nvls, nvls_tree;
// all_gather / reduce_scatter: ring, nvls; broadcast / reduce: ring; all_to_all and
// send_recv: direct point-to-point); `all` adds one-shot, two-shot, hierarchical and
// pairwise. Every protocol is tried; those an algorithm does not run with are listed as
// refused, with the reason. An algorithm the library runs ahead of its tuner (its
// descriptor's `preempts`: RCCL's MSCCL all-pairs all_reduce, where params enable it) is,
// unless an algorithm or protocol is forced or the `all` set asked for, the only candidate.
//
//   Decision d = tune(machine, problem, TunerOptions{});
//   fmt::print("{} / {}\n", to_string(d.best.algorithm), to_string(d.best.protocol));
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/alpha_beta.h"
#include "models/plan.h"

namespace wiresim::models {

// A ranking other than the closed form: a candidate's cost, or nullopt where it has none.
// models/nccl_tuning.h's nccl_time ranks as NCCL's own tuner does.
using Ranking = std::function<std::optional<Estimate>(const Machine&, const Problem&, const Choice&)>;

// `--pick`: "fastest" (an empty Ranking: the closed form) or "nccl" (nccl_time); nullopt otherwise.
std::optional<Ranking> parse_ranking(std::string_view name);

struct TunerOptions {
  std::optional<Algorithm> algorithm;   // forced (NCCL_ALGO)
  std::optional<Protocol> protocol;     // forced (NCCL_PROTO)
  std::optional<int> channels;          // forced; default: the architecture's
  bool all_algorithms = false;          // the `all` candidate set
  // Empty: the fastest by the closed form. Else the candidates this ranking costs compete by
  // that cost (those it cannot cost are left out), or, where it costs none, by the closed form.
  Ranking rank;
};

struct Candidate {
  Choice choice;
  std::optional<sim::Seconds> time;     // closed-form prediction; empty when refused
  std::string note;                     // the reason it was refused, or its formula
  std::optional<Estimate> ranked;       // TunerOptions::rank's cost and formula, where it gives one
};

struct Decision {
  Choice best;
  std::vector<Candidate> candidates;
};

// The channels NCCL runs a ring or tree collective of this size on, out of `channels`: fewer
// for small messages, so that each thread has at least its protocol's share of the bytes
// (enqueue.cc topoGetAlgoInfo). Other algorithms keep `channels`.
int channels_for_size(const Problem& problem, Algorithm algorithm, Protocol protocol, int channels);

// Why NCCL would not run LL128 for these ranks unless NCCL_PROTO asks for it, or nullopt where
// it would (src/graph/tuning.cc ncclTopoTuneModel, NCCL >= 2.27.5; older NCCL also only on
// sm70/80/90): only where its rings stay on NVLink inside a node (typeIntra <= NVB), and before
// Hopper only where every GPU reaches its NIC through PCIe switches (typeInter <= PXB). The
// tuner leaves LL128 out of an unforced choice where this says so. RCCL decides by its own
// rule (gfx90a/942/950 with a tuned model): AMD GPUs are not judged here.
std::optional<std::string> ll128_off_by_default(const Machine& machine, const Problem& problem);

// Throws input::InputError when nothing applies (a forced algorithm that does not fit, say).
Decision tune(const Machine& machine, const Problem& problem, const TunerOptions& options);

}  // namespace wiresim::models
