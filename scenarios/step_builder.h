// StepBuilder: the builder of one inference step's DAG (scenarios/step.cpp's run_step), shared by
// the step's parts (scenarios/host_copies.cpp: offload copies and model loads). Internal to
// the scenarios library.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/limits.h"
#include "scenarios/comm_cost.h"
#include "scenarios/step.h"
#include "sim/transfer_dag.h"

namespace wiresim::scenarios {

using sim::NodeId;
constexpr NodeId kNone = models::kNoNode;

struct Instance {
  std::string kind;
  int replica;
  NodeId launch;
  NodeId done;
};

// Builds a step's DAG: compute kernels on GPUs, and communication as the CommCost strategy
// it is given makes it (scenarios/comm_cost.h), spliced in where the step needs it.
class StepBuilder {
 public:
  StepBuilder(const models::Machine& machine, const CommCost& cost, const Scenario& s)
      : machine_(machine), cost_(cost), scenario_(s) {}

  // The DAG's nodes, counting what CountingComm's fragments stand for.
  double estimated_nodes() const { return stands_for_ + static_cast<double>(dag_.size()); }

  // A zero-time marker on `track` after `after` (a join, a handover).
  NodeId mark(const std::vector<NodeId>& after, std::uint32_t track) {
    const NodeId n = dag_.add_delay(sim::Seconds{0.0}, dag_.intern_label("compute"), track);
    for (auto a : after)
      if (a != kNone) dag_.add_dependency(a, n);
    return n;
  }

  // `t` of compute on every GPU of `gpus`, after `after`; returns the node that ends when all
  // have. Each GPU runs one kernel at a time: micro-batch k's kernel waits while another runs,
  // and among waiting kernels the lowest micro-batch goes first.
  NodeId compute(sim::Seconds t, const std::vector<int>& gpus, NodeId after, int micro_batch) {
    if (t.count() <= 0.0) return mark({after}, static_cast<std::uint32_t>(gpus.front()));
    const auto label = dag_.intern_label("compute");
    std::vector<NodeId> kernels;
    for (int g : gpus) {
      const NodeId n = dag_.add_delay(t, label, static_cast<std::uint32_t>(g));
      dag_.set_processor(n, static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(micro_batch));
      if (after != kNone) dag_.add_dependency(after, n);
      kernels.push_back(n);
    }
    if (kernels.size() == 1) return kernels.front();
    const NodeId join = mark({}, static_cast<std::uint32_t>(gpus.front()));
    for (NodeId n : kernels) dag_.add_dependency(n, join);
    return join;
  }

  // Appends a collective over `gpus` (indices into graph.gpus()) that starts after `after`.
  // A communicator (one kind of collective over one set of GPUs) runs one collective at a
  // time, as NCCL does on its stream: the launch waits for the communicator, which stays
  // taken until the collective's last arrival; among waiting ones, the earliest micro-batch.
  NodeId collective(const std::string& kind, int replica, int micro_batch, models::Collective op, sim::Bytes size,
                    const std::vector<int>& gpus, const std::vector<NodeId>& after,
                    const std::vector<double>& matrix = {}) {
    models::Problem problem;
    problem.op = op;
    problem.size = size;
    for (int g : gpus) problem.ranks.push_back(machine_.graph().gpus()[g]);
    problem.matrix = matrix;
    const Cached& part = part_for(kind, problem);
    if (part.part.dag.size() == 0) return nothing(part.part, after, gpus.front());
    const NodeId offset = splice(part.part, gpus, after);
    const NodeId done = dag_.add_delay(sim::Seconds{0.0}, dag_.intern_label(kind + " done"),
                                       static_cast<std::uint32_t>(gpus.front()));
    for (NodeId s : part.sinks) dag_.add_dependency(offset + s, done);
    const auto comm = communicators_.emplace(std::make_pair(kind, gpus), communicators_.size()).first->second;
    dag_.set_processor(offset, kCommunicatorBase + static_cast<std::uint32_t>(comm),
                       static_cast<std::uint32_t>(micro_batch), done);
    instances_.push_back({kind, replica, offset, done});
    count(kind, size, part.part.algorithm);
    return done;
  }

  // One point-to-point send (a pipeline-stage handover, a KV cache shipment).
  NodeId send(int from, int to, sim::Bytes bytes, NodeId after, const std::string& kind = "pp_send_recv") {
    const auto& gpus = machine_.graph().gpus();
    const CommPart part = cost_.send(machine_, gpus[from], gpus[to], bytes, kind);
    if (part.dag.size() == 0) return nothing(part, {after}, from);
    count(kind, bytes, part.algorithm);
    sends_[kind].emplace(from, to);
    return end_of(part, splice(part, {from, to}, {after}), from);
  }

  // A copy engine transfer from device `from` (host memory, a drive) to device `to`, on the
  // track of GPU `gpu` (an index into graph.gpus()), after `after`.
  // `how` names it in the output ("GDS read"); empty: the strategy's name ("host copy").
  NodeId copy(topo::DeviceId from, topo::DeviceId to, int gpu, sim::Bytes bytes, const std::string& kind,
              const std::string& label, const std::vector<NodeId>& after = {}, const std::string& how = {}) {
    const CommPart part = cost_.copy(machine_, from, to, bytes, label);
    if (part.dag.size() == 0) return nothing(part, after, gpu);
    count(kind, bytes, how.empty() ? part.algorithm : how);
    return end_of(part, splice(part, {gpu}, after), gpu);
  }

