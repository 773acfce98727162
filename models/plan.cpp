#include "models/plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/algorithm.h"
#include "input/input_error.h"

namespace wiresim::models {

int chunk_count(sim::Bytes total, sim::Bytes chunk) {
  if (total.count() <= 0.0) return 1;
  return std::max(1, static_cast<int>(std::ceil(total / chunk - 1e-9)));
}

sim::Bytes chunk_size(sim::Bytes total, sim::Bytes chunk, int k) {
  const sim::Bytes rest = total - chunk * k;
  return rest < chunk ? rest : chunk;
}

std::vector<std::vector<int>> ranks_by_node(const Machine& machine, const Problem& problem) {
  std::map<int, std::vector<int>> groups;
  std::vector<int> node_order;
  for (int r = 0; r < static_cast<int>(problem.ranks.size()); ++r) {
    const int node = machine.node_of(problem.ranks[r]);
    if (!groups.count(node)) node_order.push_back(node);
    groups[node].push_back(r);
  }
  std::vector<std::vector<int>> out;
  for (int node : node_order) out.push_back(groups[node]);
  return out;
}

int node_count(const Machine& machine, const Problem& problem) {
  std::set<int> nodes;
  for (auto gpu : problem.ranks) nodes.insert(machine.node_of(gpu));
  return static_cast<int>(nodes.size());
}

bool one_nvlink_domain(const Machine& machine, const Problem& problem) {
  for (std::size_t i = 0; i < problem.ranks.size(); ++i) {
    const auto next = problem.ranks[(i + 1) % problem.ranks.size()];
    if (machine.tier_class(machine.route(problem.ranks[i], next)) != TierClass::nvlink) return false;
  }
  // Every pair, not just neighbours: a mesh may reach some peers only through PCIe.
  for (auto a : problem.ranks)
    for (auto b : problem.ranks)
      if (a != b && machine.tier_class(machine.route(a, b)) != TierClass::nvlink) return false;
  return true;
}

bool uniform_nodes(const std::vector<std::vector<int>>& by_node) {
  for (const auto& g : by_node)
    if (g.size() != by_node.front().size()) return false;
  return true;
}

sim::Bytes all_to_all_piece(const Problem& problem, int i, int j) {
  const int n = static_cast<int>(problem.ranks.size());
  if (problem.matrix.empty()) return problem.size / static_cast<double>(n);
  return sim::Bytes{problem.matrix[static_cast<std::size_t>(i) * n + j]};
}

sim::Seconds reduce_inputs_time(const Machine& machine, const Problem& problem, sim::Bytes bytes) {
  const int n = static_cast<int>(problem.ranks.size());
  const auto bw = machine.graph().device(problem.ranks.front()).memory_bandwidth;
  if (bw.count() <= 0.0) return sim::Seconds{0.0};
  return bytes * static_cast<double>(n + 1) / bw;
}

double pipeline_units(sim::Bytes bytes, sim::Bytes chunk) {
  if (bytes.count() <= 0.0 || chunk.count() <= 0.0) return 1.0;
  return std::max(1.0, std::ceil(bytes / chunk - 1e-9));
}

namespace {

// NCCL's spelling, for messages.
std::string_view nccl_name(Protocol p) {
  constexpr std::array<std::string_view, 3> kNames{"LL", "LL128", "Simple"};
  return kNames[static_cast<std::size_t>(p)];
}

// "nvls runs with the Simple protocol only (as in NCCL)".
std::string protocol_refusal(const AlgorithmDescriptor& d) {
  std::vector<std::string_view> names;
  for (Protocol p : all_protocols())
    if (d.protocols.contains(p)) names.push_back(nccl_name(p));
  return fmt::format("{} runs with the {} protocol{} only (as in NCCL)", d.name, fmt::join(names, " and "),
                     names.size() > 1 ? "s" : "");
}

}  // namespace

std::optional<std::string> why_not(const Machine& machine, const Problem& problem, Algorithm algorithm,
                                   Protocol protocol) {
  const Collective op = problem.op;
  if (problem.ranks.size() < 2) return fmt::format("{} needs at least 2 GPUs", to_string(op));
  if (problem.root < 0 || problem.root >= static_cast<int>(problem.ranks.size()))
    return fmt::format("root {} is not one of the {} ranks", problem.root, problem.ranks.size());
  if (!problem.matrix.empty()) {
    if (op != Collective::all_to_all) return "a traffic matrix applies to all_to_all only";
    if (problem.matrix.size() != problem.ranks.size() * problem.ranks.size())
      return fmt::format("the traffic matrix has {} entries, expected {} x {}", problem.matrix.size(),
                         problem.ranks.size(), problem.ranks.size());
  }
  const AlgorithmDescriptor& d = descriptor(algorithm);
  if (!d.collectives.contains(op)) return fmt::format(fmt::runtime(d.unimplemented), to_string(op));
  // Whether it runs on these ranks at all before whether it runs with this protocol, so that a
  // forced --algo is refused for its real reason, not for the first protocol tried.
  if (d.why_not)
    if (auto reason = d.why_not(machine, problem, ranks_by_node(machine, problem))) return reason;
  if (!d.protocols.contains(protocol)) return protocol_refusal(d);
  if (d.why_not_protocol) return d.why_not_protocol(machine, problem, protocol);
  return std::nullopt;
}

Plan expand(const Machine& machine, const Problem& problem, const Choice& choice) {
  if (auto reason = why_not(machine, problem, choice.algorithm, choice.protocol))
    throw input::InputError(fmt::format("--algo {}: {}", to_string(choice.algorithm), *reason));
  if (choice.channels < 1 || choice.channels > 64)
    throw input::InputError(fmt::format("channels must be 1..64, got {}", choice.channels));
  check_plan_limits(machine, problem, choice);
  Plan plan;
  PlanBuilder b(machine, problem, choice, plan);
  descriptor(choice.algorithm).expand(b, plan);
  // The host's launches run beside the GPUs' work: a collective lasts at least as long.
  const sim::Seconds floor = host_floor(machine, problem);
  if (floor.count() > 0.0) plan.dag.add_delay(floor, plan.dag.intern_label("host launch"), 0);
  return plan;
}

sim::Seconds host_floor(const Machine& machine, const Problem& problem) {
  return machine.params().host_launch * static_cast<double>(std::max(1, problem.gpus_per_thread));
}

namespace {

// ll_cap for ranks spanning `nodes` nodes, the first rank on node `first`.
sim::BytesPerSec ll_cap_of(const Machine& machine, int first, int nodes) {
  if (nodes <= 1) return machine.arch().ll_max;
  // Every node of a topology is built from one template, so one host speaks for all (NCCL reads
  // hosts of different vendors as AMD's row too).
  const Params::LlMaxNet& t = machine.params().ll_max_net;
  const auto& row = machine.cpu_vendor(first) == "amd" ? t.amd : t.other;
  return row[nodes == 2 ? 0 : 1];
}

}  // namespace

sim::BytesPerSec ll_cap(const Machine& machine, const Problem& problem) {
  return ll_cap_of(machine, machine.node_of(problem.ranks.front()), node_count(machine, problem));
}

PlanBuilder::PlanBuilder(const Machine& machine, const Problem& problem, const Choice& choice, Plan& plan)
    : machine_(machine), problem_(problem), choice_(choice), plan_(plan),
      protocol_(machine.params().protocol_on(machine.arch(), choice.protocol)),
      last_hop_(problem.ranks.size(), {HopKey{-1, -1, 0}, Hop{}}) {
  nodes_ = node_count(machine, problem);
  memory_bandwidth_ = machine.graph().device(problem.ranks.front()).memory_bandwidth;
  ll_cap_ = ll_cap_of(machine, machine.node_of(problem.ranks.front()), nodes_);
  sim::Seconds base = machine.params().base_latency(choice.algorithm, choice.protocol) + machine.arch().launch_overhead;
  // NVLS has no base latency in NCCL's model but one NVLink "step" of 25 us, charged once.
  if (descriptor(choice.algorithm).nvlink_step_at_launch)
    base += machine.params().step_latency(choice.algorithm, choice.protocol, TierClass::nvlink);
  launch_ = plan_.dag.add_delay(base, plan_.dag.intern_label("launch"), 0);
}

sim::Seconds PlanBuilder::step_latency(int from, int to) const {
  const auto route = machine_.route(gpu(from), gpu(to));
  const sim::Seconds wire = machine_.wire_latency(route);
  const TierClass tier = machine_.tier_class(route);
  // NVLS's NVLink step is charged once at launch; nvls_tree's tree hops pay the NET step.
  if (descriptor(choice_.algorithm).nvlink_step_at_launch && tier == TierClass::nvlink) return wire;
  sim::Seconds step = machine_.params().step_latency(choice_.algorithm, choice_.protocol, tier);
  if (tier == TierClass::nvlink) step += machine_.arch().nvlink_step_extra;
  step += machine_.step_extra(gpu(from), gpu(to));
  return std::max(step, wire);
}

sim::Seconds PlanBuilder::reduction_time(sim::Bytes payload) const {
  if (memory_bandwidth_.count() <= 0.0) return sim::Seconds{0.0};
  const sim::Bytes exposed = std::min(payload, protocol().step * protocol().payload);
  return exposed * 3.0 / memory_bandwidth_;
}

sim::BytesPerSec PlanBuilder::protocol_cap() const {
  const ArchParams& a = machine_.arch();
  switch (choice_.protocol) {
    case Protocol::ll: return ll_cap_;
    case Protocol::ll128: return a.ll128_per_channel * choice_.channels;
    case Protocol::simple: return sim::BytesPerSec::unlimited();
  }
  return sim::BytesPerSec::unlimited();
}

sim::BytesPerSec PlanBuilder::channel_cap(int from, int to) const {
  if (nvlink_channels_ <= 0.0) return sim::BytesPerSec::unlimited();
  return channel_cap(machine_.route(gpu(from), gpu(to)));
}

sim::BytesPerSec PlanBuilder::channel_cap(std::span<const sim::LinkId> route) const {
  const sim::BytesPerSec bw = machine_.arch().channel_bw;
  if (nvlink_channels_ <= 0.0 || bw.is_unlimited()) return sim::BytesPerSec::unlimited();
  if (machine_.tier_class(route) != TierClass::nvlink) return sim::BytesPerSec::unlimited();
  return bw * (nvlink_channels_ * protocol().payload);
}

sim::BytesPerSec PlanBuilder::stream_cap(int from, int to) const {
  const sim::BytesPerSec stream = machine_.stream_cap(gpu(from), gpu(to));
  return stream.is_unlimited() ? stream : stream * (channels_per_send() * protocol().payload);
}

sim::BytesPerSec PlanBuilder::p2p_cap(int from, int to, double channels) const {
  const sim::BytesPerSec bw = machine_.arch().p2p_channel_bw;
  if (bw.is_unlimited() || machine_.staged(gpu(from), gpu(to)) ||
      machine_.tier_class(machine_.route(gpu(from), gpu(to))) != TierClass::nvlink)
    return sim::BytesPerSec::unlimited();
  return bw * (channels * protocol().payload);
}

namespace {
// The one rule of whole_steps: across the network the proxy posts whole steps.
bool moves_whole_steps(TierClass tier) { return tier == TierClass::net; }
}  // namespace

bool PlanBuilder::whole_steps(int from, int to) const {
  return moves_whole_steps(machine_.tier_class(route(from, to, 0)));
}

bool PlanBuilder::whole_steps(const Hop& h) { return moves_whole_steps(h.tier); }

void PlanBuilder::depend(sim::NodeId before, sim::NodeId after) {
  if (before != kNoNode) plan_.dag.add_dependency(before, after);
}

std::span<const sim::LinkId> PlanBuilder::route(int from, int to, std::uint32_t flow) const {
  const auto it = rails_.find({from, to});
  return machine_.route(gpu(from), gpu(to), flow, it == rails_.end() ? -1 : it->second);
}

const PlanBuilder::Hop& PlanBuilder::hop(int from, int to, std::uint32_t flow) {
  const HopKey key{from, to, flow};
  auto& last = last_hop_[static_cast<std::size_t>(from)];
  if (last.first == key) return last.second;
  if (const auto it = hops_.find(key); it != hops_.end()) {
    last = *it;
    return last.second;
  }
  const auto links = route(from, to, flow);
  Hop h;
  h.route = plan_.dag.add_route(links);
  h.step_latency = step_latency(from, to);
  h.staged = machine_.staged(gpu(from), gpu(to));
  h.stream = machine_.stream_cap(gpu(from), gpu(to));
  h.tier = machine_.tier_class(links);
  last = *hops_.emplace(key, h).first;
  return last.second;
}

PlanBuilder::Sent PlanBuilder::send(int from, int to, sim::Bytes payload,
                                    std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                                    sim::LabelId label, sim::BytesPerSec cap, bool reduce,
                                    sim::Seconds extra_arrival, int merged) {
  return transfer(from, to, payload, deps, flow, label, cap, reduce, extra_arrival,
                  protocol().overhead * static_cast<double>(merged));
}

PlanBuilder::Sent PlanBuilder::send_posted(int from, int to, sim::Bytes payload,
                                           std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                                           sim::LabelId label, sim::BytesPerSec cap) {
  return transfer(from, to, payload, deps, flow, label, cap, false, sim::Seconds{0.0}, sim::Seconds{0.0});
}

PlanBuilder::Sent PlanBuilder::transfer(int from, int to, sim::Bytes payload,
                                        std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                                        sim::LabelId label, sim::BytesPerSec cap, bool reduce,
                                        sim::Seconds extra_arrival, sim::Seconds overhead) {
  const Hop& h = hop(from, to, flow);
  // Host memory and sockets move wire bytes (LL's flags included): the SHM or socket rate
  // caps the wire.
  if (h.staged) cap = std::min(cap, machine_.arch().shm_bandwidth * protocol().payload);
  if (!h.stream.is_unlimited()) cap = std::min(cap, h.stream * (channels_per_send() * protocol().payload));
  if (h.tier == TierClass::nvlink && nvlink_channels_ > 0.0 && !machine_.arch().channel_bw.is_unlimited())
    cap = std::min(cap, machine_.arch().channel_bw * (nvlink_channels_ * protocol().payload));
  const sim::Bytes wire = payload / protocol().payload;
  // The cap bounds payload bytes per second; on the wire that is cap / payload efficiency.
  const sim::BytesPerSec wire_cap = cap.is_unlimited() ? cap : cap / protocol().payload;
  // The channel's per-send overhead comes first, before the bytes flow (its latency).
  const sim::NodeId t = plan_.dag.add_transfer_via(h.route, wire, overhead, wire_cap, label,
                                                   static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to));
  for (auto d : deps) depend(d, t);
  sim::Seconds arrive = h.step_latency + extra_arrival;
  if (reduce) arrive += reduction_time(payload);
  const sim::NodeId a = plan_.dag.add_delay(arrive, label, static_cast<std::uint32_t>(to));
  plan_.dag.add_dependency(t, a);
  return {t, a};
}

