#include "scenarios/step.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "models/alpha_beta.h"
#include "models/limits.h"
#include "models/plan.h"
#include "models/tuner.h"
#include "scenarios/sweep.h"
#include "sim/input_error.h"

namespace wiresim::scenarios {
namespace {

using sim::NodeId;
constexpr NodeId kNone = models::kNoNode;

// A collective expanded once and appended wherever the step needs it.
struct Part {
  sim::TransferDag dag;               // simulate: the plan; otherwise one delay node
  std::vector<NodeId> sinks;          // nodes with no successors
  std::string algorithm;
};

struct Instance {
  std::string kind;
  int replica;
  NodeId launch;
  NodeId done;
};

class StepBuilder {
 public:
  // Processor ids: GPUs are their index; communicators from kCommunicatorBase up.
  static constexpr std::uint32_t kCommunicatorBase = 1u << 30;

  // free_comm: every collective and send takes no time (the compute-bound step).
  // count_only: collectives are not expanded, only their plans' sizes estimated
  // (estimated_nodes()), so that a step too big to simulate is refused before it is built.
  StepBuilder(const models::Machine& machine, StepMethod method, const Scenario& s, bool free_comm = false,
              bool count_only = false)
      : machine_(machine), method_(method), scenario_(s), free_comm_(free_comm), count_only_(count_only) {}

  double estimated_nodes() const { return estimated_nodes_ + static_cast<double>(dag_.size()); }

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
    if (free_comm_) return mark(after, static_cast<std::uint32_t>(gpus.front()));
    models::Problem problem;
    problem.op = op;
    problem.size = size;
    for (int g : gpus) problem.ranks.push_back(machine_.graph().gpus()[g]);
    problem.matrix = matrix;
    if (count_only_) {
      estimated_nodes_ += estimate_for(kind, problem);
      return mark(after, static_cast<std::uint32_t>(gpus.front()));
    }
    const Part& part = part_for(kind, problem);
    const NodeId offset = static_cast<NodeId>(dag_.size());
    for (NodeId i = 0; i < part.dag.size(); ++i) {
      const auto& node = part.dag.node(i);
      const auto label = dag_.intern_label(part.dag.labels()[node.label]);
      const std::uint32_t track = static_cast<std::uint32_t>(gpus[std::min<std::size_t>(node.track, gpus.size() - 1)]);
      if (node.kind == sim::NodeKind::delay) {
        dag_.add_delay(node.latency, label, track);
      } else {
        const std::uint32_t peer = static_cast<std::uint32_t>(gpus[std::min<std::size_t>(node.peer, gpus.size() - 1)]);
        dag_.add_transfer(part.dag.links(i), node.bytes,
                          part.dag.latency_is_explicit(i) ? std::optional<sim::Seconds>(node.latency) : std::nullopt,
                          node.rate_cap, label, track, peer);
      }
    }
    for (NodeId i = 0; i < part.dag.size(); ++i)
      for (NodeId s : part.dag.successors(i)) dag_.add_dependency(offset + i, offset + s);
    for (NodeId a : after)
      if (a != kNone) dag_.add_dependency(a, offset);   // node 0 of every part is its launch
    const NodeId done = dag_.add_delay(sim::Seconds{0.0}, dag_.intern_label(kind + " done"),
                                       static_cast<std::uint32_t>(gpus.front()));
    for (NodeId s : part.sinks) dag_.add_dependency(offset + s, done);
    const auto comm = communicators_.emplace(std::make_pair(kind, gpus), communicators_.size()).first->second;
    dag_.set_processor(offset, kCommunicatorBase + static_cast<std::uint32_t>(comm),
                       static_cast<std::uint32_t>(micro_batch), done);
    instances_.push_back({kind, replica, offset, done});
    auto& stats = by_collective_[kind];
    ++stats.count;
    stats.bytes += size;
    stats.algorithm = part.algorithm;
    return done;
  }

  // One point-to-point send (a pipeline-stage handover).
  NodeId send(int from, int to, sim::Bytes bytes, NodeId after, const std::string& kind = "pp_send_recv") {
    if (free_comm_) return mark({after}, static_cast<std::uint32_t>(from));
    return collective_p2p(from, to, bytes, after, kind);
  }

