// Rings over direct GPU-to-GPU links (xGMI full meshes, the DGX-1 hybrid cube mesh).
//
// Where a node's GPUs are joined by point-to-point links and not by a switch, a ring in rank
// order uses one link per GPU, and on a partial mesh it may even cross PCIe. NCCL's and
// RCCL's topology search instead builds several rings, each a directed Hamiltonian cycle
// over NVLink-class links, spread over different links. Here: each direct link is worth as
// many ring "units" as it has base links (a bonded pair of NVLinks is 2), and a depth-first
// search looks for as many directed Hamiltonian cycles as the units allow (each cycle takes
// one unit of every link it crosses). The bound is the smallest number of units leaving or
// entering a GPU: 7 on an 8-GPU xGMI mesh (Tillson: the complete directed graph on n ≠ 4, 6
// vertices splits into n − 1 directed Hamiltonian cycles), 6 on a DGX-1. The search stops at
// the bound or after a fixed budget and keeps the best set found; deterministic.
//
//   std::vector<std::vector<int>> rings = mesh_rings(machine, {gpu0, gpu1, gpu2, gpu3});
//   // rings[c] lists local indices into the given GPUs, e.g. {0, 2, 1, 3}
#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>

#include "models/plan.h"

namespace wiresim::models {
namespace {

constexpr long kBudget = 2'000'000;   // DFS steps; an 8-GPU mesh needs far fewer
constexpr int kLargestMesh = 16;      // beyond this, no search (rank order)

struct Search {
  int n = 0;
  std::vector<std::vector<int>> units;   // units[a][b]: ring units on the link a -> b
  int bound = 0;
  long steps = 0;
  std::vector<std::vector<int>> cycles, best;

  int remaining_bound() const {
    int b = 1 << 30;
    for (int v = 0; v < n; ++v) {
      int out = 0, in = 0;
      for (int w = 0; w < n; ++w) {
        out += units[v][w];
        in += units[w][v];
      }
      b = std::min({b, out, in});
    }
    return b;
  }

  // Extends `path` (starting at 0) to Hamiltonian cycles no smaller (lexicographically)
  // than the previous cycle, so that every set of cycles is visited once.
  void extend(std::vector<int>& path, std::vector<char>& used, bool tight) {
    if (++steps > kBudget || static_cast<int>(best.size()) >= bound) return;
    const int v = path.back();
    if (static_cast<int>(path.size()) == n) {
      if (units[v][0] == 0) return;
      take(path, -1);
      cycles.push_back(path);
      if (cycles.size() > best.size()) best = cycles;
      if (static_cast<int>(cycles.size()) + remaining_bound() > static_cast<int>(best.size())) next_cycle();
      cycles.pop_back();
      take(path, +1);
      return;
    }
    // The previous cycle by index: nested calls push onto `cycles` (and pop again), which
    // may reallocate it, so a pointer would dangle.
    const std::size_t prev = cycles.size();
    const int pos = static_cast<int>(path.size());
    for (int w = 1; w < n; ++w) {
      if (used[w] || units[v][w] == 0) continue;
      if (tight && prev && w < cycles[prev - 1][pos]) continue;
      used[w] = 1;
      path.push_back(w);
      extend(path, used, tight && prev && w == cycles[prev - 1][pos]);
      path.pop_back();
      used[w] = 0;
      if (steps > kBudget || static_cast<int>(best.size()) >= bound) return;
    }
  }

  void take(const std::vector<int>& cycle, int d) {
    for (int i = 0; i < n; ++i) units[cycle[i]][cycle[(i + 1) % n]] += d;
  }

  void next_cycle() {
    std::vector<int> path{0};
    std::vector<char> used(n, 0);
    used[0] = 1;
    extend(path, used, true);
  }
};

// Ring units of the direct NVLink-class link a -> b (0 if none): its rate over the slowest
// direct link's rate, rounded, so that a bonded pair counts twice.
std::vector<std::vector<double>> direct_rates(const Machine& m, const std::vector<topo::DeviceId>& gpus) {
  const int n = static_cast<int>(gpus.size());
  std::vector<std::vector<double>> rate(n, std::vector<double>(n, 0.0));
  for (int a = 0; a < n; ++a)
    for (auto l : m.graph().out_links(gpus[a])) {
      const auto& link = m.graph().link(l);
      if (tier_class(link.tier) != TierClass::nvlink) continue;
      const auto it = std::find(gpus.begin(), gpus.end(), link.to);
      if (it != gpus.end()) rate[a][it - gpus.begin()] += link.bandwidth.count();
    }
  return rate;
}

}  // namespace

std::vector<std::vector<int>> search_mesh_rings(const Machine& m, const std::vector<topo::DeviceId>& gpus) {
  const int n = static_cast<int>(gpus.size());
  if (n < 2 || n > kLargestMesh || !m.p2p()) return {};
  const auto rate = direct_rates(m, gpus);
  double slowest = INFINITY;
  for (const auto& row : rate)
    for (double r : row)
      if (r > 0.0) slowest = std::min(slowest, r);
  if (!std::isfinite(slowest)) return {};
  Search s;
  s.n = n;
  s.units.assign(n, std::vector<int>(n, 0));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) s.units[a][b] = static_cast<int>(std::lround(rate[a][b] / slowest));
  s.bound = s.remaining_bound();
  if (s.bound == 0) return {};
  s.next_cycle();
  return s.best;
}

}  // namespace wiresim::models