PlanBuilder::Sent PlanBuilder::send_links(std::span<const sim::LinkId> links, int track, int peer,
                                          sim::Bytes payload, std::initializer_list<sim::NodeId> deps,
                                          sim::Seconds arrival_latency, sim::LabelId label,
                                          sim::BytesPerSec cap, double extra_efficiency) {
  const double eff = protocol().payload * extra_efficiency;
  const sim::BytesPerSec wire_cap = cap.is_unlimited() ? cap : cap / eff;
  const sim::NodeId t = plan_.dag.add_transfer(links, payload / eff, sim::Seconds{0.0}, wire_cap,
                                               label, static_cast<std::uint32_t>(track),
                                               static_cast<std::uint32_t>(peer));
  for (auto d : deps) depend(d, t);
  const sim::NodeId a = plan_.dag.add_delay(arrival_latency, label, static_cast<std::uint32_t>(peer));
  plan_.dag.add_dependency(t, a);
  return {t, a};
}

sim::NodeId PlanBuilder::delay(sim::Seconds d, std::initializer_list<sim::NodeId> deps,
                               sim::LabelId label, int track) {
  const sim::NodeId n = plan_.dag.add_delay(d, label, static_cast<std::uint32_t>(track));
  for (auto dep : deps) depend(dep, n);
  return n;
}