  // A handover of several sends counts once, from its first send to its last arrival.
  void record(const std::string& kind, int replica, NodeId first, NodeId done) {
    instances_.push_back({kind, replica, first, done});
  }
  sim::TransferDag& dag() { return dag_; }
  const std::vector<Instance>& instances() const { return instances_; }
  std::map<std::string, CollectiveStats>& by_collective() { return by_collective_; }
  const std::string& note() const { return note_; }

 private:
  models::TunerOptions options_for(const std::string& kind) const {
    models::TunerOptions options;
    if (kind == "tp_all_reduce") {
      options.algorithm = scenario_.tp_algorithm;
      options.protocol = scenario_.tp_protocol;
    }
    return options;
  }

  // Collectives with the same operation, size, ranks and matrix share a plan (and its estimate).
  using PlanKey = std::tuple<int, double, std::vector<topo::DeviceId>, std::vector<double>>;
  static PlanKey key_of(const models::Problem& p) {
    return {static_cast<int>(p.op), p.size.count(), p.ranks, p.matrix};
  }

  double estimate_for(const std::string& kind, const models::Problem& problem) {
    const PlanKey key = key_of(problem);
    auto it = estimates_.find(key);
    if (it != estimates_.end()) return it->second;
    const models::Decision d = models::tune(machine_, problem, options_for(kind));
    return estimates_.emplace(key, models::estimate_plan(machine_, problem, d.best).nodes).first->second;
  }

  const Part& part_for(const std::string& kind, const models::Problem& problem) {
    const PlanKey key = key_of(problem);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const models::Decision d = models::tune(machine_, problem, options_for(kind));
    Part part;
    part.algorithm = fmt::format("{}/{}", models::to_string(d.best.algorithm), models::to_string(d.best.protocol));
    if (method_ == StepMethod::simulate) {
      part.dag = models::expand(machine_, problem, d.best).dag;
    } else {
      const sim::Seconds t = method_ == StepMethod::analytic ? models::estimate(machine_, problem, d.best).time
                                                             : naive_time(problem);
      part.dag.add_delay(t, part.dag.intern_label(kind), 0);
      if (method_ == StepMethod::naive) part.algorithm = "naive";
    }
    for (NodeId i = 0; i < part.dag.size(); ++i)
      if (part.dag.successors(i).empty()) part.sinks.push_back(i);
    return cache_.emplace(key, std::move(part)).first->second;
  }

  NodeId collective_p2p(int from, int to, sim::Bytes bytes, NodeId after, const std::string& kind) {
    const auto& gpus = machine_.graph().gpus();
    const auto route = machine_.route(gpus[from], gpus[to]);
    const auto cls = machine_.tier_class(route);
    const sim::Seconds step = machine_.params().step_latency(models::Algorithm::ring, models::Protocol::simple, cls);
    NodeId t;
    if (method_ == StepMethod::simulate) {
      t = dag_.add_transfer(route, bytes, std::max(step, machine_.wire_latency(route)), sim::BytesPerSec::unlimited(),
                            dag_.intern_label(kind), static_cast<std::uint32_t>(from),
                            static_cast<std::uint32_t>(to));
    } else {
      models::Problem p;
      p.size = bytes;
      p.ranks = {gpus[from], gpus[to]};
      const sim::Seconds d = method_ == StepMethod::naive ? naive_time_of(bytes, p.ranks)
                                                          : step + bytes / machine_.rate(route);
      t = dag_.add_delay(d, dag_.intern_label(kind), static_cast<std::uint32_t>(from));
    }
    if (after != kNone) dag_.add_dependency(after, t);
    auto& stats = by_collective_[kind];
    ++stats.count;
    stats.bytes += bytes;
    stats.algorithm = "send/recv";
    return t;
  }

  // Back-of-the-envelope: the bytes a textbook says move (an all_reduce moves about twice
  // its buffer) over the bandwidth a spec sheet quotes for the wire between the first two
  // ranks — bidirectional for NVLink (as NVIDIA quotes it), per direction for PCIe and NICs.
  sim::Seconds naive_time(const models::Problem& p) {
    const double traffic = p.op == models::Collective::all_reduce ? 2.0 * p.size.count() : p.size.count();
    return naive_time_of(sim::Bytes{traffic}, p.ranks);
  }
  sim::Seconds naive_time_of(sim::Bytes traffic, const std::vector<topo::DeviceId>& ranks) {
    const auto route = machine_.route(ranks[0], ranks[1]);
    double raw = INFINITY;
    topo::Tier tier = topo::Tier::nvlink;
    for (auto l : route) {
      const auto& link = machine_.graph().link(l);
      if (link.bandwidth.count() < raw) {
        raw = link.bandwidth.count();
        tier = link.tier;
      }
    }
    const bool bidirectional = models::tier_class(tier) == models::TierClass::nvlink;
    const double quoted = bidirectional ? 2.0 * raw : raw;
    note_ = fmt::format("naive: traffic / {:.0f} GB/s, the {} figure a spec sheet quotes for {} ({:.0f} GB/s per direction)",
                        quoted / 1e9, bidirectional ? "bidirectional" : "per-direction", topo::to_string(tier), raw / 1e9);
    return sim::Bytes{traffic} / sim::BytesPerSec{quoted};
  }

