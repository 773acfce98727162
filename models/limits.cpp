#include "models/limits.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "models/plan.h"
#include "sim/input_error.h"

namespace wiresim::models {
namespace {

// Pipeline units of `bytes` in pieces of `chunk`: at least one, as the algorithms count.
double units(sim::Bytes bytes, sim::Bytes chunk) {
  if (bytes.count() <= 0.0 || chunk.count() <= 0.0) return 1.0;
  return std::max(1.0, std::ceil(bytes / chunk - 1e-9));
}

// Sends of one ring pass over n ranks with `loops` chunks and `steps` steps per chunk,
// after aggregation (build_ring_pass: chunks merge first, then steps).
double ring_sends(double n, double loops, double steps, int aggregation) {
  const double k = std::max(1, aggregation);
  const double per_loop = std::min(k, loops);
  const double per_step = std::min(std::max(1.0, std::floor(k / per_loop)), steps);
  return n * std::ceil(loops / per_loop) * std::ceil(steps / per_step);
}

double ring_plan_sends(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  if (problem.op == Collective::broadcast || problem.op == Collective::reduce) {
    const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, choice.channels);
    return (n - 1) * units(problem.size, chunk);
  }
  const int rings = ring_instances(machine, problem, choice.channels);
  const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, std::max(1, choice.channels / rings));
  const double loops = units(problem.size / (n * rings), chunk);
  const double steps = problem.op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
  return rings * ring_sends(n, loops, steps, choice.aggregation);
}

}  // namespace

PlanEstimate estimate_plan(const Machine& machine, const Problem& problem, const Choice& choice) {
  const double n = static_cast<double>(problem.ranks.size());
  const ProtocolParams& proto = machine.params().protocol(choice.protocol);
  double sends = 0.0;
  switch (choice.algorithm) {
    case Algorithm::ring: sends = ring_plan_sends(machine, problem, choice); break;
    case Algorithm::hierarchical: {
      // A ring reduce-scatter and all-gather inside each of N nodes of g GPUs, a ring
      // all_reduce across nodes per local index (expand_hierarchical).
      const double nodes = static_cast<double>(ranks_by_node(machine, problem).size());
      const double g = std::max(1.0, n / nodes);
      const sim::Bytes block = problem.size / g;
      const auto pass = [&](Collective op, double ranks, sim::Bytes bytes, int channels) {
        const double steps = op == Collective::all_reduce ? 2 * (ranks - 1) : ranks - 1;
        const double loops = units(bytes, ring_chunk(machine, choice, op, channels));
        return ring_sends(ranks, loops, std::max(1.0, steps), choice.aggregation);
      };
      sends = nodes * (pass(Collective::reduce_scatter, g, block, choice.channels) +
                       pass(Collective::all_gather, g, block, choice.channels)) +
              g * pass(Collective::all_reduce, nodes, block / nodes,
                       std::max(1, choice.channels / static_cast<int>(g)));
      break;
    }
    case Algorithm::tree: {
      // A pair of trees per rail across nodes (one tree inside a node), each rank sending up
      // then down per chunk.
      const auto by_node = ranks_by_node(machine, problem);
      const double trees = by_node.size() > 1 ? 2.0 * tree_chains(by_node, choice.channels).size() : 1.0;
      const sim::Bytes chunk = proto.step * (proto.payload * std::max(1.0, choice.channels / trees));
      sends = trees * 2 * n * units(problem.size / trees, chunk);
      break;
    }
    case Algorithm::nvls:
    case Algorithm::nvls_tree: {
      const double channels = std::max(1, machine.arch().nvls_channels);
      const int nodes = static_cast<int>(ranks_by_node(machine, problem).size());
      const int heads = static_cast<int>(problem.ranks.size()) / std::max(1, nodes);
      const double loops = units(problem.size, nvls_chunk(machine, choice.algorithm, problem.size, nodes, heads) *
                                                   (channels * std::max(1, heads)));
      // Per rank and loop: the reduce-scatter and the all-gather; NVLSTree adds a send up
      // and a send down in each of its two trees. Each NVLS send may be followed by a
      // step-overhead delay (counted here as half a send).
      sends = (choice.algorithm == Algorithm::nvls_tree ? 7 : 3) * n * loops;
      break;
    }
    case Algorithm::one_shot: sends = n * (n - 1); break;
    case Algorithm::two_shot: sends = 2 * n * (n - 1); break;
    case Algorithm::pairwise:
    case Algorithm::direct:
      if (problem.op == Collective::send_recv) {
        // P2P chunks over the operation's channels (expand_send_recv).
        const double channels = p2p_channels(machine, problem, problem.size);
        sends = n * channels *
                chunk_count(problem.size / channels, p2p_chunk(machine, problem, choice.protocol, problem.size));
      } else {
        sends = n * (n - 1);
      }
      break;
  }
  PlanEstimate e;
  // Every send is a transfer and its arrival; each rank adds a bookkeeping delay.
  e.nodes = 2 * sends + n + 1;
  e.events = 2 * e.nodes;
  e.memory = sim::Bytes{e.nodes * kBytesPerNode};
  return e;
}

void check_plan_limits(const Machine& machine, const Problem& problem, const Choice& choice) {
  const PlanEstimate e = estimate_plan(machine, problem, choice);
  const Limits& limits = problem.limits;
  const std::string what = fmt::format("{} of {} over {} GPUs ({} {}) expands to about {:.3g} transfers and delays",
                                       to_string(problem.op), sim::format_size(problem.size), problem.ranks.size(),
                                       to_string(choice.algorithm), to_string(choice.protocol), e.nodes);
  if (e.memory > limits.max_memory)
    throw sim::InputError(fmt::format("{}, needing about {} of memory; the limit is {} (--max-memory); "
                                      "use fewer GPUs, smaller sizes or --aggregate", what,
                                      sim::format_size(e.memory), sim::format_size(limits.max_memory)));
  if (e.events > limits.max_events)
    throw sim::InputError(fmt::format("{}, about {:.3g} events; the limit is {:.3g} (--max-events); "
                                      "use fewer GPUs, smaller sizes or --aggregate", what, e.events,
                                      limits.max_events));
}

sim::Bytes parse_max_memory(const std::string& text) {
  try {
    const sim::Bytes b = sim::parse_size(text);
    if (b.count() < 1.0) throw std::invalid_argument("expected at least 1B");
    return b;
  } catch (const std::invalid_argument& e) {
    throw sim::InputError(fmt::format("--max-memory: {}", e.what()));
  }
}

double parse_max_events(const std::string& text) {
  double v = 0.0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 1.0) || !std::isfinite(v))
    throw sim::InputError(fmt::format("--max-events: expected a count such as 2e9, got '{}'", text));
  return v;
}

}  // namespace wiresim::models
