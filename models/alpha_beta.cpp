#include "models/alpha_beta.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/closed_form.h"
#include "sim/input_error.h"

namespace wiresim::models {

Estimate estimate(const Machine& machine, const Problem& problem, const Choice& choice) {
  if (auto reason = why_not(machine, problem, choice.algorithm, choice.protocol))
    throw sim::InputError(fmt::format("--algo {}: {}", to_string(choice.algorithm), *reason));
  Plan scratch;
  PlanBuilder b(machine, problem, choice, scratch);
  const double base = scratch.dag.node(b.launch()).latency.count();
  const int n = static_cast<int>(problem.ranks.size());
  const sim::Bytes size = problem.size;
  const auto by_node = ranks_by_node(machine, problem);
  const auto mem_bw = machine.graph().device(problem.ranks.front()).memory_bandwidth;
  const auto reduce_inputs = [&](sim::Bytes bytes) {
    return mem_bw.count() > 0.0 ? bytes.count() * (n + 1) / mem_bw.count() : 0.0;
  };
  double t = base;
  std::string formula;
  switch (choice.algorithm) {
    case Algorithm::ring: {
      if (problem.op == Collective::broadcast || problem.op == Collective::reduce) {
        const std::vector<int> order = chain_order(by_node, problem.op, problem.root);
        const int hops = n - 1;
        std::vector<Edge> edges;
        for (int i = 0; i < hops; ++i) edges.push_back({order[i], order[i + 1], static_cast<std::uint32_t>(i)});
        b.cap_nvlink_channels(choice.channels);
        const auto rates = shared_rates(b, edges, b.protocol_cap());
        const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, choice.channels);
        const int loops = chunk_count(size, chunk);
        const bool reducing = problem.op == Collective::reduce;
        std::vector<double> sent(hops, base), arrived(hops, base);
        for (int k = 0; k < loops; ++k) {
          const sim::Bytes c = chunk_size(size, chunk, k);
          for (int i = 0; i < hops; ++i) {
            const double start = std::max(sent[i], i > 0 ? arrived[i - 1] : base);
            sent[i] = start + b.protocol().overhead.count() + c.count() / rates[i];
            arrived[i] = sent[i] + b.step_latency(order[i], order[i + 1]).count() +
                         (reducing ? b.reduction_time(c).count() : 0.0);
          }
        }
        t = arrived[hops - 1];
        formula = fmt::format("pipeline of {} hops x {} chunks of {}: (hops + chunks - 1) x chunk/rate + hops x step",
                              hops, loops, sim::format_size(chunk));
        break;
      }
      const auto orders = ring_orders(machine, problem, choice.channels);
      const int rings = static_cast<int>(orders.size());
      const int per_ring = std::max(1, choice.channels / rings);
      const sim::Bytes block = size / (static_cast<double>(n) * rings);
      const sim::Bytes chunk = ring_chunk(machine, choice, problem.op, per_ring);
      b.cap_nvlink_channels(per_ring);
      t += ring_time(b, problem.op, orders, block, chunk, b.protocol_cap() / rings);
      const int steps = problem.op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
      formula = fmt::format("base + loops({}) x steps({}) x (chunk/rate + step latency)", chunk_count(block, chunk), steps);
      break;
    }
    case Algorithm::nvls: {
      const int channels = machine.arch().nvls_channels;
      const sim::Bytes loop_bytes = nvls_chunk(machine, Algorithm::nvls, size, 1, n) * (static_cast<double>(channels) * n);
      const int loops = chunk_count(size, loop_bytes);
      const double eff = b.protocol().payload * machine.arch().nvls_efficiency;
      const auto [bw, wire] = switch_ports(machine, problem.ranks);
      // Every loop moves one part per rank; a part's wire bytes are its share over the efficiency.
      const double w = size.count() / loops / n / eff;
      if (problem.op == Collective::all_reduce) {
        // Loops run in lock step: while a loop's reduced parts cross the switch (one wire
        // latency) only reduce-scatters flow, leaving the downlinks (n-1)/n idle.
        // Each loop's streams also pay the step overhead once (it overlaps the last arrival).
        const double tau = machine.arch().nvls_step_overhead.count();
        t += 2.0 * wire + ((n + 1.0) * loops + n - 1.0) * w / bw + (loops - 1.0) * wire * (n - 1.0) / n +
             b.reduction_time(sim::Bytes{w * eff}).count() + loops * tau;
        formula = "2 wire + ((n+1) L + n - 1) x part/(eff x B) + (L-1) wire (n-1)/n";
      } else {
        // The last loop's arrival (wire, plus the reduction) overlaps its step overhead.
        const double tau = machine.arch().nvls_step_overhead.count();
        const double last = wire + (problem.op == Collective::reduce_scatter ? b.reduction_time(sim::Bytes{w * eff}).count() : 0.0);
        t += n * loops * w / bw + (loops - 1.0) * tau + std::max(last, tau);
        formula = "n L x part/(eff x B) + (L-1) x step overhead + max(last arrival, step overhead)";
      }
      break;
    }
    case Algorithm::one_shot: {
      std::vector<Edge> edges;
      for (int i = 0; i < n; ++i)
        for (int d = 1; d < n; ++d) edges.push_back({i, (i + d) % n, static_cast<std::uint32_t>(d)});
      t += phase_time(b, edges, size, b.protocol_cap() / static_cast<double>(n - 1)) + reduce_inputs(size);
      formula = "base + (n-1) S / rate + step + reduce of n inputs";
      break;
    }
    case Algorithm::two_shot: {
      const sim::Bytes part = size / static_cast<double>(n);
      std::vector<Edge> scatter, gather;
      for (int i = 0; i < n; ++i)
        for (int d = 1; d < n; ++d) {
          scatter.push_back({i, (i + d) % n, static_cast<std::uint32_t>(d)});
          gather.push_back({i, (i + d) % n, static_cast<std::uint32_t>(n + d)});
        }
      const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(n - 1);
      t += phase_time(b, scatter, part, cap) + reduce_inputs(part) + phase_time(b, gather, part, cap);
      formula = "base + 2 x ((n-1) S/n / rate + step) + reduce of n parts";
      break;
    }
    case Algorithm::direct:
    case Algorithm::pairwise: {
      if (problem.op == Collective::send_recv) {
        // As expand_send_recv: P2P channels, each a chain of chunks back to back through its
        // buffer slots; each chunk pays the send overhead.
        const int channels = p2p_channels(machine, problem, size);
        const sim::Bytes part = size / static_cast<double>(channels);
        const sim::Bytes chunk = p2p_chunk(machine, problem, choice.protocol, size);
        const int loops = chunk_count(part, chunk);
        const int slots = std::max(2, b.protocol().slots);
        std::vector<Edge> edges;
        for (int i = 0; i < n; ++i)
          for (int c = 0; c < channels; ++c)
            edges.push_back({i, (i + 1) % n, static_cast<std::uint32_t>(i * 64 + c), b.p2p_cap(i, (i + 1) % n, 1.0)});
        const auto rates = shared_rates(b, edges, b.protocol_cap());
        double last = 0.0;
        for (std::size_t e = 0; e < edges.size(); ++e) {
          const double lat = b.step_latency(edges[e].from, edges[e].to).count();
          std::vector<double> arrived(slots, 0.0);
          double sent = 0.0, arrival = 0.0;
          for (int k = 0; k < loops; ++k) {
            const double slot = k >= slots ? arrived[k % slots] : 0.0;
            sent = std::max(sent, slot) + b.protocol().overhead.count() + chunk_size(part, chunk, k).count() / rates[e];
            arrival = sent + lat;
            arrived[k % slots] = arrival;
          }
          last = std::max(last, arrival);
        }
        t += last;
        formula = fmt::format("base + {} channel(s) x {} chunks x (overhead + chunk / rate) + step", channels, loops);
        break;
      }
      const sim::Bytes uniform = size / static_cast<double>(n);
      const auto piece_of = [&](int i, int j) {
        return problem.matrix.empty() ? uniform : sim::Bytes{problem.matrix[static_cast<std::size_t>(i) * n + j]};
      };
      // With a traffic matrix the sends differ in size: the phase lasts as long as the
      // largest send at its equal share (an estimate; the simulation re-shares as sends end).
      const auto phase = [&](const std::vector<Edge>& edges, sim::BytesPerSec cap) {
        const auto rates = shared_rates(b, edges, cap);
        double longest = 0.0;
        for (std::size_t e = 0; e < edges.size(); ++e)
          longest = std::max(longest, b.protocol().overhead.count() + piece_of(edges[e].from, edges[e].to).count() / rates[e] +
                                          b.step_latency(edges[e].from, edges[e].to).count());
        return longest;
      };
      if (choice.algorithm == Algorithm::direct) {
        std::vector<Edge> edges;
        for (int i = 0; i < n; ++i)
          for (int d = 1; d < n; ++d) {
            const int j = (i + d) % n;
            edges.push_back({i, j, static_cast<std::uint32_t>(i * n + d),
                             b.p2p_cap(i, j, p2p_channels(machine, problem, piece_of(i, j)))});
          }
        t += phase(edges, b.protocol_cap() / static_cast<double>(n - 1));
        formula = "base + (n-1) S/n / rate + step";
      } else {
        for (int s = 1; s < n; ++s) {
          std::vector<Edge> edges;
          for (int i = 0; i < n; ++i) {
            const int j = (i + s) % n;
            edges.push_back({i, j, static_cast<std::uint32_t>(i * n + s),
                             b.p2p_cap(i, j, p2p_channels(machine, problem, piece_of(i, j)))});
          }
          t += phase(edges, b.protocol_cap());
        }
        formula = "base + sum over n-1 steps of (S/n / rate + step)";
      }
      break;
    }
    case Algorithm::tree: {
      // Same trees as tree.cpp: a pair per rail, chains inside nodes, NCCL's double binary tree.
      const auto instances = tree_chains(by_node, choice.channels);
      const int trees = by_node.size() > 1 ? 2 * static_cast<int>(instances.size()) : 1;
      const int per_tree = std::max(1, choice.channels / trees);
      b.cap_nvlink_channels(per_tree);
      const sim::Bytes chunk = b.protocol().step * (b.protocol().payload * per_tree);
      const sim::Bytes share = size / static_cast<double>(trees);
      const int loops = chunk_count(share, chunk);
      std::vector<Edge> edges;
      int depth = 0;
      double step = 0.0;
      for (int tree = 0; tree < trees; ++tree) {
        const TreeShape shape = build_tree(instances[tree / 2], tree % 2, n);
        const auto& parent = shape.parent;
        for (int r = 0; r < n; ++r) {
          depth = std::max(depth, shape.depth[r]);
          if (parent[r] >= 0) {
            edges.push_back({r, parent[r], static_cast<std::uint32_t>(tree * 2 * n + r)});
            edges.push_back({parent[r], r, static_cast<std::uint32_t>(tree * 2 * n + n + r)});
          }
        }
        // Step latencies along the slowest leaf-to-root path (NVLink hops inside nodes,
        // network hops between them), not depth x the slowest hop.
        for (int r = 0; r < n; ++r) {
          double path = 0.0;
          for (int x = r; parent[x] >= 0; x = parent[x]) path += b.step_latency(x, parent[x]).count();
          step = std::max(step, path);
        }
      }
      // Filling and draining the pipeline (2D chunk-hops) runs at the full link rate; in the
      // steady state each GPU sends up and down at once and the two share its links.
      const sim::BytesPerSec cap = b.protocol_cap() / static_cast<double>(trees);
      const auto shared = shared_rates(b, edges, cap);
      double full = INFINITY;
      for (const auto& e : edges) full = std::min(full, shared_rates(b, {e}, cap).front());
      const double rate = *std::min_element(shared.begin(), shared.end());
      const sim::Bytes c = loops > 1 ? chunk : share;
      const double o = b.protocol().overhead.count();
      // Once the root starts sending down, each GPU's uplink carries its up and down sends at
      // once. The root's child meets the down stream after two of its up sends (one hop from
      // the root, which started one fill later): those two go at the full rate, the rest shared.
      const double hop = o + c.count() / full;
      const double alone = std::min(loops - 1.0, 2.0);
      t += 2.0 * (step + depth * hop) + alone * hop + (loops - 1.0 - alone) * (o + c.count() / rate) +
           depth * b.reduction_time(c).count();
      formula = fmt::format("base + 2 x (path steps + D x chunk/rate) + (L - 1) x chunk/shared rate, D = {}, L = {}",
                            depth, loops);
      break;
    }
    case Algorithm::hierarchical: {
      const int g = static_cast<int>(by_node.front().size());
      const int nodes = static_cast<int>(by_node.size());
      const sim::Bytes node_block = size / static_cast<double>(g);
      const sim::BytesPerSec cap = b.protocol_cap();
      const auto intra = [&](Collective op, std::uint32_t flow_base) {
        b.cap_nvlink_channels(choice.channels);
        return ring_time(b, op, by_node, node_block, ring_chunk(machine, choice, op, choice.channels), cap,
                         flow_base);
      };
      std::vector<std::vector<int>> rails(g);
      for (int l = 0; l < g; ++l)
        for (int k = 0; k < nodes; ++k) rails[l].push_back(by_node[k][l]);
      const double scatter = intra(Collective::reduce_scatter, 0);
      b.cap_nvlink_channels(std::max(1, choice.channels / g));
      const double across = ring_time(b, Collective::all_reduce, rails, node_block / static_cast<double>(nodes),
                                      ring_chunk(machine, choice, Collective::all_reduce, std::max(1, choice.channels / g)),
                                      cap, static_cast<std::uint32_t>(nodes));
      t += scatter + across + intra(Collective::all_gather, static_cast<std::uint32_t>(nodes + g));
      formula = "base + ring reduce-scatter (node) + ring all_reduce (rails) + ring all-gather (node)";
      break;
    }
    case Algorithm::nvls_tree: {
      // Pipeline of L loops: the first fills every stage (reduce-scatter, D hops up, D down,
      // all-gather); then one loop per period, the slower of the NVLink side (g + 1 parts
      // each way per GPU) and the network side (every tree edge moving half a part at once).
      const int g = static_cast<int>(by_node.front().size());
      const int nodes = static_cast<int>(by_node.size());
      const sim::Bytes loop_bytes = nvls_chunk(machine, Algorithm::nvls_tree, size, nodes, g) *
                                    (static_cast<double>(machine.arch().nvls_channels) * g);
      const int loops = chunk_count(size, loop_bytes);
      const double eff = b.protocol().payload * machine.arch().nvls_efficiency;
      const auto [bw, wire] = switch_ports(machine, problem.ranks);
      const double part = std::min(size.count(), loop_bytes.count()) / g;
      std::vector<Edge> edges;
      int depth = 0;
      double hop = 0.0;
      for (int j = 0; j < g; ++j) {
        std::vector<std::vector<int>> members;
        for (int q = 0; q < nodes; ++q) members.push_back({by_node[q][j]});
        for (int w = 0; w < 2; ++w) {
          const TreeShape tree = build_tree(members, w, n);
          for (int r = 0; r < n; ++r) {
            depth = std::max(depth, tree.depth[r]);
            if (tree.parent[r] < 0) continue;
            edges.push_back({r, tree.parent[r], static_cast<std::uint32_t>(w * n + r)});
            edges.push_back({tree.parent[r], r, static_cast<std::uint32_t>(w * n + n + r)});
            hop = std::max(hop, b.step_latency(r, tree.parent[r]).count());
          }
        }
      }
      const auto shared = shared_rates(b, edges, sim::BytesPerSec::unlimited());
      const double net_rate = *std::min_element(shared.begin(), shared.end());
      double full = INFINITY;
      for (const auto& e : edges) full = std::min(full, shared_rates(b, {e}, sim::BytesPerSec::unlimited()).front());
      const double half = part / 2.0;
      const double o = b.protocol().overhead.count();
      const double fill = 2.0 * (g * part / (eff * bw) + wire) + b.reduction_time(sim::Bytes{part}).count() +
                          depth * (2.0 * (o + half / full + hop) + b.reduction_time(sim::Bytes{half}).count());
      const double period = std::max((g + 1.0) * part / (eff * bw), o + half / net_rate);
      t += fill + (loops - 1.0) * period;
      formula = fmt::format("base + fill(2 x (g part/(eff B) + wire) + 2D x (part/2 / rate + step)) + (L - 1) x "
                            "max((g+1) part/(eff B), part/2 / net rate), g = {}, D = {}, L = {}",
                            g, depth, loops);
      break;
    }
  }
  // The host's launches run beside the GPUs' work (nccl-tests -g: one thread, several GPUs).
  const double floor = host_floor(machine, problem).count();
  if (floor > t) {
    t = floor;
    formula = fmt::format("host launch floor: {} GPUs per thread x host_launch", problem.gpus_per_thread);
  }
  return {sim::Seconds{t}, formula};
}

}  // namespace wiresim::models