std::vector<int> ring_order(const std::vector<std::vector<int>>& by_node, int r, int rings) {
  std::vector<int> order;
  for (std::size_t k = 0; k < by_node.size(); ++k) {
    const auto& local = by_node[k];
    const int g = static_cast<int>(local.size());
    const int start = (rings > 1 && by_node.size() > 1)
                          ? (((r - static_cast<int>(k)) % g) + g) % g
                          : 0;
    for (int i = 0; i < g; ++i) order.push_back(local[(start + i) % g]);
  }
  return order;
}

namespace {

// Node k's mesh cycles in local indices (empty: none, rank order).
std::vector<std::vector<int>> node_cycles(const Machine& machine, const Problem& problem,
                                          const std::vector<int>& local) {
  std::vector<topo::DeviceId> gpus;
  for (int r : local) gpus.push_back(problem.ranks[r]);
  return machine.mesh_rings(gpus);
}

// Where each instance enters (and, one GPU before on its cycle, leaves) every node. As in
// NCCL, a channel's pattern is the same in every node; the instances leave on different GPUs
// and enter on different GPUs, so each NIC sends one instance and receives one (the hop
// between nodes changes GPU: PXN relays it over the mesh, or without PXN the ring expansion
// keeps it on the entry GPU's rail, ring.cpp). A small backtracking search over exits.
// Each instance leaves its cycle's closing edge (exit -> start) unused. On a complete mesh
// (g − 1 cycles, one per out-link) the search asks for starts whose g − 1 closing edges chain
// into one path over all g GPUs: that path is a g-th instance on links no other uses, so every
// NIC of the node carries an instance, as NCCL's search puts a channel on each NIC. `extra`
// holds it (empty where there is none, or where fewer instances are asked for).
struct MeshStarts {
  std::vector<int> starts;
  std::vector<int> extra;
};

MeshStarts mesh_starts(const std::vector<std::vector<int>>& cycles, int g, int rings) {
  const auto next = [&](int r, int at) {
    if (cycles.empty()) return (at + 1) % g;
    const auto& c = cycles[r % cycles.size()];
    const int i = static_cast<int>(std::find(c.begin(), c.end(), at) - c.begin());
    return c[(i + 1) % g];
  };
  const bool extra = g >= 3 && static_cast<int>(cycles.size()) == g - 1 && rings >= g;
  const int placed = extra ? g - 1 : rings;
  MeshStarts out;
  std::vector<int> exits;
  std::vector<char> exit_used(g, 0), start_used(g, 0);
  // The closing edges as a path: from the GPU no instance starts at, following exit -> start.
  const auto chain = [&]() {
    std::vector<int> successor(g, -1);
    for (int r = 0; r < placed; ++r) successor[exits[r]] = out.starts[r];
    std::vector<int> path{static_cast<int>(std::find(start_used.begin(), start_used.end(), 0) - start_used.begin())};
    while (static_cast<int>(path.size()) < g && successor[path.back()] >= 0) path.push_back(successor[path.back()]);
    return static_cast<int>(path.size()) == g ? path : std::vector<int>{};
  };
  long budget = 1000000;
  const std::function<bool(int)> place = [&](int r) -> bool {
    if (r == placed) {
      if (!extra) return true;
      out.extra = chain();
      return !out.extra.empty();
    }
    for (int x = 0; x < g && --budget > 0; ++x) {
      const int y = next(r, x);
      if (exit_used[x] || start_used[y]) continue;
      exit_used[x] = start_used[y] = 1;
      out.starts.push_back(y);
      exits.push_back(x);
      if (place(r + 1)) return true;
      out.starts.pop_back();
      exits.pop_back();
      exit_used[x] = start_used[y] = 0;
    }
    return false;
  };
  if (place(0)) return out;
  // No chain within the budget: the cycles alone.
  if (extra) return mesh_starts(cycles, g, g - 1);
  return {};
}

// Ring r across nodes as NCCL's graph search builds it (src/graph/search.cc: "NET n -> GPU a
// -> .. -> GPU x -> NET n"; crossNic 0 is tried first, so the ring leaves each node through
// the NIC it came in by): it enters every node at local GPU a = r and leaves from a GPU that
// reaches a's NIC over PCIe switches alone (NCCL's PXB, tried before PXN), the same pattern
// in every node. Where no such GPU exists, the consecutive order of ring_order.
std::vector<int> nic_ring_order(const Machine& machine, const Problem& problem, const NodeGroups& by_node, int r,
                                int rings) {
  const auto& first = by_node.front();
  const int g = static_cast<int>(first.size());
  for (const auto& local : by_node)
    if (static_cast<int>(local.size()) != g) return ring_order(by_node, r, rings);
  const auto& router = machine.router();
  const int a = r % g;
  const auto gpu = [&](int local) { return problem.ranks[first[local]]; };
  if (router.nearest_nics(gpu(a)).empty()) return ring_order(by_node, r, rings);
  const auto nic = router.nic_for(gpu(a));
  const int rail = machine.graph().device(nic).rail;
  int exit = -1;
  for (int i = 1; i < g && exit < 0; ++i) {
    const int x = (a + g - i) % g;   // the consecutive ring's exit first
    if (router.pxb_nic(gpu(x), rail) == nic) exit = x;
  }
  if (exit < 0 || rail < 0) return ring_order(by_node, r, rings);
  std::vector<int> pattern{a};
  for (int i = 1; i < g; ++i)
    if ((a + i) % g != exit) pattern.push_back((a + i) % g);
  pattern.push_back(exit);
  std::vector<int> order;
  for (const auto& local : by_node)
    for (int i : pattern) order.push_back(local[i]);
  return order;
}

}  // namespace

