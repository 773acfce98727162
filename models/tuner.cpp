#include "models/tuner.h"

#include <fmt/format.h>

#include "models/algorithm.h"
#include "models/alpha_beta.h"
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

Decision tune(const Machine& machine, const Problem& problem, const TunerOptions& options) {
  Decision d;
  const std::vector<Algorithm> algos = options.algorithm ? std::vector<Algorithm>{*options.algorithm}
                                                         : candidate_algorithms(problem.op, options.all_algorithms);
  const std::vector<Protocol> protos = options.protocol ? std::vector<Protocol>{*options.protocol} : all_protocols();
  const int channels = options.channels.value_or(machine.arch().channels);
  std::optional<sim::Seconds> best_time;
  std::string first_refusal;
  for (Algorithm a : algos)
    for (Protocol p : protos) {
      Candidate c{Choice{a, p, channels_for_size(problem, a, p, channels)}, std::nullopt, ""};
      if (auto reason = why_not(machine, problem, a, p)) {
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
  return d;
}

}  // namespace wiresim::models
