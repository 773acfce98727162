// AlgorithmDescriptor: everything wiresim knows about one collective algorithm, in one place,
// and the table of them that the tuner, expand(), estimate(), why_not(), the plan-size limits,
// the latency rows of the parameters and `coll --explain` all read.
//
// Each descriptor lives in its algorithm's own file (ring.cpp, tree.cpp, nvls.cpp, ...),
// next to its expansion into chunk transfers, so that the closed form sits beside the schedule
// it must match. One list (models/algorithm_list.h), in the order the tuner tries them (ties
// keep the earlier, simpler candidate), gives both the enum Algorithm and the table
// (algorithms.cpp); names, parsing and all_algorithms() come from the descriptors. Adding an
// algorithm: its file, defining its descriptor, and its line in that list. It needs no row in
// params.yaml: `latency_row` names the NCCL latency row it uses where the file has none of its own.
//
//   const AlgorithmDescriptor& d = descriptor(Algorithm::nvls);
//   if (!d.collectives.contains(Collective::all_to_all)) fmt::print("{}\n", d.name);
//   for (const AlgorithmDescriptor* a : algorithms()) fmt::print("{}\n", a->name);
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective.h"
#include "sim/units.h"

namespace wiresim::models {

class Machine;
class PlanBuilder;
struct Problem;
struct Choice;
struct Plan;
struct Estimate;

// A set of enum values (collectives, protocols), usable in constant initialisation.
template <typename E>
class EnumSet {
 public:
  constexpr EnumSet(std::initializer_list<E> values) {
    for (E v : values) bits_ |= 1u << static_cast<unsigned>(v);
  }
  constexpr bool contains(E v) const { return (bits_ >> static_cast<unsigned>(v)) & 1u; }

 private:
  unsigned bits_ = 0;
};
using CollectiveSet = EnumSet<Collective>;
using ProtocolSet = EnumSet<Protocol>;

// Ranks grouped by node, in rank order (ranks_by_node in plan.h).
using NodeGroups = std::vector<std::vector<int>>;

struct AlgorithmDescriptor {
  Algorithm id;
  std::string_view name;             // as on the command line and in params.yaml
  // Whose row of params.yaml's latency table it uses where the file has no row of its own:
  // itself for the algorithms NCCL has tables for (the file must have their rows), else one of
  // theirs (Params::latency holds every algorithm's row, resolved).
  Algorithm latency_row;
  CollectiveSet collectives;         // the collectives it implements
  std::string_view unimplemented;    // the refusal for any other; "{}" stands for the collective
  ProtocolSet protocols;             // the protocols it runs with (the tuner tries all, and explains)
  CollectiveSet nccl;                // in NCCL's default candidate set (--tuner nccl) for these
  CollectiveSet all;                 // in the `all` candidate set (--tuner all) for these
  CollectiveSet aggregates;          // expand() honours Choice::aggregation for these
  bool nvlink_step_at_launch;        // NCCL's NVLink step charged once at launch, not per hop (NVLS)
  // Why it cannot run this problem beyond collective and protocol; nullptr: it always can.
  std::optional<std::string> (*why_not)(const Machine&, const Problem&, const NodeGroups& by_node);
  // Where NCCL fixes the protocol by a rule instead of tuning it: why not `protocol` for this
  // problem; nullptr: every protocol of `protocols` is a candidate.
  std::optional<std::string> (*why_not_protocol)(const Machine&, const Problem&, Protocol protocol) = nullptr;
  // Its chunk transfers (plan.h). The problem passed why_not.
  void (*expand)(PlanBuilder&, Plan&);
  // Its α–β time (alpha_beta.h) on a scratch builder whose launch costs `base`.
  Estimate (*closed_form)(PlanBuilder&, sim::Seconds base);
  // The sends its expansion makes, without building it (limits.h).
  double (*plan_size)(const Machine&, const Problem&, const Choice&);
  // Where the library runs it ahead of its tuner (RCCL's MSCCL algorithms, loaded for a
  // topology and a range of sizes): the protocol it then runs with; nullopt where it does not.
  // The tuner (--tuner nccl, nothing forced) then takes it alone. nullptr: never.
  std::optional<Protocol> (*preempts)(const Machine&, const Problem&) = nullptr;
};

// Every algorithm, in the tuner's order (models/algorithm_list.h).
std::span<const AlgorithmDescriptor* const> algorithms();
const AlgorithmDescriptor& descriptor(Algorithm a);

}  // namespace wiresim::models