std::vector<std::vector<int>> ring_orders(const Machine& machine, const Problem& problem, int channels) {
  const auto by_node = ranks_by_node(machine, problem);
  std::vector<std::vector<std::vector<int>>> cycles;
  bool mesh = false;
  for (const auto& local : by_node) {
    cycles.push_back(node_cycles(machine, problem, local));
    mesh = mesh || !cycles.back().empty();
  }
  int rings = 1;
  if (by_node.size() > 1) {
    int smallest = static_cast<int>(by_node.front().size());
    for (const auto& g : by_node) smallest = std::min(smallest, static_cast<int>(g.size()));
    // On a mesh, no more instances than cycles: two instances on one cycle would share its
    // links and halve both, costing more than the rail the spare instance would add.
    // (one more on a complete mesh: mesh_starts' path over the cycles' unused closing edges).
    for (const auto& c : cycles)
      if (!c.empty())
        smallest = std::min(smallest, static_cast<int>(c.size()) +
                                          (static_cast<int>(c.size()) == static_cast<int>(c.front().size()) - 1));
    rings = std::max(1, std::min(channels, smallest));
  } else if (mesh) {
    rings = std::max(1, std::min(channels, static_cast<int>(cycles.front().size())));
  }
  std::vector<std::vector<int>> orders;
  MeshStarts placed;
  if (mesh && by_node.size() > 1) {
    placed = mesh_starts(cycles.front(), static_cast<int>(by_node.front().size()), rings);
    if (placed.extra.empty()) rings = std::min(rings, static_cast<int>(cycles.front().size()));
  }
  const std::vector<int>& starts = placed.starts;
  for (int r = 0; r < rings; ++r) {
    if (!placed.extra.empty() && r == static_cast<int>(cycles.front().size())) {
      // The instance over the cycles' unused closing edges, the same path in every node.
      std::vector<int> order;
      for (const auto& local : by_node)
        for (int i : placed.extra) order.push_back(local[i]);
      orders.push_back(std::move(order));
      continue;
    }
    if (!mesh) {
      orders.push_back(by_node.size() > 1 ? nic_ring_order(machine, problem, by_node, r, rings)
                                          : ring_order(by_node, r, rings));
      continue;
    }
    std::vector<int> order;
    int start = starts.empty() ? r : starts[r];
    for (std::size_t k = 0; k < by_node.size(); ++k) {
      const auto& local = by_node[k];
      const int g = static_cast<int>(local.size());
      std::vector<int> cycle(g);
      for (int i = 0; i < g; ++i) cycle[i] = i;
      if (!cycles[k].empty()) cycle = cycles[k][r % cycles[k].size()];
      const int at = static_cast<int>(std::find(cycle.begin(), cycle.end(), start % g) - cycle.begin());
      for (int i = 0; i < g; ++i) order.push_back(local[cycle[(at + i) % g]]);
      start = starts.empty() ? cycle[(at + g - 1) % g] : starts[r];
    }
    orders.push_back(std::move(order));
  }
  return orders;
}

