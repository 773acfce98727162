// The workloads wiresim and its peer (SimGrid, bench/peer-simgrid) both run, described once
// in plain structs so that the two programs simulate the same links, routes, transfers and
// dependencies. No wiresim types: the peer includes this header without linking wiresim.
//
// ring N: ring all-reduce on an N-GPU crossbar (uplink GPU->switch, downlink switch->GPU,
//   450 GB/s and 0.5 us each); 2(N-1) steps x N transfers of 1 MiB; transfer (s, r) goes
//   r -> r+1 and waits for (s-1, r-1) (the chunk it forwards) and (s-1, r) (its own last send).
// a2a N: all-to-all of N GPUs, 64 KiB per pair, on a two-level fat tree (leaves of 32 GPUs,
//   32 spines, every link 50 GB/s and 0.5 us; spine = destination mod 32, D-mod-k); all
//   N(N-1) transfers start at once.
//
// Routes are listed once per (source, destination) pair and transfers name theirs, as
// each simulator stores them (SimGrid's zone routes, wiresim's interned DAG routes).
//
//   peer::Workload w = peer::make("ring", 1024);
//   for (const auto& t : w.transfers) ...   // w.route_pool[w.route_offsets[t.route] .. [t.route + 1])
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wiresim::peer {

struct Link {
  double bandwidth;  // bytes/s per direction
  double latency;    // s
  std::string name;
};

struct Transfer {
  std::uint32_t src, dst;                  // GPU (host) indices
  std::uint32_t route;                     // index into Workload's routes
  double bytes;
};

struct Workload {
  std::string name;
  int gpus = 0;
  std::vector<Link> links;
  std::vector<Transfer> transfers;
  std::vector<std::uint32_t> route_pool;           // every route's links, back to back
  std::vector<std::uint32_t> route_offsets{0};     // route r: route_pool[offsets[r], offsets[r + 1])
  std::vector<std::pair<std::uint32_t, std::uint32_t>> deps;  // (before, after) transfer ids

  std::uint32_t add_route(std::initializer_list<std::uint32_t> links) {
    route_pool.insert(route_pool.end(), links);
    route_offsets.push_back(static_cast<std::uint32_t>(route_pool.size()));
    return static_cast<std::uint32_t>(route_offsets.size() - 2);
  }
  std::size_t routes() const { return route_offsets.size() - 1; }
};

inline Workload ring_crossbar(int n, double chunk = 1 << 20) {
  Workload w;
  w.name = "ring";
  w.gpus = n;
  for (int i = 0; i < n; ++i) w.links.push_back({450e9, 0.5e-6, "up" + std::to_string(i)});
  for (int i = 0; i < n; ++i) w.links.push_back({450e9, 0.5e-6, "down" + std::to_string(i)});
  const int steps = 2 * (n - 1);
  w.transfers.reserve(std::size_t(steps) * n);
  w.deps.reserve(2 * std::size_t(steps) * n);
  for (int r = 0; r < n; ++r) w.add_route({std::uint32_t(r), std::uint32_t(n + (r + 1) % n)});  // route r: r -> r+1
  for (int s = 0; s < steps; ++s)
    for (int r = 0; r < n; ++r) {
      const auto id = static_cast<std::uint32_t>(w.transfers.size());
      const int next = (r + 1) % n;
      w.transfers.push_back({std::uint32_t(r), std::uint32_t(next), std::uint32_t(r), chunk});
      if (s > 0) {
        w.deps.emplace_back(id - n + (r == 0 ? n - 1 : -1), id);  // (s-1, r-1)
        w.deps.emplace_back(id - n, id);                          // (s-1, r)
      }
    }
  return w;
}

inline Workload all_to_all_fat_tree(int n, double bytes = 65536) {
  Workload w;
  w.name = "a2a";
  w.gpus = n;
  const int k = 32, spines = 32, leaves = (n + k - 1) / k;
  for (int i = 0; i < n; ++i) w.links.push_back({50e9, 0.5e-6, "up" + std::to_string(i)});
  for (int i = 0; i < n; ++i) w.links.push_back({50e9, 0.5e-6, "down" + std::to_string(i)});
  for (int l = 0; l < leaves; ++l)
    for (int s = 0; s < spines; ++s)
      w.links.push_back({50e9, 0.5e-6, "leaf" + std::to_string(l) + "-spine" + std::to_string(s)});
  for (int s = 0; s < spines; ++s)
    for (int l = 0; l < leaves; ++l)
      w.links.push_back({50e9, 0.5e-6, "spine" + std::to_string(s) + "-leaf" + std::to_string(l)});
  const auto up = [&](int leaf, int spine) { return std::uint32_t(2 * n + leaf * spines + spine); };
  const auto down = [&](int spine, int leaf) { return std::uint32_t(2 * n + leaves * spines + spine * leaves + leaf); };
  w.transfers.reserve(std::size_t(n) * (n - 1));
  w.route_pool.reserve(4 * std::size_t(n) * (n - 1));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const int li = i / k, lj = j / k, spine = j % spines;
      const std::uint32_t route = li == lj ? w.add_route({std::uint32_t(i), std::uint32_t(n + j)})
                                           : w.add_route({std::uint32_t(i), up(li, spine), down(spine, lj), std::uint32_t(n + j)});
      w.transfers.push_back({std::uint32_t(i), std::uint32_t(j), route, bytes});
    }
  return w;
}

inline Workload make(const std::string& kind, int n) {
  if (kind == "ring") return ring_crossbar(n);
  if (kind == "a2a") return all_to_all_fat_tree(n);
  throw std::invalid_argument("unknown workload '" + kind + "' (expected ring or a2a)");
}

}  // namespace wiresim::peer
