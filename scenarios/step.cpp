#include "scenarios/step.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "input/input_error.h"
#include "models/limits.h"
#include "scenarios/comm_cost.h"
#include "scenarios/host_copies.h"
#include "scenarios/step_builder.h"
#include "scenarios/sweep.h"

namespace wiresim::scenarios {
namespace {


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
