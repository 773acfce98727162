#include "models/tuner.h"

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/alpha_beta.h"
#include "models/nccl_tuning.h"
#include "input/input_error.h"

namespace wiresim::models {
namespace {

// The table's algorithms in the candidate set for this collective, in the table's order.
std::vector<Algorithm> candidate_algorithms(Collective op, bool all) {
  std::vector<Algorithm> out;
  for (const AlgorithmDescriptor* d : algorithms())
    if ((all ? d->all : d->nccl).contains(op)) out.push_back(d->id);
  return out;
}

}  // namespace

std::optional<std::string> ll128_off_by_default(const Machine& machine, const Problem& problem) {
  const topo::GpuArch& arch = machine.gpu_arch();
  if (arch.vendor == topo::GpuVendor::amd) return std::nullopt;   // RCCL's own rule, not modelled
  // typeIntra: the worst hop the rings take inside a node (a pair staged through host memory
  // is a PCIe path to NCCL's search, P2P off included).
  const auto orders = ring_orders(machine, problem, machine.arch().channels);
  for (const auto& order : orders)
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto a = problem.ranks[static_cast<std::size_t>(order[k])];
      const auto b = problem.ranks[static_cast<std::size_t>(order[(k + 1) % order.size()])];
      if (a == b || machine.node_of(a) != machine.node_of(b)) continue;
      if (machine.staged(a, b) || machine.path_type(a, b) > PathType::nvb)
        return std::string("NCCL runs LL128 by default only where its rings stay on NVLink inside a node "
                           "(typeIntra <= NVB); NCCL_PROTO=LL128 (--proto ll128) forces it");
    }
  // typeInter: the path from a GPU to its NIC; Hopper and later accept any (C2C, PXN), older
  // GPUs a NIC behind their own PCIe switches (PIX, PXB).
  if (arch.compute_capability < 90 && node_count(machine, problem) > 1) {
    for (auto g : problem.ranks) {
      bool near = false;
      for (auto nic : machine.router().nearest_nics(g)) near = near || machine.path_type(g, nic) <= PathType::pxb;
      if (!near)
        return std::string("NCCL runs LL128 by default before Hopper only where each GPU reaches its NIC through "
                           "PCIe switches (typeInter <= PXB); NCCL_PROTO=LL128 (--proto ll128) forces it");
    }
  }
  return std::nullopt;
}

int channels_for_size(const Problem& problem, Algorithm algorithm, Protocol protocol, int channels) {
  if (algorithm != Algorithm::ring && algorithm != Algorithm::tree) return channels;
  // NCCL's per-thread work thresholds (src/graph/tuning.cc: NCCL_LL/LL128/SIMPLE_THREAD_THRESHOLD,
  // the ring LL one times the ranks) and thread counts (src/include/device.h: NCCL_LL_MAX_NTHREADS
  // 512, NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512); topoGetAlgoInfo in
  // src/enqueue.cc drops channels while bytes < channels x threads x threshold.
  const double ranks = static_cast<double>(problem.ranks.size());
  double threads = 512.0, threshold = 64.0;
  if (protocol == Protocol::ll) threshold = algorithm == Algorithm::ring ? 8.0 * ranks : 8.0;
  if (protocol == Protocol::ll128) threads = 640.0, threshold = 8.0;
  int nc = channels;
  while (nc > 1 && problem.size.count() < nc * threads * threshold) --nc;
  return nc;
}

std::optional<Ranking> parse_ranking(std::string_view name) {
  if (name == "fastest") return Ranking{};
  if (name == "nccl") return Ranking{nccl_time};
  return std::nullopt;
}

Decision tune(const Machine& machine, const Problem& problem, const TunerOptions& options) {
  Decision d;
  const std::vector<Algorithm> algos = options.algorithm ? std::vector<Algorithm>{*options.algorithm}
                                                         : candidate_algorithms(problem.op, options.all_algorithms);
  const std::vector<Protocol> protos = options.protocol ? std::vector<Protocol>{*options.protocol} : all_protocols();
  const int channels = options.channels.value_or(machine.arch().channels);
  // The library's own algorithm for this problem, run ahead of its tuner: the only candidate.
  if (!options.algorithm && !options.protocol && !options.all_algorithms)
    for (const AlgorithmDescriptor* a : algorithms()) {
      if (!a->preempts) continue;
      const std::optional<Protocol> p = a->preempts(machine, problem);
      if (p && !why_not(machine, problem, a->id, *p)) {
        Candidate c{Choice{a->id, *p, channels_for_size(problem, a->id, *p, channels)}, std::nullopt, "", std::nullopt};
        const Estimate e = estimate(machine, problem, c.choice);
        c.time = e.time;
        c.note = e.formula + " (the library runs it ahead of its tuner)";
        d.best = c.choice;
        d.candidates.push_back(std::move(c));
        return d;
      }
    }
  std::optional<sim::Seconds> best_time;
  std::string first_refusal;
  // NCCL enables LL128 only on some paths unless NCCL_PROTO names it (a forced protocol here).
  std::optional<std::optional<std::string>> ll128_off;
  for (Algorithm a : algos)
    for (Protocol p : protos) {
      Candidate c{Choice{a, p, channels_for_size(problem, a, p, channels)}, std::nullopt, "", std::nullopt};
      std::optional<std::string> reason = why_not(machine, problem, a, p);
      if (!reason && p == Protocol::ll128 && !options.protocol) {
        if (!ll128_off) ll128_off = ll128_off_by_default(machine, problem);
        reason = *ll128_off;
      }
      if (reason) {
        c.note = *reason;
        // Name the protocol only where the user forced it: a refusal for the ranks holds for all.
        if (first_refusal.empty())
          first_refusal = options.protocol ? fmt::format("--algo {} --proto {}: {}", to_string(a), to_string(p), *reason)
                                           : fmt::format("--algo {}: {}", to_string(a), *reason);
      } else {
        const Estimate e = estimate(machine, problem, c.choice);
        c.time = e.time;
        c.note = e.formula;
        // Strictly faster wins, so ties keep the earlier (simpler) candidate.
        if (!best_time || e.time < *best_time) {
          best_time = e.time;
          d.best = c.choice;
        }
      }
      d.candidates.push_back(std::move(c));
    }
  if (!best_time) throw input::InputError(first_refusal.empty() ? "no algorithm applies" : first_refusal);
  if (options.rank) {
    std::optional<sim::Seconds> best_ranked;
    for (Candidate& c : d.candidates) {
      if (!c.time) continue;
      c.ranked = options.rank(machine, problem, c.choice);
      if (c.ranked && (!best_ranked || c.ranked->time < *best_ranked)) {
        best_ranked = c.ranked->time;
        d.best = c.choice;
      }
    }
  }
  return d;
}

}  // namespace wiresim::models