std::vector<int> chain_order(const std::vector<std::vector<int>>& by_node, Collective op, int root) {
  std::vector<int> order = ring_order(by_node, 0, 1);
  std::rotate(order.begin(), std::find(order.begin(), order.end(), root), order.end());
  if (op == Collective::reduce) {
    // Data flows towards the root: the root is the chain's last rank.
    std::reverse(order.begin() + 1, order.end());
    std::rotate(order.begin(), order.begin() + 1, order.end());
  }
  return order;
}

int ring_instances(const Machine& machine, const Problem& problem, int channels) {
  return static_cast<int>(ring_orders(machine, problem, channels).size());
}

int ring_chunk_steps(const Params& params, const Choice& choice, Collective op) {
  const bool big_chunks = choice.protocol == Protocol::simple &&
                          (op == Collective::all_reduce || op == Collective::all_gather ||
                           op == Collective::reduce_scatter);
  return big_chunks ? params.ring_simple_chunk_steps : 1;
}

sim::Bytes ring_chunk(const Machine& machine, const Choice& choice, Collective op, int channels_in_instance) {
  const ProtocolParams& proto = machine.params().protocol(choice.protocol);
  return proto.step *
         (ring_chunk_steps(machine.params(), choice, op) * proto.payload * channels_in_instance);
}

}  // namespace wiresim::models
