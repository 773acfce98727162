#include "scenarios/step.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "models/limits.h"
#include "scenarios/comm_cost.h"
#include "scenarios/sweep.h"
#include "input/input_error.h"

namespace wiresim::scenarios {
namespace {

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

// Per-layer compute per rank: given, or a roofline (FLOPs at peak vs bytes at HBM speed).
struct LayerCompute {
  sim::Seconds attention;
  sim::Seconds mlp;
  sim::Seconds experts;
};

// `tokens` is one micro-batch's; a given layer_time is for the whole batch and scales with
// the micro-batch's share of it (`share`).
LayerCompute layer_compute(const Scenario& s, double tokens, double share) {
  LayerCompute c;
  if (s.compute.layer_time) {
    c.attention = c.mlp = c.experts = *s.compute.layer_time * (share / 2.0);
    return c;
  }
  if (s.compute.peak_flops <= 0.0) return c;
  const ModelShape& m = s.model;
  const Layout& l = s.layout;
  const double b = m.dtype_bytes;
  const auto roof = [&](double flops, double bytes) {
    return sim::Seconds{std::max(flops / s.compute.peak_flops, bytes / s.compute.memory_bandwidth.count())};
  };
  // Attention (scenarios/scenario.h); decode also reads this GPU's KV cache of the layer
  // (scenarios/memory.h).
  const double attn_params = attention_params(m);
  double kv_bytes = 0.0;
  if (s.workload.phase == Phase::decode)
    kv_bytes = static_cast<double>(s.workload.batch) * std::max(1L, s.workload.context) * kv_bytes_per_token_per_gpu(m, l);
  c.attention = roof(2.0 * tokens * attn_params / l.tp, attn_params * b / l.tp + kv_bytes);
  const double dense = mlp_params(m);
  c.mlp = roof(2.0 * tokens * dense / l.tp, dense * b / l.tp);
  if (m.experts > 0) {
    const double expert = expert_params(m);
    const double local_experts = experts_per_rank(m, l.ep);
    // Each rank computes its share of the replica's tokens times top_k expert passes; shared
    // experts run on every token, split over TP as a dense MLP is.
    c.experts = roof(2.0 * (tokens / l.tp) * m.top_k * expert,
                     std::min(local_experts, (tokens / l.tp) * m.top_k * l.ep) * expert * b);
    if (m.shared_experts > 0) {
      const double shared = m.shared_experts * expert;
      c.experts += roof(2.0 * tokens * shared / l.tp, shared * b / l.tp);
    }
  }
  return c;
}

// Bytes rank i sends rank j in a dispatch, from the experts each rank hosts.
std::vector<double> dispatch_matrix(const ModelShape& m, int ep, double per_rank_bytes) {
  // Experts are dealt out in blocks of ceil(experts / ep); with uniform routing each rank's
  // share is its experts' share of all.
  std::vector<double> share(ep, 0.0);
  const int block = experts_per_rank(m, ep);
  for (int e = 0; e < m.experts; ++e)
    share[std::min(e / block, ep - 1)] += m.expert_load.empty() ? 1.0 / m.experts : m.expert_load[e];
  std::vector<double> matrix(static_cast<std::size_t>(ep) * ep);
  for (int i = 0; i < ep; ++i)
    for (int j = 0; j < ep; ++j) matrix[static_cast<std::size_t>(i) * ep + j] = i == j ? 0.0 : per_rank_bytes * share[j];
  return matrix;
}

// The cpu device (NUMA node) on `gpu`'s node that holds its host buffers (a load's, a
// decode's offload): `numa` local, remote (the next socket of the node after the GPU's own)
// or the node `numa_node`. A NUMA node the topology joins to the GPU by no route (no socket
// link) is an error at the host_numa value (`at`, named `key`).
topo::DeviceId host_for(const models::Machine& machine, topo::DeviceId gpu, HostNuma numa, int numa_node,
                        const input::Position& at, const std::string& key) {
  const topo::LinkGraph& graph = machine.graph();
  const auto& g = graph.device(gpu);
  std::vector<topo::DeviceId> cpus;
  std::size_t own = 0;
  for (topo::DeviceId d = 0; d < graph.device_count(); ++d) {
    const auto& dev = graph.device(d);
    if (dev.kind != topo::DeviceKind::cpu || dev.node != g.node) continue;
    if (dev.socket == g.socket) own = cpus.size();
    cpus.push_back(d);
  }
  if (cpus.empty()) throw input::InputError(fmt::format("{}: {} has no host CPU in {}", key, g.name, graph.source));
  topo::DeviceId host = cpus[own];
  if (numa == HostNuma::remote) {
    if (cpus.size() < 2)
      input::fail(at, fmt::format("{}: remote needs a second socket beside {}'s, but its node in {} has one cpu; "
                                  "expected local or 0",
                                  key, g.name, graph.source));
    host = cpus[(own + 1) % cpus.size()];
  } else if (numa == HostNuma::node) {
    const auto it = std::find_if(cpus.begin(), cpus.end(), [&](auto d) { return graph.device(d).socket == numa_node; });
    if (it == cpus.end())
      input::fail(at, fmt::format("{}: no NUMA node {} on {}'s node in {}; expected local, remote or 0..{}", key,
                                  numa_node, g.name, graph.source, cpus.size() - 1));
    host = *it;
  }
  if (host != cpus[own]) {
    try {
      machine.route(host, gpu);
    } catch (const input::InputError&) {
      input::fail(at, fmt::format("{}: {} (NUMA node {}) reaches {} by no route in {} (no socket link joins them); "
                                  "expected local",
                                  key, graph.device(host).name, graph.device(host).socket, g.name, graph.source));
    }
  }
  return host;
}

topo::DeviceId host_for(const Scenario& s, const models::Machine& machine, topo::DeviceId gpu) {
  const Workload& w = s.workload;
  return host_for(machine, gpu, w.host_numa, w.numa_node, w.host_numa_at, "workload.host_numa");
}

// A decode's offload copies (scenarios/scenario.h Offload), GPU by GPU: each GPU's host
// buffers on its workload.offload.host_numa node, one copy engine per direction taking the
// layers in order. Per layer and GPU, host -> GPU: the offloaded share of the layer's KV cache
// (batch x context tokens) and of its weights; GPU -> host: the offloaded share of the new
// token's K and V for every sequence.
class OffloadCopies {
 public:
  OffloadCopies(StepBuilder& b, const Scenario& s) : b_(b), offload_(s.workload.offload) {
    const double layers_here = static_cast<double>(s.model.layers) / s.layout.pp;
    const double kv_token = kv_bytes_per_token_per_gpu(s.model, s.layout);
    const double batch = static_cast<double>(s.workload.batch);
    in_ = sim::Bytes{offload_.kv * batch * static_cast<double>(std::max(1L, s.workload.context)) * kv_token} +
          weight_bytes_per_gpu(s.model, s.layout) * (offload_.weights / layers_here);
    out_ = sim::Bytes{offload_.kv * batch * kv_token};
  }