  // A handover of several sends counts once, from its first send to its last arrival.
  void record(const std::string& kind, int replica, NodeId first, NodeId done) {
    instances_.push_back({kind, replica, first, done});
  }
  sim::TransferDag& dag() { return dag_; }
  const topo::LinkGraph& graph() const { return machine_.graph(); }
  const models::Machine& machine() const { return machine_; }
  const std::vector<Instance>& instances() const { return instances_; }
  // The distinct (from, to) GPU pairs of each kind of point-to-point send.
  const std::map<std::string, std::set<std::pair<int, int>>>& sends() const { return sends_; }
  // Each communicator's kind and GPUs, in the order they were first used.
  std::vector<std::pair<std::string, std::vector<int>>> communicators() const {
    std::vector<std::pair<std::pair<std::string, std::vector<int>>, std::size_t>> byuse(communicators_.begin(),
                                                                                        communicators_.end());
    std::sort(byuse.begin(), byuse.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<std::pair<std::string, std::vector<int>>> out;
    for (auto& [key, index] : byuse) out.push_back(key);
    return out;
  }
  std::map<std::string, CollectiveStats>& by_collective() { return by_collective_; }
  // Every distinct note the fragments carried (naive: how each wire was quoted), in order.
  std::string note() const { return fmt::format("{}", fmt::join(notes_, "; ")); }

 private:
  struct Cached {
    CommPart part;
    std::vector<NodeId> sinks;   // the part's nodes with no successors
  };

  models::TunerOptions options_for(const std::string& kind) const {
    models::TunerOptions options;
    options.rank = models::parse_ranking(scenario_.pick).value_or(models::Ranking{});
    if (kind == "tp_all_reduce") {
      options.algorithm = scenario_.tp_algorithm;
      options.protocol = scenario_.tp_protocol;
    }
    return options;
  }

  // Collectives of one kind with the same operation, size, ranks and matrix share a fragment.
  using PlanKey = std::tuple<std::string, int, double, std::vector<topo::DeviceId>, std::vector<double>>;

  const Cached& part_for(const std::string& kind, const models::Problem& problem) {
    PlanKey key{kind, static_cast<int>(problem.op), problem.size.count(), problem.ranks, problem.matrix};
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Cached c{cost_.collective(machine_, problem, options_for(kind), kind), {}};
    for (NodeId i = 0; i < c.part.dag.size(); ++i)
      if (c.part.dag.successors(i).empty()) c.sinks.push_back(i);
    return cache_.emplace(std::move(key), std::move(c)).first->second;
  }

  // The fragment appended on the GPUs `gpus` (its tracks), its launch after `after`.
  NodeId splice(const CommPart& part, const std::vector<int>& gpus, const std::vector<NodeId>& after) {
    std::vector<std::uint32_t> tracks(gpus.begin(), gpus.end());
    const NodeId offset = dag_.append(part.dag, tracks);
    for (NodeId a : after)
      if (a != kNone) dag_.add_dependency(a, offset);
    stands_for_ += part.stands_for;
    if (!part.note.empty() && std::find(notes_.begin(), notes_.end(), part.note) == notes_.end())
      notes_.push_back(part.note);
    return offset;
  }

  // An empty fragment (no communication: FreeComm, CountingComm) is a join of `after`: no
  // communicator, no instance, only what it stands for counted.
  NodeId nothing(const CommPart& part, const std::vector<NodeId>& after, int track) {
    stands_for_ += part.stands_for;
    return mark(after, static_cast<std::uint32_t>(track));
  }

  // The node that ends a spliced fragment: its only node, or a join of its sinks.
  NodeId end_of(const CommPart& part, NodeId offset, int track) {
    if (part.dag.size() == 1) return offset;
    const NodeId join = mark({}, static_cast<std::uint32_t>(track));
    for (NodeId i = 0; i < part.dag.size(); ++i)
      if (part.dag.successors(i).empty()) dag_.add_dependency(offset + i, join);
    return join;
  }

  void count(const std::string& kind, sim::Bytes bytes, const std::string& algorithm) {
    auto& stats = by_collective_[kind];
    ++stats.count;
    stats.bytes += bytes;
    stats.algorithm = algorithm;
  }

  const models::Machine& machine_;
  const CommCost& cost_;
  const Scenario& scenario_;
  double stands_for_ = 0.0;
  sim::TransferDag dag_;
  std::map<PlanKey, Cached> cache_;
  std::map<std::pair<std::string, std::vector<int>>, std::size_t> communicators_;
  std::vector<Instance> instances_;
  std::map<std::string, CollectiveStats> by_collective_;
  std::vector<std::string> notes_;
  std::map<std::string, std::set<std::pair<int, int>>> sends_;
};

}  // namespace wiresim::scenarios