  const models::Machine& machine_;
  StepMethod method_;
  const Scenario& scenario_;
  bool free_comm_;
  bool count_only_;
  double estimated_nodes_ = 0.0;
  sim::TransferDag dag_;
  std::map<PlanKey, Part> cache_;
  std::map<PlanKey, double> estimates_;
  std::map<std::pair<std::string, std::vector<int>>, std::size_t> communicators_;
  std::vector<Instance> instances_;
  std::map<std::string, CollectiveStats> by_collective_;
  std::string note_;
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
  const double h = m.hidden, b = m.dtype_bytes;
  const double kv_dim = h * m.kv_heads / m.heads;
  const auto roof = [&](double flops, double bytes) {
    return sim::Seconds{std::max(flops / s.compute.peak_flops, bytes / s.compute.memory_bandwidth.count())};
  };
  // Attention: q and o projections h x h, k and v h x kv_dim; decode also reads the KV cache.
  const double attn_params = 2.0 * h * h + 2.0 * h * kv_dim;
  double kv_bytes = 0.0;
  if (s.workload.phase == Phase::decode)
    kv_bytes = 2.0 * s.workload.batch * std::max(1L, s.workload.context) * kv_dim * b;
  c.attention = roof(2.0 * tokens * attn_params / l.tp, (attn_params * b + kv_bytes) / l.tp);
  // Dense MLP (gate, up, down): 3 h ffn.
  const double mlp_params = 3.0 * h * m.ffn;
  c.mlp = roof(2.0 * tokens * mlp_params / l.tp, mlp_params * b / l.tp);
  if (m.experts > 0) {
    const double expert_params = 3.0 * h * m.expert_ffn;
    const double local_experts = static_cast<double>(m.experts) / l.ep;
    // Each rank computes its share of the replica's tokens times top_k expert passes.
    c.experts = roof(2.0 * (tokens / l.tp) * m.top_k * expert_params,
                     std::min(local_experts, (tokens / l.tp) * m.top_k * l.ep) * expert_params * b);
  }
  return c;
}

// Bytes rank i sends rank j in a dispatch, from the experts each rank hosts.
std::vector<double> dispatch_matrix(const ModelShape& m, int ep, double per_rank_bytes) {
  std::vector<double> share(ep, 1.0 / ep);
  if (!m.expert_load.empty()) {
    std::fill(share.begin(), share.end(), 0.0);
    for (int e = 0; e < m.experts; ++e) share[e / (m.experts / ep)] += m.expert_load[e];
  }
  std::vector<double> matrix(static_cast<std::size_t>(ep) * ep);
  for (int i = 0; i < ep; ++i)
    for (int j = 0; j < ep; ++j) matrix[static_cast<std::size_t>(i) * ep + j] = i == j ? 0.0 : per_rank_bytes * share[j];
  return matrix;
}

// Model load: every GPU copies its share of the weights from the host memory of its own
// socket, all at once; the step ends with the last copy.
StepResult run_load(const Scenario& s, const topo::LinkGraph& graph, const models::Machine& machine,
                    StepMethod method, StepResult result) {
  const int n = s.layout.gpus();
  const sim::Bytes total = s.workload.bytes.count() > 0.0 ? s.workload.bytes
                                                           : weight_bytes_per_gpu(s.model, s.layout) * n;
  const sim::Bytes share = total / static_cast<double>(n);
  sim::TransferDag dag;
  const auto label = dag.intern_label("weights host->gpu");
  std::string note;
  for (int r = 0; r < n; ++r) {
    const auto gpu = graph.gpus()[result.gpu_of_rank[r]];
    const auto& g = graph.device(gpu);
    std::optional<topo::DeviceId> host;
    for (topo::DeviceId d = 0; d < graph.device_count() && !host; ++d) {
      const auto& dev = graph.device(d);
      if (dev.kind == topo::DeviceKind::cpu && dev.node == g.node && (dev.socket == g.socket || g.socket < 0)) host = d;
    }
    if (!host) throw sim::InputError(fmt::format("load: {} has no host CPU in {}", g.name, graph.source));
    const auto route = machine.route(*host, gpu);
    if (method == StepMethod::simulate) {
      dag.add_transfer(route, share, std::nullopt, sim::BytesPerSec::unlimited(), label,
                       static_cast<std::uint32_t>(result.gpu_of_rank[r]));
    } else {
      double raw = INFINITY;
      for (auto l : route) raw = std::min(raw, (method == StepMethod::naive ? graph.link(l).bandwidth
                                                                            : machine.links()[l].capacity).count());
      dag.add_delay(machine.wire_latency(route) + share / sim::BytesPerSec{raw}, label,
                    static_cast<std::uint32_t>(result.gpu_of_rank[r]));
      if (method == StepMethod::naive)
        note = fmt::format("naive: each GPU's share over its host link's quoted {:.0f} GB/s per direction", raw / 1e9);
    }
  }
  result.run = sim::run_dag(machine.links(), dag);
  result.step = result.comm = result.exposed_comm = result.run.makespan;
  auto& stats = result.by_collective["weight_load"];
  stats.count = n;
  stats.bytes = total;
  stats.time = result.step;
  stats.algorithm = "host copy";
  for (sim::LinkId id = 0; id < result.run.links.size(); ++id)
    if (result.run.links[id].carried.count() > 0.0) {
      auto& tier = result.by_tier[std::string(topo::to_string(graph.link(id).tier))];
      tier.bytes += result.run.links[id].carried;
      tier.busy += result.run.links[id].busy;
    }
  result.per_token_latency = result.step;
  result.note = note;
  result.dag = std::move(dag);
  return result;
}

}  // namespace

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
    if (used[k] >= nodes[k].size()) throw sim::InputError("layout: spread placement ran out of GPUs");
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
  for (int k = 0; k < micro_batches; ++k) {
    const double tokens = micro_batch_tokens(all_tokens, micro_batches, k);
    const sim::Bytes activations{tokens * m.hidden * m.dtype_bytes};
    const LayerCompute lc = layer_compute(s, tokens, tokens / static_cast<double>(all_tokens));
    // KV cache of one layer on one TP rank: K and V for every token, kv_heads / tp heads.
    const sim::Bytes kv_layer{tokens * 2.0 * m.hidden * m.kv_heads / m.heads * m.dtype_bytes / l.tp};
    std::vector<NodeId> ready(l.dp, kNone);
    for (int p = 0; p < l.pp; ++p) {
      for (int layer = p * layers_per_stage; layer < (p + 1) * layers_per_stage; ++layer) {
        const bool moe = m.experts > 0 && (layer + 1) % m.moe_every == 0;
        std::vector<int> tp_group(l.tp);
        for (int d = 0; d < l.dp; ++d) {
          for (int t = 0; t < l.tp; ++t) tp_group[t] = gpu(d, p, t);
          ready[d] = b.compute(lc.attention, tp_group, ready[d], k);
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
            const auto uniform = m.expert_load.empty() ? std::vector<double>{} : matrix;
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

StepResult run_step(const Scenario& s, const topo::LinkGraph& graph, const models::Params& params, StepMethod method,
                    const models::Limits& limits) {
  const int gpus = static_cast<int>(graph.gpus().size());
  if (auto why = layout_problem(s.model, s.layout, gpus))
    throw sim::InputError(s.file, 0, 0, fmt::format("layout: {} (topology {})", *why, graph.source));
  const models::Machine machine(graph, params);
  StepResult result;
  result.gpu_of_rank = place_ranks(s.layout, graph);
  if (s.workload.phase == Phase::load) return run_load(s, graph, machine, method, std::move(result));
  const Layout& l = s.layout;
  const int kv_target = s.workload.decode_offset > 0 ? s.workload.decode_offset : -1;
  if (kv_target >= 0 && kv_target + l.gpus() > static_cast<int>(graph.gpus().size()))
    throw sim::InputError(s.file, 0, 0,
                          fmt::format("workload.disaggregation: the decode GPUs {}..{} are beyond the {} GPUs of {}",
                                      kv_target, kv_target + l.gpus() - 1, graph.gpus().size(), graph.source));
  if (kv_target >= 0 && l.placement != Placement::pack)
    throw sim::InputError(s.file, 0, 0, "workload.disaggregation: needs placement pack (decode GPUs are shifted ranks)");
  if (method == StepMethod::simulate) {
    // Refused up front, with the estimate and the limit, rather than killed for memory.
    StepBuilder counter(machine, method, s, false, true);
    build_step(counter, s, result.gpu_of_rank);
    const double nodes = counter.estimated_nodes();
    const sim::Bytes memory{nodes * models::kBytesPerNode};
    if (memory > limits.max_memory || 2.0 * nodes > limits.max_events)
      throw sim::InputError(
          s.file, 0, 0,
          fmt::format("the step (layout {}x{}x{}x{}, {} micro-batch{}) expands to about {:.3g} transfers and delays, "
                      "needing about {} of memory and {:.3g} events; the limits are {} (--max-memory) and {:.3g} "
                      "(--max-events); use fewer replicas (dp), fewer micro-batches, or --model analytic",
                      l.tp, l.ep, l.pp, l.dp, s.workload.micro_batches, s.workload.micro_batches > 1 ? "es" : "",
                      nodes, sim::format_size(memory), 2.0 * nodes, sim::format_size(limits.max_memory),
                      limits.max_events));
  }
  StepBuilder b(machine, method, s);
  build_step(b, s, result.gpu_of_rank);
  // The same step with communication free: what compute alone takes (with its pipeline
  // bubbles and micro-batch interleaving); what the real step takes beyond it is exposed.
  StepBuilder compute_only(machine, method, s, true);
  build_step(compute_only, s, result.gpu_of_rank);
  const double tokens = s.workload.phase == Phase::prefill ? static_cast<double>(s.workload.tokens)
                                                           : static_cast<double>(s.workload.batch);
  sim::RunResult run = sim::run_dag(machine.links(), b.dag());
  result.step = run.makespan;
  result.compute = sim::run_dag(machine.links(), compute_only.dag()).makespan;
  {
    // Compute kernels are the nodes bound to a GPU's processor; each ran from its start
    // (when it got the GPU) to its end.
    std::map<std::uint32_t, double> busy;
    const sim::TransferDag& dag = b.dag();
    for (NodeId id = 0; id < dag.size(); ++id) {
      const auto bound = dag.binding(id).processor;
      if (bound < StepBuilder::kCommunicatorBase) busy[bound] += (run.nodes[id].end - run.nodes[id].start).count();
    }
    double sum = 0.0;
    for (int g : result.gpu_of_rank) sum += busy[static_cast<std::uint32_t>(g)];
    if (run.makespan.count() > 0.0 && !result.gpu_of_rank.empty())
      result.compute_utilisation = sum / (run.makespan.count() * static_cast<double>(result.gpu_of_rank.size()));
  }
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
  result.by_collective = b.by_collective();
  result.exposed_comm = result.step - result.compute;
  if (result.exposed_comm < sim::Seconds{0.0}) result.exposed_comm = sim::Seconds{0.0};
  for (sim::LinkId id = 0; id < run.links.size(); ++id) {
    const auto& ls = run.links[id];
    if (ls.carried.count() <= 0.0) continue;
    auto& tier = result.by_tier[std::string(topo::to_string(graph.link(id).tier))];
    tier.bytes += ls.carried;
    tier.busy += ls.busy;
    const double span = result.step.count();
    if (span > 0.0)
      result.utilisation.push_back(
          {graph.link_name(id), ls.carried.count() / (machine.links()[id].capacity.count() * span)});
  }
  std::stable_sort(result.utilisation.begin(), result.utilisation.end(),
                   [](const auto& a, const auto& c) { return a.utilisation > c.utilisation; });
  if (result.utilisation.size() > 256) result.utilisation.resize(256);
  result.busiest.assign(result.utilisation.begin(),
                        result.utilisation.begin() + std::min<std::size_t>(5, result.utilisation.size()));
  const double seconds = result.step.count();
  result.tokens_per_s = seconds > 0.0 ? tokens * l.dp / seconds : 0.0;
  result.per_token_latency = result.step;
  result.note = b.note();
  result.dag = std::move(b.dag());
  result.run = std::move(run);
  return result;
}

}  // namespace wiresim::scenarios