  // GPU `g`'s copy in of its next layer, once the buffer of the layer two back is `freed`.
  NodeId copy_in(int g, int replica, NodeId freed) {
    NodeId& last = last_in_.try_emplace(g, kNone).first->second;
    last = b_.copy(host(g), gpu(g), g, in_, "offload_h2d", "offload host->gpu", {last, freed});
    b_.record("offload_h2d", replica, last, last);
    return last;
  }
  // GPU `g`'s write back of the layer's new KV, after its attention (`after`).
  void write_back(int g, int replica, NodeId after) {
    if (out_.count() <= 0.0) return;
    NodeId& last = last_out_.try_emplace(g, kNone).first->second;
    last = b_.copy(gpu(g), host(g), g, out_, "offload_d2h", "offload gpu->host", {last, after});
    b_.record("offload_d2h", replica, last, last);
  }

 private:
  topo::DeviceId gpu(int g) const { return b_.graph().gpus()[g]; }
  topo::DeviceId host(int g) {
    const auto it = host_.find(g);
    if (it != host_.end()) return it->second;
    const topo::DeviceId h = host_for(b_.machine(), gpu(g), offload_.host_numa, offload_.numa_node,
                                      offload_.host_numa_at, "workload.offload.host_numa");
    return host_.emplace(g, h).first->second;
  }

  StepBuilder& b_;
  const Offload& offload_;
  sim::Bytes in_, out_;
  std::map<int, topo::DeviceId> host_;
  std::map<int, NodeId> last_in_, last_out_;
};

// A bounced storage read runs as a pipeline of this many chunks per drive: chunk k's copy to
// the GPU overlaps chunk k+1's read into the host buffer (a loader's double buffering).
constexpr int kBounceChunks = 8;

// Model load: every GPU copies its share of the weights, all at once; the step ends with the
// last copy. From host memory: one copy from the NUMA node workload.host_numa names. From
// storage: the share is striped over every NVMe drive of the GPU's node (RAID 0, as a DGX's
// data drives are), each stripe read straight into the GPU (GPUDirect Storage) or read into
// the host buffer and copied on, chunk by chunk (without GDS).
void build_load(StepBuilder& b, const Scenario& s, const topo::LinkGraph& graph, const std::vector<int>& gpu_of_rank) {
  const int n = s.layout.gpus();
  const sim::Bytes total = s.workload.bytes.count() > 0.0 ? s.workload.bytes
                                                           : weight_bytes_per_gpu(s.model, s.layout) * n;
  const sim::Bytes share = total / static_cast<double>(n);
  const NodeId loaded = b.mark({}, static_cast<std::uint32_t>(gpu_of_rank.front()));
  NodeId first = kNone, first_read = kNone, read = kNone;
  const bool storage = s.workload.source == LoadSource::storage;
  for (int r = 0; r < n; ++r) {
    const int index = gpu_of_rank[r];
    const auto gpu = graph.gpus()[index];
    if (!storage) {
      const NodeId copied = b.copy(host_for(s, b.machine(), gpu), gpu, index, share, "weight_load", "weights host->gpu");
      if (first == kNone) first = copied;
      b.dag().add_dependency(copied, loaded);
      continue;
    }
    std::vector<topo::DeviceId> drives;
    for (topo::DeviceId d = 0; d < graph.device_count(); ++d)
      if (graph.device(d).kind == topo::DeviceKind::nvme && graph.device(d).node == graph.device(gpu).node)
        drives.push_back(d);
    if (drives.empty())
      input::fail(s.workload.source_at, fmt::format("workload.source: storage needs NVMe drives (kind: nvme) on "
                                                    "{}'s node, but {} has none; expected source: host",
                                                    graph.device(gpu).name, graph.source));
    const sim::Bytes stripe = share / static_cast<double>(drives.size());
    if (s.workload.gds) {
      for (auto drive : drives) {
        const NodeId copied = b.copy(drive, gpu, index, stripe, "weight_load", "weights nvme->gpu (GDS)", {}, "GDS read");
        if (first == kNone) first = copied;
        b.dag().add_dependency(copied, loaded);
      }
      continue;
    }
    const topo::DeviceId host = host_for(s, b.machine(), gpu);
    const sim::Bytes chunk = stripe / static_cast<double>(kBounceChunks);
    for (auto drive : drives) {
      NodeId last_read = kNone, last_copy = kNone;
      for (int k = 0; k < kBounceChunks; ++k) {
        last_read = b.copy(drive, host, index, chunk, "storage_read", "weights nvme->host", {last_read}, "nvme read");
        if (first_read == kNone) {
          first_read = last_read;
          read = b.mark({}, static_cast<std::uint32_t>(index));
        }
        b.dag().add_dependency(last_read, read);
        last_copy = b.copy(host, gpu, index, chunk, "weight_load", "weights host->gpu", {last_read, last_copy});
        if (first == kNone) first = last_copy;
      }
      b.dag().add_dependency(last_copy, loaded);
    }
  }
  if (first_read != kNone) b.record("storage_read", 0, first_read, read);
  b.record("weight_load", 0, first_read != kNone ? first_read : first, loaded);
}

}  // namespace

StepBound step_bound(const StepResult& r) {
  StepBound b;
  b.communication = r.exposed_comm.count() > 0.25 * r.step.count();
  for (const auto& [kind, c] : r.by_collective)
    if (!b.slowest || c.time > b.slowest->time) b.collective = kind, b.slowest = &c;
  for (const auto& [tier, t] : r.by_tier)
    if (t.bytes.count() > 0.0 && (!b.busiest || t.busy > b.busiest->busy)) b.tier = tier, b.busiest = &t;
  return b;
}

std::vector<int> place_ranks(const Layout& layout, const topo::LinkGraph& graph) {
  const int n = layout.gpus();
  const int total = static_cast<int>(graph.gpus().size());
  std::vector<int> out(n);
  if (layout.placement == Placement::explicit_map) return layout.rank_map;
  if (layout.placement == Placement::pack) {
    for (int r = 0; r < n; ++r) out[r] = r;
    return out;
  }
  // spread: consecutive ranks (a TP group) go to different nodes, round-robin.
  std::map<int, std::vector<int>> by_node;
  for (int g = 0; g < total; ++g) by_node[graph.device(graph.gpus()[g]).node].push_back(g);
  std::vector<std::vector<int>> nodes;
  for (auto& [node, gpus] : by_node) nodes.push_back(gpus);
  std::vector<std::size_t> used(nodes.size(), 0);
  for (int r = 0; r < n; ++r) {
    std::size_t k = r % nodes.size();
    for (std::size_t tries = 0; used[k] >= nodes[k].size() && tries < nodes.size(); ++tries) k = (k + 1) % nodes.size();
    if (used[k] >= nodes[k].size()) throw input::InputError("layout: spread placement ran out of GPUs");
    out[r] = nodes[k][used[k]++];
  }
  return out;
}

namespace {

// Total length of a set of [start, end] intervals, overlaps counted once.
double union_length(std::vector<std::pair<double, double>>& spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0.0, from = 0.0, to = -1.0;
  for (const auto& [a, e] : spans) {
    if (a > to) {
      if (to > from) total += to - from;
      from = a;
      to = e;
    } else {
      to = std::max(to, e);
    }
  }
  if (to > from) total += to - from;
  return total;
}

// Tokens of micro-batch k of m: as even a split as whole tokens allow.
double micro_batch_tokens(long tokens, int m, int k) { return static_cast<double>(tokens / m + (k < tokens % m ? 1 : 0)); }

// Appends the whole step to `b`: per micro-batch, per stage, per layer, the compute and the
// collectives of every replica. A micro-batch's chain is the data dependency; GPUs share
// themselves between micro-batches through the processors of StepBuilder::compute.
void build_step(StepBuilder& b, const Scenario& s, const std::vector<int>& gpu_of_rank) {
  const Layout& l = s.layout;
  const ModelShape& m = s.model;
  const auto gpu = [&](int d, int p, int t) { return gpu_of_rank[(d * l.pp + p) * l.tp + t]; };
  const long all_tokens = s.workload.phase == Phase::prefill ? s.workload.tokens : s.workload.batch;
  const int micro_batches = s.workload.micro_batches;
  const int layers_per_stage = m.layers / l.pp;
  const int kv_target = s.workload.decode_offset > 0 ? s.workload.decode_offset : -1;
  std::vector<NodeId> kv_sent;
  std::optional<OffloadCopies> offload;
  if (s.workload.offload.any()) offload.emplace(b, s);
  // Offload: where each replica finished each layer (the copy of layer l + 2 waits for it).
  std::vector<std::vector<NodeId>> layer_end(l.dp, std::vector<NodeId>(m.layers, kNone));
  for (int k = 0; k < micro_batches; ++k) {
    const double tokens = micro_batch_tokens(all_tokens, micro_batches, k);
    const sim::Bytes activations{tokens * m.hidden * m.dtype_bytes};
    const LayerCompute lc = layer_compute(s, tokens, tokens / static_cast<double>(all_tokens));
    // KV cache of one layer on one TP rank, as memory counts it (scenarios/memory.h).
    const sim::Bytes kv_layer{tokens * kv_bytes_per_token_per_gpu(m, l)};
    std::vector<NodeId> ready(l.dp, kNone);
    for (int p = 0; p < l.pp; ++p) {
      for (int layer = p * layers_per_stage; layer < (p + 1) * layers_per_stage; ++layer) {
        const bool moe = is_moe_layer(m, layer);
        std::vector<int> tp_group(l.tp);
        for (int d = 0; d < l.dp; ++d) {
          for (int t = 0; t < l.tp; ++t) tp_group[t] = gpu(d, p, t);
          if (offload) {
            const NodeId freed = layer - 2 >= p * layers_per_stage ? layer_end[d][layer - 2] : kNone;
            std::vector<NodeId> after{ready[d]};
            for (int g : tp_group) after.push_back(offload->copy_in(g, d, freed));
            ready[d] = b.mark(after, static_cast<std::uint32_t>(tp_group.front()));
          }
          ready[d] = b.compute(lc.attention, tp_group, ready[d], k);
          if (offload)
            for (int g : tp_group) offload->write_back(g, d, ready[d]);
          // Disaggregation, layer by layer: this layer's K and V leave once attention made them.
          if (kv_target >= 0 && s.workload.kv_layer_by_layer)
            for (int t = 0; t < l.tp; ++t)
              kv_sent.push_back(b.send(tp_group[t], tp_group[t] + kv_target, kv_layer, ready[d], "kv_transfer"));
          if (l.tp > 1)
            ready[d] = b.collective("tp_all_reduce", d, k, models::Collective::all_reduce, activations, tp_group, {ready[d]});
        }
        if (moe && l.ep > 1) {
          // EP groups: the stage's ranks in (replica, tp) order, ep at a time.
          const double per_rank = tokens / l.tp * m.top_k * m.hidden * m.dtype_bytes;
          const auto matrix = dispatch_matrix(m, l.ep, per_rank);
          for (int q0 = 0; q0 < l.tp * l.dp; q0 += l.ep) {
            std::vector<int> group;
            std::vector<NodeId> after;
            for (int q = q0; q < q0 + l.ep; ++q) {
              group.push_back(gpu(q / l.tp, p, q % l.tp));
              if (q % l.tp == 0 || q == q0) after.push_back(ready[q / l.tp]);
            }
            // Uniform routing over experts dealt out evenly: the plain all_to_all.
            const bool even = m.expert_load.empty() && m.experts % l.ep == 0;
            const auto uniform = even ? std::vector<double>{} : matrix;
            NodeId n = b.collective("ep_all_to_all", q0 / l.tp, k, models::Collective::all_to_all, sim::Bytes{per_rank},
                                    group, after, uniform);
            n = b.compute(lc.experts, group, n, k);
            // Combine sends every token back: the transpose of the dispatch.
            std::vector<double> back;
            if (!uniform.empty()) {
              back.resize(uniform.size());
              for (int i = 0; i < l.ep; ++i)
                for (int j = 0; j < l.ep; ++j)
                  back[static_cast<std::size_t>(j) * l.ep + i] = uniform[static_cast<std::size_t>(i) * l.ep + j];
            }
            n = b.collective("ep_all_to_all", q0 / l.tp, k, models::Collective::all_to_all, sim::Bytes{per_rank}, group,
                             {n}, back);
            for (int q = q0; q < q0 + l.ep; ++q) ready[q / l.tp] = n;
          }
        } else {
          const sim::Seconds mlp = moe ? lc.experts : lc.mlp;
          for (int d = 0; d < l.dp; ++d) {
            for (int t = 0; t < l.tp; ++t) tp_group[t] = gpu(d, p, t);
            ready[d] = b.compute(mlp, tp_group, ready[d], k);
            if (l.tp > 1)
              ready[d] = b.collective("tp_all_reduce", d, k, models::Collective::all_reduce, activations, tp_group, {ready[d]});
          }
        }
        for (int d = 0; d < l.dp; ++d) layer_end[d][layer] = ready[d];
      }
      if (p + 1 < l.pp)
        for (int d = 0; d < l.dp; ++d) {
          const NodeId handed = b.mark({}, static_cast<std::uint32_t>(gpu(d, p + 1, 0)));
          NodeId first = kNone;
          for (int t = 0; t < l.tp; ++t) {
            const NodeId sent = b.send(gpu(d, p, t), gpu(d, p + 1, t), activations / l.tp, ready[d]);
            if (first == kNone) first = sent;
            b.dag().add_dependency(sent, handed);
          }
          b.record("pp_send_recv", d, first, handed);
          ready[d] = handed;
        }
    }
    if (kv_target >= 0 && !s.workload.kv_layer_by_layer)
      for (int d = 0; d < l.dp; ++d)
        for (int p = 0; p < l.pp; ++p)
          for (int t = 0; t < l.tp; ++t)
            kv_sent.push_back(
                b.send(gpu(d, p, t), gpu(d, p, t) + kv_target, kv_layer * layers_per_stage, ready[d], "kv_transfer"));
  }
  if (kv_target >= 0) {
    const NodeId shipped = b.mark({}, static_cast<std::uint32_t>(gpu(0, 0, 0)));
    for (NodeId n : kv_sent) b.dag().add_dependency(n, shipped);
    b.record("kv_transfer", 0, kv_sent.front(), shipped);
    b.by_collective()["kv_transfer"].algorithm = s.workload.kv_layer_by_layer ? "per layer" : "all at once";
  }
}

}  // namespace

namespace {

// How a communicator's ring neighbours exchange, as the model runs them: a staged pair (P2P
// off, or a path through the CPU) is SHM whatever the topology offers.
StepResult::Group describe_pairs(const models::Machine& machine, const std::string& kind, std::vector<int> gpus,
                                 const std::vector<std::pair<int, int>>& pairs) {
  StepResult::Group group{kind, std::move(gpus), {}};
  std::map<std::string, int> counts;
  const auto& all = machine.graph().gpus();
  for (const auto& [i, j] : pairs) {
    const auto a = all[i], b = all[j];
    const models::Machine::Exchange e = machine.exchange(a, b);
    group.staged = group.staged || e.via_host;
    group.shm = group.shm || e.transport == topo::Transport::shm;
    group.net_via_host = group.net_via_host || (e.via_host && e.transport == topo::Transport::net);
    ++counts[e.name()];
  }
  for (const auto& [t, c] : counts) group.transports += fmt::format("{}{} x{}", group.transports.empty() ? "" : ", ", t, c);
  return group;
}

// A communicator: its ring neighbours, each GPU to the next.
StepResult::Group describe_group(const models::Machine& machine, const std::string& kind, const std::vector<int>& gpus) {
  std::vector<std::pair<int, int>> ring;
  for (std::size_t i = 0; i < gpus.size(); ++i) ring.emplace_back(gpus[i], gpus[(i + 1) % gpus.size()]);
  return describe_pairs(machine, kind, gpus, ring);
}

// What a run of the step's DAG says, in the step's terms: per tier the bytes and link busy
// time, every link's utilisation over the step (busiest first) and the five busiest.
void summarise_links(const models::Machine& machine, const sim::RunResult& run, StepResult& result) {
  const topo::LinkGraph& graph = machine.graph();
  for (sim::LinkId id = 0; id < run.links.size(); ++id) {
    const auto& ls = run.links[id];
    if (ls.carried.count() <= 0.0) continue;
    auto& tier = result.by_tier[std::string(topo::to_string(graph.link(id).tier))];
    tier.bytes += ls.carried;
    tier.busy += ls.busy;
    if (result.step.count() > 0.0) result.utilisation.push_back({graph.link_label(id), ls.utilisation});
  }
  std::stable_sort(result.utilisation.begin(), result.utilisation.end(),
                   [](const auto& a, const auto& c) { return a.utilisation > c.utilisation; });
  if (result.utilisation.size() > 256) result.utilisation.resize(256);
  result.busiest.assign(result.utilisation.begin(),
                        result.utilisation.begin() + std::min<std::size_t>(5, result.utilisation.size()));
}

// Mean over the layout's GPUs of the share of the step their kernels ran: compute kernels
// are the nodes bound to a GPU's processor, each from its start (when it got the GPU) to its end.
double compute_utilisation(const sim::TransferDag& dag, const sim::RunResult& run, const std::vector<int>& gpu_of_rank) {
  std::map<std::uint32_t, double> busy;
  for (NodeId id = 0; id < dag.size(); ++id) {
    const auto bound = dag.binding(id).processor;
    if (bound < kCommunicatorBase) busy[bound] += (run.nodes[id].end - run.nodes[id].start).count();
  }
  double sum = 0.0;
  for (int g : gpu_of_rank) sum += busy[static_cast<std::uint32_t>(g)];
  if (run.makespan.count() <= 0.0 || gpu_of_rank.empty()) return 0.0;
  return sum / (run.makespan.count() * static_cast<double>(gpu_of_rank.size()));
}

void build(StepBuilder& b, const Scenario& s, const std::vector<int>& gpu_of_rank) {
  if (s.workload.phase == Phase::load) build_load(b, s, b.graph(), gpu_of_rank);
  else build_step(b, s, gpu_of_rank);
}

}  // namespace

StepResult run_step(const Scenario& s, const models::Machine& machine, const CommCost& cost,
                    const models::Limits& limits) {
  const topo::LinkGraph& graph = machine.graph();
  const int gpus = static_cast<int>(graph.gpus().size());
  if (auto why = layout_problem(s.model, s.layout, gpus))
    throw input::InputError(s.file, 0, 0, fmt::format("layout: {} (topology {})", *why, graph.source));
  StepResult result;
  result.gpu_of_rank = place_ranks(s.layout, graph);
  result.memory = memory_per_gpu(s.model, s.layout, s.workload);
  result.gpu_memory = smallest_gpu_memory(graph, result.gpu_of_rank);
  if (auto why = memory_problem(result.memory, result.gpu_memory))
    throw input::InputError(s.file, 0, 0, fmt::format("layout {}: {}", layout_name(s.layout), *why));
  const Layout& l = s.layout;
  const int kv_target = s.workload.decode_offset > 0 ? s.workload.decode_offset : -1;
  if (kv_target >= 0 && kv_target + l.gpus() > static_cast<int>(graph.gpus().size()))
    throw input::InputError(s.file, 0, 0,
                          fmt::format("workload.disaggregation: the decode GPUs {}..{} are beyond the {} GPUs of {}",
                                      kv_target, kv_target + l.gpus() - 1, graph.gpus().size(), graph.source));
  if (s.workload.offload.any() && (s.workload.phase != Phase::decode || s.workload.micro_batches > 1))
    throw input::InputError(s.file, 0, 0, "workload.offload: applies to a decode that runs its batch whole (micro_batches: 1)");
  if (kv_target >= 0 && l.placement != Placement::pack)
    throw input::InputError(s.file, 0, 0, "workload.disaggregation: needs placement pack (decode GPUs are shifted ranks)");
  if (cost.expands()) {
    // Refused up front, with the estimate and the limit, rather than killed for memory.
    const CountingComm counting(cost);
    StepBuilder counter(machine, counting, s);
    build(counter, s, result.gpu_of_rank);
    const double nodes = counter.estimated_nodes();
    const sim::Bytes memory{nodes * models::kBytesPerNode};
    if (memory > limits.max_memory || 2.0 * nodes > limits.max_events)
      throw input::InputError(
          s.file, 0, 0,
          fmt::format("the step (layout {}x{}x{}x{}, {} micro-batch{}) expands to about {:.3g} transfers and delays, "
                      "needing about {} of memory and {:.3g} events; the limits are {} (--max-memory) and {:.3g} "
                      "(--max-events); use fewer replicas (dp), fewer micro-batches, or --model analytic",
                      l.tp, l.ep, l.pp, l.dp, s.workload.micro_batches, s.workload.micro_batches > 1 ? "es" : "",
                      nodes, sim::format_size(memory), 2.0 * nodes, sim::format_size(limits.max_memory),
                      limits.max_events));
  }
  StepBuilder b(machine, cost, s);
  build(b, s, result.gpu_of_rank);
  // The same step with communication free: what compute alone takes (with its pipeline
  // bubbles and micro-batch interleaving); what the real step takes beyond it is exposed.
  const FreeComm free;
  StepBuilder compute_only(machine, free, s);
  build(compute_only, s, result.gpu_of_rank);
  sim::RunResult run = sim::run_dag(machine.links(), b.dag());
  result.step = run.makespan;
  result.compute = sim::run_dag(machine.links(), compute_only.dag()).makespan;
  result.compute_utilisation = compute_utilisation(b.dag(), run, result.gpu_of_rank);
  // Communication time is wall time with something in flight on replica 0: the union of the
  // instances' intervals (per kind, and over all kinds), so that micro-batches' collectives
  // that overlap one another are not counted twice.
  std::map<std::string, std::vector<std::pair<double, double>>> spans;
  for (const auto& inst : b.instances())
    if (inst.replica == 0)
      spans[inst.kind].emplace_back(run.nodes[inst.launch].start.count(), run.nodes[inst.done].end.count());
  std::vector<std::pair<double, double>> all;
  for (auto& [kind, v] : spans) {
    b.by_collective()[kind].time = sim::Seconds{union_length(v)};
    all.insert(all.end(), v.begin(), v.end());
  }
  result.comm = sim::Seconds{union_length(all)};
  if (s.workload.offload.any()) {
    // What the offload costs the step: the same step with everything resident.
    Scenario resident = s;
    resident.workload.offload = {};
    StepBuilder without(machine, cost, resident);
    build(without, resident, result.gpu_of_rank);
    StepResult::OffloadStats o;
    std::vector<std::pair<double, double>> copies;
    for (const char* kind : {"offload_h2d", "offload_d2h"}) {
      const auto it = spans.find(kind);
      if (it != spans.end()) copies.insert(copies.end(), it->second.begin(), it->second.end());
    }
    o.time = sim::Seconds{union_length(copies)};
    o.exposed = std::max(sim::Seconds{0.0}, result.step - sim::run_dag(machine.links(), without.dag()).makespan);
    const auto& stats = b.by_collective();
    if (stats.count("offload_h2d")) o.to_gpu = stats.at("offload_h2d").bytes;
    if (stats.count("offload_d2h")) o.to_host = stats.at("offload_d2h").bytes;
    result.offload = o;
  }
  result.by_collective = b.by_collective();
  result.exposed_comm = result.step - result.compute;
  if (result.exposed_comm < sim::Seconds{0.0}) result.exposed_comm = sim::Seconds{0.0};
  summarise_links(machine, run, result);
  for (const auto& [kind, group] : b.communicators()) result.groups.push_back(describe_group(machine, kind, group));
  for (const auto& [kind, pairs] : b.sends()) {
    std::set<int> gpus_used;
    for (const auto& [i, j] : pairs) gpus_used.insert({i, j});
    result.groups.push_back(describe_pairs(machine, kind, {gpus_used.begin(), gpus_used.end()}, {pairs.begin(), pairs.end()}));
  }
  // A load moves weights, not tokens.
  const double tokens = s.workload.phase == Phase::prefill  ? static_cast<double>(s.workload.tokens)
                        : s.workload.phase == Phase::decode ? static_cast<double>(s.workload.batch)
                                                            : 0.0;
  const double seconds = result.step.count();
  result.tokens_per_s = seconds > 0.0 ? tokens * l.dp / seconds : 0.0;
  result.per_token_latency = result.step;
  result.note = b.note();
  result.dag = std::move(b.dag());
  result.run = std::move(run);
  return result;
}

}  // namespace wiresim::scenarios
