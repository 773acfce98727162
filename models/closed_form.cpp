#include "models/closed_form.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>

#include "sim/maxmin.h"

namespace wiresim::models {

namespace {

// E[min(limit, cap / (1 + X))], X distributed as `count`: one link's share on its own.
double link_alone_share(const std::vector<double>& count, double cap, double limit) {
  double expect = 0.0;
  for (std::size_t x = 0; x < count.size(); ++x) expect += count[x] * std::min(limit, cap / (1.0 + x));
  return expect;
}

// Poisson-binomial sum of two independent counts.
std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size() + b.size() - 1, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) out[i + j] += a[i] * b[j];
  return out;
}

// E[min(limit, min over links i of cap[i] / (1 + X_i))], X_i the sum of the counts of the
// groups g with bit i in masks[g], the groups independent with distributions pmf[g]. Links
// that see the same groups are one (the smaller capacity); with at most two left, the
// expectation is a sum over the shared count of a min of two independent counts (sorted:
// linear); beyond, the joint counts are enumerated (over 200,000 states: each link's mean).
// A link with bit i in `dense` is taken alone, E[min(limit, cap[i] / (1 + X_i))], outside the
// joint min over the others (Shares::phased says why).
double expected_min_share(const std::vector<std::uint32_t>& masks, const std::vector<std::vector<double>>& pmf,
                          const std::vector<double>& cap, double limit, std::uint32_t dense = 0) {
  // Merge links by the groups they see; a link no other edge uses only lowers the limit.
  // (Over 64 groups, rare, the links are taken as they are.)
  const bool merged = masks.size() <= 64;
  // Scratch kept between calls (one per edge, many per closed form).
  thread_local std::vector<std::uint64_t> column, seen;
  thread_local std::vector<double> merged_cap, tail_qy;
  thread_local std::vector<std::uint32_t> merged_of, gm;
  thread_local std::vector<std::vector<double>> gp;
  column.assign(cap.size(), 0);
  for (std::size_t i = 0; i < cap.size() && merged; ++i)
    for (std::size_t g = 0; g < masks.size(); ++g)
      if (masks[g] >> i & 1u) column[i] |= std::uint64_t{1} << g;
  seen.clear();
  merged_cap.clear();
  merged_of.assign(cap.size(), 0);
  for (std::size_t i = 0; i < cap.size() && merged; ++i) {
    if (column[i] == 0) {
      limit = std::min(limit, cap[i]);
      continue;
    }
    const auto it = std::find(seen.begin(), seen.end(), column[i]);
    const auto k = static_cast<std::uint32_t>(it - seen.begin());
    if (it == seen.end()) {
      seen.push_back(column[i]);
      merged_cap.push_back(cap[i]);
    } else {
      merged_cap[k] = std::min(merged_cap[k], cap[i]);
    }
    merged_of[i] = k;
  }
  // Each group's mask over the merged links; groups with the same mask are summed.
  gm.clear();
  for (std::size_t g = 0; g < masks.size(); ++g) {
    std::uint32_t mm = 0;
    for (std::size_t i = 0; i < cap.size(); ++i)
      if (masks[g] >> i & 1u) mm |= merged ? 1u << merged_of[i] : 1u << i;
    const auto it = std::find(gm.begin(), gm.end(), mm);
    if (it == gm.end()) {
      gm.push_back(mm);
      if (gp.size() < gm.size()) gp.resize(gm.size());
      gp[gm.size() - 1].assign(pmf[g].begin(), pmf[g].end());
    } else {
      auto& q = gp[static_cast<std::size_t>(it - gm.begin())];
      q = convolve(q, pmf[g]);
    }
  }
  const std::vector<double>& lc = merged ? merged_cap : cap;
  const std::size_t links = lc.size();
  if (gm.empty()) return std::min(limit, links ? *std::min_element(lc.begin(), lc.end()) : limit);
  // Dense links alone: each one's own expectation lowers the limit; the others' joint min below
  // it. (A link no other edge uses was folded into the limit above and is never dense.)
  std::uint32_t dense_merged = 0;
  for (std::size_t i = 0; i < cap.size(); ++i)
    if (dense >> i & 1u) dense_merged |= merged ? 1u << merged_of[i] : 1u << i;
  if (links >= 2 && dense_merged != 0) {
    const double own = limit;
    double below = limit;
    std::vector<double> rest_cap;
    std::vector<std::uint32_t> index(links, 0);
    for (std::size_t i = 0; i < links; ++i) {
      if (!(dense_merged >> i & 1u)) {
        index[i] = static_cast<std::uint32_t>(rest_cap.size());
        rest_cap.push_back(lc[i]);
        continue;
      }
      std::vector<double> count{1.0};
      for (std::size_t g = 0; g < gm.size(); ++g)
        if (gm[g] >> i & 1u) count = convolve(count, gp[g]);
      below = std::min(below, link_alone_share(count, lc[i], own));
    }
    if (rest_cap.empty()) return below;
    std::vector<std::uint32_t> rest_masks;
    std::vector<std::vector<double>> rest_pmf;
    for (std::size_t g = 0; g < gm.size(); ++g) {
      std::uint32_t mm = 0;
      for (std::size_t i = 0; i < links; ++i)
        if ((gm[g] & ~dense_merged) >> i & 1u) mm |= 1u << index[i];
      if (mm == 0) continue;
      rest_masks.push_back(mm);
      rest_pmf.push_back(gp[g]);
    }
    return expected_min_share(rest_masks, rest_pmf, rest_cap, below);   // the scratch above is not used after
  }
  if (links == 1) return link_alone_share(gp[0], lc[0], limit);
  if (links == 2) {
    static const std::vector<double> none{1.0};
    const std::vector<double>*a = &none, *b = &none, *ab = &none;
    for (std::size_t g = 0; g < gm.size(); ++g) (gm[g] == 1u ? a : gm[g] == 2u ? b : ab) = &gp[g];
    const std::vector<double>&only_a = *a, &only_b = *b, &both = *ab;
    // For each shared count s: E[min(x_u, y_v)], x_u = min(limit, cap_a / (1 + s + u)) and
    // y_v = cap_b / (1 + s + v) both falling; for each u the v with y_v < x_u are a suffix.
    // Counts below 1e-15 in probability are left out (a count of many edges that each send
    // most of the time is near its mean).
    const auto span = [](const std::vector<double>& q) {
      std::size_t lo = 0, hi = q.size();
      while (lo + 1 < hi && q[lo] < 1e-15) ++lo;
      while (hi - 1 > lo && q[hi - 1] < 1e-15) --hi;
      return std::pair{lo, hi};
    };
    const auto [a0, a1] = span(only_a);
    const auto [b0, b1] = span(only_b);
    const auto [s0, s1] = span(both);
    tail_qy.assign(only_b.size() + 1, 0.0);
    double expect = 0.0;
    for (std::size_t sh = s0; sh < s1; ++sh) {
      const auto y = [&](std::size_t v) { return lc[1] / (1.0 + sh + v); };
      for (std::size_t v = b1; v-- > b0;) tail_qy[v] = tail_qy[v + 1] + only_b[v] * y(v);
      double inner = 0.0, head = 0.0;   // head: P(V < cut)
      std::size_t cut = b0;             // first v with y_v < x_u
      for (std::size_t u = a0; u < a1; ++u) {
        const double x = std::min(limit, lc[0] / (1.0 + sh + u));
        while (cut < b1 && y(cut) >= x) head += only_b[cut++];
        inner += only_a[u] * (x * head + tail_qy[cut]);
      }
      expect += both[sh] * inner;
    }
    return expect;
  }
  double states = 1.0;
  for (std::size_t g = 0; g < gm.size(); ++g) states *= static_cast<double>(gp[g].size());
  if (states > 2e5) {   // too many to enumerate: each link's mean count
    double r = limit;
    for (std::size_t i = 0; i < links; ++i) {
      double mean = 0.0;
      for (std::size_t g = 0; g < gm.size(); ++g)
        if (gm[g] >> i & 1u)
          for (std::size_t c = 0; c < gp[g].size(); ++c) mean += c * gp[g][c];
      r = std::min(r, lc[i] / (1.0 + mean));
    }
    return r;
  }
  std::vector<std::size_t> at(gm.size(), 0);
  std::vector<double> x(links);
  double expect = 0.0;
  for (;;) {
    double p = 1.0;
    std::fill(x.begin(), x.end(), 1.0);
    for (std::size_t g = 0; g < gm.size(); ++g) {
      p *= gp[g][at[g]];
      for (std::size_t i = 0; i < links; ++i)
        if (gm[g] >> i & 1u) x[i] += static_cast<double>(at[g]);
    }
    if (p > 0.0) {
      double r = limit;
      for (std::size_t i = 0; i < links; ++i) r = std::min(r, lc[i] / x[i]);
      expect += p * r;
    }
    std::size_t g = 0;
    while (g < at.size() && ++at[g] == gp[g].size()) at[g++] = 0;
    if (g == at.size()) break;
  }
  return expect;
}

// The max-min problem of a set of simultaneous edges, built once (routes, caps) and solved
// with or without duty: the fixed points and the tree fill solve one set several times.
struct Shares {
  double payload = 1.0;
  std::vector<std::uint32_t> offsets{0}, route_links;
  std::vector<double> capacity;   // per problem link (B/s of wire)
  std::vector<double> caps;       // per edge, in wire units (payload cap / payload)
  mutable std::vector<std::uint32_t> link_off, link_edges;   // each link's edges (edges_on)

  Shares(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap) : payload(b.protocol().payload) {
    const Machine& m = b.machine();
    // Network link -> problem link, in a scratch table kept between calls (the tree fill
    // builds one small problem per parent) and cleared of what this call wrote.
    thread_local std::vector<std::uint32_t> local;
    constexpr std::uint32_t kNone = ~std::uint32_t{0};
    if (local.size() < m.links().size()) local.assign(m.links().size(), kNone);
    route_links.reserve(edges.size() * 4);
    caps.reserve(edges.size());
    offsets.reserve(edges.size() + 1);
    std::vector<sim::LinkId> seen;
    const sim::BytesPerSec shm = m.arch().shm_bandwidth * payload;
    for (const auto& e : edges) {
      const auto route = b.route(e.from, e.to, e.flow);
      for (auto l : route) {
        if (local[l] == kNone) {
          local[l] = static_cast<std::uint32_t>(capacity.size());
          capacity.push_back(m.links()[l].capacity.count());
          seen.push_back(l);
        }
        route_links.push_back(local[l]);
      }
      offsets.push_back(static_cast<std::uint32_t>(route_links.size()));
      sim::BytesPerSec edge_cap = std::min(cap, e.cap);
      if (m.staged(b.gpu(e.from), b.gpu(e.to))) edge_cap = std::min(edge_cap, shm);
      edge_cap = std::min(edge_cap, b.stream_cap(e.from, e.to));
      edge_cap = std::min(edge_cap, b.channel_cap(route));
      caps.push_back(edge_cap.is_unlimited() ? INFINITY : edge_cap.count() / payload);
    }
    for (auto l : seen) local[l] = kNone;
  }

  // The edges whose routes cross problem link l, in edge order (built at the first call: the
  // fixed points call again).
  std::span<const std::uint32_t> edges_on(std::size_t l) const {
    if (link_off.empty()) {
      link_off.assign(capacity.size() + 1, 0);
      link_edges.resize(route_links.size());
      for (auto k : route_links) ++link_off[k + 1];
      for (std::size_t k = 0; k < capacity.size(); ++k) link_off[k + 1] += link_off[k];
      std::vector<std::uint32_t> fill(link_off.begin(), link_off.end() - 1);
      for (std::size_t e = 0; e + 1 < offsets.size(); ++e)
        for (std::uint32_t i = offsets[e]; i < offsets[e + 1]; ++i)
          link_edges[fill[route_links[i]]++] = static_cast<std::uint32_t>(e);
    }
    return {link_edges.data() + link_off[l], link_off[l + 1] - link_off[l]};
  }

  // Payload rate of each edge, all sending at once (duty: closed_form.h, shared_rates).
  std::vector<double> solve(const std::vector<double>& duty = {}) const { return solve(duty, caps); }

  std::vector<double> solve(const std::vector<double>& duty, const std::vector<double>& edge_caps) const {
    const std::size_t n = edge_caps.size();
    if (duty.size() != n) return solve_at(std::vector<double>(capacity.size(), 0.0), edge_caps);
    // Expected concurrency on each link: 1 + (k - 1) f.
    std::vector<double> edges_on(capacity.size(), 0.0), duty_on(capacity.size(), 0.0);
    for (std::size_t e = 0; e < n; ++e)
      for (std::uint32_t i = offsets[e]; i < offsets[e + 1]; ++i) {
        edges_on[route_links[i]] += 1.0;
        duty_on[route_links[i]] += std::clamp(duty[e], 0.0, 1.0);
      }
    std::vector<double> concurrency(capacity.size(), 0.0);
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (edges_on[l] > 1.0) concurrency[l] = 1.0 + (edges_on[l] - 1.0) * (duty_on[l] / edges_on[l]);
    return solve_at(concurrency, edge_caps);
  }

  // Payload rate of each edge when link l's edges, while one of them sends, are concurrency[l]
  // at once on average (0: all of them): its capacity scaled by k / concurrency[l], then
  // max-min fairly.
  std::vector<double> solve_at(const std::vector<double>& concurrency, const std::vector<double>& edge_caps) const {
    std::vector<double> link_capacity = capacity;
    const std::size_t n = edge_caps.size();
    if (std::any_of(concurrency.begin(), concurrency.end(), [](double c) { return c > 0.0; })) {
      std::vector<double> edges_on(capacity.size(), 0.0);
      for (auto l : route_links) edges_on[l] += 1.0;
      for (std::size_t l = 0; l < capacity.size(); ++l)
        if (edges_on[l] > 1.0 && concurrency[l] > 0.0)
          link_capacity[l] *= edges_on[l] / std::clamp(concurrency[l], 1.0, edges_on[l]);
    }
    std::vector<double> rates(n);
    sim::MaxMinSolver solver;
    solver.solve(sim::MaxMinProblem{link_capacity, offsets, route_links, edge_caps}, rates);
    for (auto& r : rates) r *= payload;
    return rates;
  }

  // Each edge's mean payload rate while it moves volume[e] bytes, all starting at once and the
  // links re-shared whenever one finishes (progressive filling, as the simulation's network
  // re-shares a link when a transfer on it ends). Edges finishing within 1e-9 of one another
  // finish together; after kRounds re-sharings the rest keep their rates (an upper bound).
  std::vector<double> drain(const std::vector<double>& volume) const {
    constexpr int kRounds = 256;
    const std::size_t n = caps.size();
    std::vector<double> mean(n, 0.0), left = volume, edge_caps = caps;
    std::size_t active = 0;
    for (std::size_t e = 0; e < n; ++e)
      if (left[e] > 0.0) ++active;
      else edge_caps[e] = 0.0;
    double t = 0.0;
    for (int round = 0; active > 0; ++round) {
      const auto rates = solve({}, edge_caps);
      double dt = INFINITY;
      for (std::size_t e = 0; e < n; ++e)
        if (edge_caps[e] > 0.0 && rates[e] > 0.0) dt = std::min(dt, left[e] / rates[e]);
      if (!std::isfinite(dt)) break;
      const bool last = round + 1 == kRounds;
      for (std::size_t e = 0; e < n; ++e) {
        if (edge_caps[e] <= 0.0) continue;
        const double need = left[e] / rates[e];
        if (last || need <= dt * (1.0 + 1e-9)) {
          mean[e] = volume[e] / (t + need);
          edge_caps[e] = 0.0;
          --active;
        } else {
          left[e] -= rates[e] * dt;
        }
      }
      t += dt;
    }
    return mean;
  }

  // Each edge's expected payload rate while it sends, the others each sending independently a
  // share duty[j] of the time: E[min over its links l of capacity_l / (1 + X_l)], X_l the
  // number of others sending on l. Others on several of its links count on each (grouped by
  // which of its links they share), so two ends carrying the same edges lose nothing.
  //
  // Nothing is redistributed in that min: while an edge is held back at one end, its share of
  // the other end goes unused. The simulation's max-min hands that share to the link's other
  // edges, which can take it while they send and are not held back at their own far end (by
  // symmetry, half of the time). On a dense link, where the chance that none of the others can
  // take it is under kAbsorbMiss, the link is taken alone, E[capacity_l / (1 + X_l)], outside
  // the min: alone, that expectation keeps the link busy whenever one of its edges sends (k
  // edges that each send c and pause o have the period k c / capacity once that exceeds
  // o + c / capacity). Each GPU's NVLink port in a 2-node H100 tree carries 28 edges (miss
  // 0.55^27, 1e-7): the simulation's steady period is that port's bytes over its capacity, to
  // 0.03 %. A NIC between 8 nodes carries 4 (miss 0.17): there the joint min is within 1 % of
  // the simulation at 1 GiB, every link taken alone 4.9 % too fast (docs/models.md, "Tree").
  static constexpr double kAbsorbMiss = 0.01;

  // Edges alike in everything expected_min_share reads (their links' capacities, their cap,
  // which links are dense, and their others' link masks and duties, in the order met) get the
  // same share: the first one's, looked up by that key. Most edges of a tree or a ring repeat
  // a few shapes. At most kShapes keys are kept (memory stays bounded where none repeat).
  static constexpr std::size_t kShapes = 1u << 16;

  struct KeyHash {
    // FNV-1a over the words, four lanes at once (the multiplies of one lane wait on each other).
    std::size_t operator()(const std::vector<std::uint64_t>& key) const noexcept {
      constexpr std::uint64_t kPrime = 1099511628211ull;
      std::uint64_t h[4] = {1469598103934665603ull, 1ull, 2ull, 3ull};
      std::size_t i = 0;
      for (; i + 4 <= key.size(); i += 4)
        for (std::size_t k = 0; k < 4; ++k) h[k] = (h[k] ^ key[i + k]) * kPrime;
      for (; i < key.size(); ++i) h[0] = (h[0] ^ key[i]) * kPrime;
      return static_cast<std::size_t>(((h[0] * kPrime ^ h[1]) * kPrime ^ h[2]) * kPrime ^ h[3]);
    }
  };

  static std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }

  std::vector<double> phased(const std::vector<double>& duty) const {
    const std::size_t n = caps.size();
    std::vector<double> out(n);
    std::vector<std::uint32_t> mask_of(n, 0);
    std::vector<std::uint32_t> touched, masks;
    std::vector<std::vector<double>> pmf;   // the first masks.size() are this edge's groups
    std::vector<double> cap_l;
    std::vector<std::uint64_t> key;
    std::unordered_map<std::vector<std::uint64_t>, double, KeyHash> shapes;
    // Each edge's duty in [0, 1], and the chance that it cannot take another's unused share.
    std::vector<double> f(n), keeps(n);
    for (std::size_t j = 0; j < n; ++j) {
      f[j] = std::clamp(duty[j], 0.0, 1.0);
      keeps[j] = 1.0 - f[j] / 2.0;
    }
    for (std::size_t e = 0; e < n; ++e) {
      // Its links, as bits of a mask (a route has a handful; past 32 they are not counted).
      const std::uint32_t m = std::min<std::uint32_t>(offsets[e + 1] - offsets[e], 32);
      touched.clear();
      std::uint32_t dense = 0;
      for (std::uint32_t i = 0; i < m; ++i) {
        const auto l = route_links[offsets[e] + i];
        double miss = 1.0;   // the chance that no other edge on l can take e's unused share
        for (const auto j : edges_on(l)) {
          if (j == e) continue;
          if (mask_of[j] == 0) touched.push_back(j);
          mask_of[j] |= 1u << i;
          if (miss >= kAbsorbMiss) miss *= keeps[j];   // the product only falls: past the bound it is dense
        }
        if (miss < kAbsorbMiss) dense |= 1u << i;
      }
      cap_l.resize(m);
      for (std::size_t i = 0; i < cap_l.size(); ++i) cap_l[i] = capacity[route_links[offsets[e] + i]];
      key.clear();
      key.push_back(bits(caps[e]));
      key.push_back(dense);
      key.push_back(m);
      for (double c : cap_l) key.push_back(bits(c));
      for (auto j : touched) {
        key.push_back(mask_of[j]);
        key.push_back(bits(f[j]));
      }
      if (const auto hit = shapes.find(key); hit != shapes.end()) {
        for (auto j : touched) mask_of[j] = 0;
        out[e] = hit->second;
        continue;
      }
      // Groups: others by the set of e's links they share; each group's count distribution.
      masks.clear();
      for (auto j : touched) {
        const auto it = std::find(masks.begin(), masks.end(), mask_of[j]);
        std::size_t g = static_cast<std::size_t>(it - masks.begin());
        if (it == masks.end()) {
          masks.push_back(mask_of[j]);
          if (pmf.size() < masks.size()) pmf.resize(masks.size());
          pmf[g].assign(1, 1.0);
        }
        const double fj = f[j];
        auto& p = pmf[g];
        p.push_back(0.0);
        for (std::size_t c = p.size() - 1; c > 0; --c) p[c] = p[c] * (1.0 - fj) + p[c - 1] * fj;
        p[0] *= 1.0 - fj;
        mask_of[j] = 0;
      }
      out[e] = expected_min_share(masks, pmf, cap_l, caps[e], dense) * payload;
      if (shapes.size() < kShapes) shapes.emplace(key, out[e]);
    }
    return out;
  }

  // Payload rate of each send when edge e sends during the windows sends[e] (sorted, apart):
  // while k edges of a link send at once each gets capacity / k, at most its cap; a send's
  // rate on a link is that share's mean over its window, and its rate the least over its
  // links (or its cap alone).
  std::vector<std::vector<double>> overlapped(const std::vector<std::vector<Window>>& sends) const {
    std::vector<std::vector<double>> out(caps.size());
    for (std::size_t e = 0; e < caps.size(); ++e) out[e].assign(sends[e].size(), caps[e]);
    // (time, edge, its event: 2k the start of send k, 2k + 1 its end), earliest first.
    using Event = std::tuple<double, std::uint32_t, std::uint32_t>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> heads;
    // A link's edges have a few distinct caps: for each, the running integral of the share an
    // edge with that cap gets, min(cap, capacity / sending); a send carries the difference of
    // its cap's integral between its end and its start.
    std::vector<double> cap_values, integral;
    std::vector<std::uint32_t> cap_of(caps.size(), 0);
    std::vector<double> began(caps.size(), 0.0);
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      const auto list = edges_on(l);
      if (list.size() < 2) {   // alone on it: its cap or the link's capacity
        if (!list.empty())
          for (auto& r : out[list[0]]) r = std::min(r, capacity[l]);
        continue;
      }
      cap_values.clear();
      for (const auto e : list) {
        auto it = std::find(cap_values.begin(), cap_values.end(), caps[e]);
        if (it == cap_values.end()) it = cap_values.insert(cap_values.end(), caps[e]);
        cap_of[e] = static_cast<std::uint32_t>(it - cap_values.begin());
      }
      integral.assign(cap_values.size(), 0.0);
      // Each edge's windows are sorted and apart: merge the edges' (start, end) sequences
      // (heads is empty here: every link drains it).
      for (const auto e : list)
        if (!sends[e].empty()) heads.push({sends[e][0].first, e, 0});
      std::size_t active = 0;
      double last = 0.0;
      while (!heads.empty()) {
        const auto [t, e, at] = heads.top();
        heads.pop();
        if (t > last && active > 0) {
          const double share = capacity[l] / static_cast<double>(active);
          for (std::size_t c = 0; c < cap_values.size(); ++c) integral[c] += std::min(cap_values[c], share) * (t - last);
        }
        last = t;
        if (at % 2 == 0) {
          began[e] = integral[cap_of[e]];
          ++active;
        } else {
          --active;
          const auto& w = sends[e][at / 2];
          const double span = w.second - w.first;
          double& r = out[e][at / 2];
          r = std::min(r, span > 0.0 ? (integral[cap_of[e]] - began[e]) / span : capacity[l]);
        }
        const std::uint32_t next = at + 1;
        if (next < 2 * sends[e].size())
          heads.push({next % 2 == 0 ? sends[e][next / 2].first : sends[e][next / 2].second, e, next});
      }
    }
    for (auto& rates : out)
      for (auto& r : rates) r *= payload;
    return out;
  }

  // Payload rate of each edge under the given sharing of its links (closed_form.h, Sharing);
  // without a duty for every edge, all send all the time.
  std::vector<double> rates(const std::vector<double>& duty, Sharing sharing) const {
    return sharing == Sharing::independent && duty.size() == caps.size() ? phased(duty) : solve(duty);
  }

  // Payload rate of edge e with nothing else sending: its slowest link, or its cap.
  double alone(std::size_t e) const {
    double r = caps[e];
    for (std::uint32_t i = offsets[e]; i < offsets[e + 1]; ++i) r = std::min(r, capacity[route_links[i]]);
    return r * payload;
  }
};

}  // namespace

std::vector<double> shared_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                 const std::vector<double>& duty, Sharing sharing) {
  return Shares(b, edges, cap).rates(duty, sharing);
}

std::vector<double> drained_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                  const std::vector<double>& volume) {
  return Shares(b, edges, cap).drain(volume);
}

namespace {

// The first chunk through a tree whose ranks forward as they receive (ProtocolParams::
// tree_cut_through), played as expand_tree's send_through nodes: a send starts its overhead
// once every part it forwards has its first lines in (its head; across the network its whole
// arrival), its lines land a step latency after they begin, and it arrives a step latency
// after its bytes, no sooner than what it forwards. `order`: the ranks deepest first (trees_fill
// sorts them). Edges, starts and tails as trees_fill's.
double through_fill(const PlanBuilder& b, const TreeShape& tree, const std::vector<int>& order, std::uint32_t flow_up,
                    std::uint32_t flow_down, const std::vector<double>& up_bytes, const std::vector<double>& up_latency,
                    const std::vector<double>& down_bytes, const std::vector<double>& down_latency, double reduce,
                    double last, std::vector<Edge>* edges, std::vector<double>* starts, std::vector<double>* tails) {
  const double o = b.protocol().overhead.count();
  const int n = static_cast<int>(tree.parent.size());
  // Per rank r: its send up (ready, head, arrival) and the send down into it.
  std::vector<double> up_ready(n, 0.0), up_head(n, 0.0), up_arrival(n, 0.0);
  std::vector<double> down_ready(n, 0.0), down_head(n, 0.0), down_arrival(n, 0.0);
  for (int r : order) {
    const int p = tree.parent[r];
    if (p < 0) continue;
    const bool whole = b.whole_steps(r, p);
    double forwarded = 0.0;
    for (int c : tree.children[r]) {
      up_ready[r] = std::max(up_ready[r], whole ? up_arrival[c] : up_head[c]);
      forwarded = std::max(forwarded, up_arrival[c]);
    }
    up_head[r] = up_ready[r] + o + up_latency[r];
    up_arrival[r] = std::max(up_ready[r] + o + up_bytes[r], forwarded) + up_latency[r] + reduce;
  }
  // The way ends with the last chunk's final hop: its own bytes (`last` of a chunk's), the
  // hops before it run at the first chunk's pace (the later chunks follow a period apart).
  std::vector<double> final_arrival(n, 0.0);
  double fill = 0.0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int p = *it;
    for (int r : tree.children[p]) {
      const bool whole = b.whole_steps(p, r);
      double forwarded = 0.0, forwarded_final = 0.0;
      if (tree.parent[p] < 0) {
        for (int c : tree.children[p]) {
          down_ready[r] = std::max(down_ready[r], whole ? up_arrival[c] : up_head[c]);
          forwarded = std::max(forwarded, up_arrival[c]);
        }
        forwarded_final = forwarded;
      } else {
        down_ready[r] = whole ? down_arrival[p] : down_head[p];
        forwarded = down_arrival[p];
        forwarded_final = final_arrival[p];
      }
      down_head[r] = down_ready[r] + o + down_latency[r];
      down_arrival[r] = std::max(down_ready[r] + o + down_bytes[r], forwarded) + down_latency[r];
      final_arrival[r] = std::max(down_ready[r] + o + last * down_bytes[r], forwarded_final) + down_latency[r];
      fill = std::max(fill, final_arrival[r]);
    }
  }
  // What follows an edge's last bytes: each arrival waits for the one it forwards, a step
  // latency (and up, a reduction) per hop, to the deepest leaf.
  std::vector<double> below(n, 0.0), above(n, 0.0);   // after the send into r down; after r's send up
  for (int r : order)
    for (int c : tree.children[r]) below[r] = std::max(below[r], down_latency[c] + below[c]);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int r = *it, p = tree.parent[r];
    if (p < 0) continue;
    above[r] = up_latency[r] + reduce + (tree.parent[p] < 0 ? below[p] : above[p]);
  }
  for (int p = 0; p < n; ++p) {
    const auto& kids = tree.children[p];
    for (int r : kids) {
      if (edges) edges->push_back({r, p, flow_up + static_cast<std::uint32_t>(r)});
      if (starts) starts->push_back(up_ready[r]);
      if (tails) tails->push_back(above[r]);
    }
    for (int r : kids) {
      if (edges) edges->push_back({p, r, flow_down + static_cast<std::uint32_t>(r)});
      if (starts) starts->push_back(down_ready[r]);
      if (tails) tails->push_back(down_latency[r] + below[r]);
    }
  }
  return fill;
}

}  // namespace

double trees_fill(const PlanBuilder& b, const std::vector<TreeShape>& trees, const std::vector<std::uint32_t>& flow_up,
                  const std::vector<std::uint32_t>& flow_down, double bytes, sim::BytesPerSec cap, double reduce,
                  std::vector<Edge>* edges, double* hop_rate, std::vector<double>* starts, std::vector<double>* tails,
                  double last) {
  const double o = b.protocol().overhead.count();
  const std::size_t count = trees.size();
  // Each rank's height (hops above its deepest leaf); ranks deepest first.
  std::vector<std::vector<int>> height(count), order(count);
  for (std::size_t t = 0; t < count; ++t) {
    const TreeShape& tree = trees[t];
    const int n = static_cast<int>(tree.parent.size());
    order[t].resize(n);
    for (int r = 0; r < n; ++r) order[t][r] = r;
    std::stable_sort(order[t].begin(), order[t].end(), [&](int a, int c) { return tree.depth[a] > tree.depth[c]; });
    height[t].assign(n, 0);
    for (int r : order[t])
      for (int c : tree.children[r]) height[t][r] = std::max(height[t][r], height[t][c] + 1);
  }
  // The first chunk's hops that run at once: every tree's up sends from ranks of one height,
  // and its down sends into ranks of one depth (all trees start together).
  struct Hop {
    std::size_t tree;
    int child;
  };
  std::vector<std::vector<Hop>> ups, downs;
  for (std::size_t t = 0; t < count; ++t)
    for (int r = 0; r < static_cast<int>(trees[t].parent.size()); ++r) {
      if (trees[t].parent[r] < 0) continue;
      const auto h = static_cast<std::size_t>(height[t][r]), d = static_cast<std::size_t>(trees[t].depth[r]);
      if (ups.size() <= h) ups.resize(h + 1);
      if (downs.size() <= d) downs.resize(d + 1);
      ups[h].push_back({t, r});
      downs[d].push_back({t, r});
    }
  std::vector<std::vector<double>> up(count), down(count);   // each child's hop to and from its parent
  // Its bytes' time and its step latency, for trees that forward as they receive.
  std::vector<std::vector<double>> up_bytes(count), down_bytes(count), up_latency(count), down_latency(count);
  for (std::size_t t = 0; t < count; ++t) {
    for (auto* v : {&up, &down, &up_bytes, &down_bytes, &up_latency, &down_latency})
      (*v)[t].assign(trees[t].parent.size(), 0.0);
  }
  for (const bool going_up : {true, false})
    for (const auto& group : going_up ? ups : downs) {
      if (group.empty()) continue;
      std::vector<Edge> wave;
      for (const auto& [t, r] : group) {
        const int p = trees[t].parent[r];
        wave.push_back(going_up ? Edge{r, p, flow_up[t] + static_cast<std::uint32_t>(r)}
                                : Edge{p, r, flow_down[t] + static_cast<std::uint32_t>(r)});
      }
      const Shares shares(b, wave, cap);
      const auto rates = shares.solve();
      for (std::size_t i = 0; i < group.size(); ++i) {
        const auto [t, r] = group[i];
        const double latency = b.step_latency(wave[i].from, wave[i].to).count();
        (going_up ? up : down)[t][r] = o + bytes / rates[i] + latency + (going_up ? reduce : 0.0);
        (going_up ? up_bytes : down_bytes)[t][r] = bytes / rates[i];
        (going_up ? up_latency : down_latency)[t][r] = latency;
        if (hop_rate) *hop_rate = std::min(*hop_rate, rates[i]);
      }
    }
  double fill = 0.0;
  for (std::size_t t = 0; t < count; ++t) {
    const TreeShape& tree = trees[t];
    const int n = static_cast<int>(tree.parent.size());
    if (b.protocol().tree_cut_through) {
      fill = std::max(fill, through_fill(b, tree, order[t], flow_up[t], flow_down[t], up_bytes[t], up_latency[t],
                                         down_bytes[t], down_latency[t], reduce, last > 0.0 ? last / bytes : 1.0, edges,
                                         starts, tails));
      continue;
    }
    for (int r = 0; r < n; ++r) {
      double path = 0.0;
      for (int x = r; tree.parent[x] >= 0; x = tree.parent[x]) path += up[t][x] + down[t][x];
      fill = std::max(fill, path);
    }
    // When the first chunk reaches each edge: a rank sends up once every child's part is in
    // (a leaf at once), the root down once all are in, a rank down once its own part is back.
    std::vector<double> in(n, 0.0), back(n, 0.0);
    for (int r : order[t])
      for (int c : tree.children[r]) in[r] = std::max(in[r], in[c] + up[t][c]);
    for (auto it = order[t].rbegin(); it != order[t].rend(); ++it)
      back[*it] = tree.parent[*it] < 0 ? in[*it] : back[tree.parent[*it]] + down[t][*it];
    // From a rank's part being back to the last of its subtree's (its deepest way down).
    std::vector<double> below(n, 0.0);
    for (int r : order[t])
      for (int c : tree.children[r]) below[r] = std::max(below[r], back[c] - back[r] + below[c]);
    for (int p = 0; p < n; ++p) {
      const auto& kids = tree.children[p];
      for (int r : kids) {
        if (edges) edges->push_back({r, p, flow_up[t] + static_cast<std::uint32_t>(r)});
        if (starts) starts->push_back(in[r]);
        if (tails) tails->push_back(back[r] - in[r] - up[t][r] + below[r]);
      }
      for (int r : kids) {
        if (edges) edges->push_back({p, r, flow_down[t] + static_cast<std::uint32_t>(r)});
        if (starts) starts->push_back(back[p]);
        if (tails) tails->push_back(below[r]);
      }
    }
  }
  return fill;
}

double tree_fill(const PlanBuilder& b, const TreeShape& tree, std::uint32_t flow_up, std::uint32_t flow_down,
                 double bytes, sim::BytesPerSec cap, double reduce, std::vector<Edge>* edges, double* hop_rate,
                 std::vector<double>* starts) {
  return trees_fill(b, {tree}, {flow_up}, {flow_down}, bytes, cap, reduce, edges, hop_rate, starts, nullptr);
}

double windowed_bound(const PlanBuilder& b, const std::vector<Edge>& edges, const std::vector<double>& start,
                      const std::vector<double>& tail, sim::BytesPerSec cap, double bytes, double total) {
  const Shares shares(b, edges, cap);
  const double o = b.protocol().overhead.count();
  const double wire = bytes / shares.payload;
  // How fast each edge can send alone (a chunk per o + c / r); each link's edges' windows.
  std::vector<double> rate_of(edges.size());
  for (std::size_t e = 0; e < edges.size(); ++e) rate_of[e] = wire / (o + bytes / shares.alone(e));
  double bound = 0.0;
  std::vector<std::pair<double, double>> events;   // (time, change of the edges' summed rate)
  for (std::size_t l = 0; l < shares.capacity.size(); ++l) {
    const auto list = shares.edges_on(l);
    const double capacity = shares.capacity[l];
    const double work = total / shares.payload * static_cast<double>(list.size());
    double most = 0.0;   // the edges' summed rate alone
    for (auto e : list) most += rate_of[e];
    // A link its edges cannot fill, even all at once, bounds nothing here that the edges'
    // own pace (the fill and spacing) does not.
    if (list.size() < 2 || most <= capacity) continue;
    // What the link can carry by T: the integral of min(capacity, the summed rate of the edges
    // whose window [start, T - tail] holds t).
    const auto carried = [&](double T) {
      events.clear();
      for (auto e : list) {
        const double from = start[e], to = T - tail[e];
        if (to <= from) continue;
        events.push_back({from, rate_of[e]});
        events.push_back({to, -rate_of[e]});
      }
      std::sort(events.begin(), events.end());
      double sum = 0.0, rate = 0.0, last = 0.0;
      for (const auto& [t, change] : events) {
        sum += std::min(capacity, rate) * (t - last);
        rate += change;
        last = t;
      }
      return sum;
    };
    double lo = work / capacity, hi = lo;
    // Each window grows with T, so this ends; the count only guards against a hang.
    for (int i = 0; i < 64 && carried(hi) < work; ++i) hi *= 2.0;
    for (int i = 0; i < 60 && hi - lo > 1e-12; ++i) {
      const double mid = 0.5 * (lo + hi);
      (carried(mid) < work ? lo : hi) = mid;
    }
    bound = std::max(bound, hi);
  }
  return bound;
}

double staggered_spacing(const PlanBuilder& b, const std::vector<Edge>& edges, const std::vector<double>& start,
                         const std::vector<double>& rates, sim::BytesPerSec cap, double bytes, double pause,
                         double hop, double steady, int later) {
  if (later <= 0) return 0.0;
  const Shares shares(b, edges, cap);
  // When the first chunk reaches each edge of each link, and the link's own period once every
  // edge on it sends: its slowest edge's pause + bytes at its steady rate.
  std::vector<std::vector<double>> on(shares.capacity.size());
  std::vector<double> own(shares.capacity.size(), 0.0);
  for (std::size_t l = 0; l < on.size(); ++l)
    for (const auto e : shares.edges_on(l)) {
      on[l].push_back(start[e]);
      own[l] = std::max(own[l], std::min(steady, pause + bytes / rates[e]));
    }
  // A link of k sending edges passes a chunk per pause + bytes x (1 + (k - 1) f) / capacity,
  // f the share of the steady period an edge is sending (shared_rates' expected concurrency);
  // with all its edges sending, at least its own period.
  const double f = std::clamp((steady - pause) / steady, 0.0, 1.0);
  const double wire = bytes / shares.payload;
  double slowest = later * hop;
  for (std::size_t l = 0; l < on.size(); ++l) {
    auto& flows = on[l];
    const auto service = [&](std::size_t k) {
      return std::min(steady, std::max(hop, pause + wire * (1.0 + (k - 1.0) * f) / shares.capacity[l]));
    };
    const double full = std::max(service(flows.size()), own[l]);
    if (full <= hop) continue;   // chunks pass at `hop` even with every edge sending
    std::sort(flows.begin(), flows.end());
    // Chunks reach the link every `hop`, the first when its first edge starts; it passes them
    // at the service of the edges started by then, queueing the rest.
    const double first = flows.front();
    double left = first;
    std::size_t k = 0;
    for (int c = 1; c <= later; ++c) {
      while (k < flows.size() && flows[k] < left + hop) ++k;   // an edge starting during the chunk's passage shares it
      left = std::max(first + c * hop, left + service(k));
      if (k == flows.size()) {   // every edge started: the rest at the full service
        left += (later - c) * full;
        break;
      }
    }
    slowest = std::max(slowest, left - first);
  }
  return slowest;
}

namespace {

// duty_shared_rates over shares already built (ring_time reuses them for its phased play).
std::vector<double> duty_rates(const Shares& shares, double bytes, const std::vector<double>& pause,
                               const std::vector<int>& group, Sharing sharing, double min_period, int rounds) {
  auto rates = shares.solve();
  const std::size_t n = pause.size();
  const int groups = n == 0 ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> period(static_cast<std::size_t>(groups), min_period);
    for (std::size_t e = 0; e < n; ++e) period[group[e]] = std::max(period[group[e]], pause[e] + bytes / rates[e]);
    std::vector<double> duty(n);
    for (std::size_t e = 0; e < n; ++e) duty[e] = (bytes / rates[e]) / period[group[e]];
    rates = shares.rates(duty, sharing);
  }
  return rates;
}

}  // namespace

std::vector<double> duty_shared_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                      double bytes, const std::vector<double>& pause, const std::vector<int>& group,
                                      Sharing sharing, double min_period, int rounds) {
  return duty_rates(Shares(b, edges, cap), bytes, pause, group, sharing, min_period, rounds);
}

std::vector<sim::NodeId> nvls_start_nodes(PlanBuilder& b, int ranks) {
  const sim::Seconds start = b.machine().arch().nvls_start;
  if (start.count() <= 0.0) return std::vector<sim::NodeId>(ranks, b.launch());
  const auto label = b.label("nvls start");
  std::vector<sim::NodeId> out;
  for (int r = 0; r < ranks; ++r) out.push_back(b.delay(start, {b.launch()}, label, r));
  return out;
}

double nvls_period(int g, double part_time, double tau, double d) {
  const double n = g;
  const double both = (n + 1.0) * part_time + tau + (d - tau) * (d > tau ? (n - 1.0) / n : 1.0 / n);
  return std::max(n * part_time + tau, both);
}

std::pair<double, double> switch_ports(const Machine& machine, const std::vector<topo::DeviceId>& ranks) {
  double bw = INFINITY, wire = 0.0;
  for (auto gpu : ranks) {
    const auto port = *machine.nvls_port(gpu);
    bw = std::min({bw, machine.links()[port.up].capacity.count(), machine.links()[port.down].capacity.count()});
    wire = std::max(wire, (machine.links()[port.up].latency + machine.links()[port.down].latency).count());
  }
  return {bw, wire};
}

double ring_pass_time(const PlanBuilder& b, Collective op, int n, const std::vector<double>& rate,
                      const std::vector<double>& latency, const std::vector<bool>& whole, sim::Bytes block,
                      sim::Bytes chunk, int slots, std::span<std::vector<Window>> sends,
                      std::span<const std::vector<double>> send_rates) {
  const int steps = op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
  const int loops = chunk_count(block, chunk);
  const double overhead = b.protocol().overhead.count();
  const bool through = b.protocol().cut_through;   // PlanBuilder::send_through
  std::vector<double> send_end(n, 0.0), loop_end(n, 0.0), arrive_in(n, 0.0), next_arrive(n, 0.0);
  std::vector<double> head_in(n, 0.0), next_head(n, 0.0);
  std::vector<std::vector<double>> consumed(n, std::vector<double>(slots, 0.0));
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes c = chunk_size(block, chunk, k);
    for (int s = 0; s < steps; ++s) {
      const int j = k * steps + s;
      const bool reducing = op == Collective::reduce_scatter || (op == Collective::all_reduce && s < n - 1);
      const double reduction = reducing ? b.reduction_time(c).count() : 0.0;
      for (int p = 0; p < n; ++p) {
        const double data = s == 0 ? loop_end[p] : through && !whole[p] ? head_in[p] : arrive_in[p];
        const double slot = j >= slots ? consumed[p][j % slots] : 0.0;
        const double start = std::max({send_end[p], data, slot}) + overhead;
        const double r = send_rates.empty() ? rate[p] : send_rates[p][j];
        const double end = start + c.count() / r;
        if (!sends.empty()) sends[p].push_back({start, end});
        const double arrival = std::max(end, through && s > 0 ? arrive_in[p] : 0.0) + latency[p] + reduction;
        send_end[p] = end;
        next_arrive[(p + 1) % n] = arrival;
        next_head[(p + 1) % n] = start + latency[p];
        if (s > 0) consumed[(p + n - 1) % n][(j - 1) % slots] = end;
        if (s == steps - 1) consumed[p][j % slots] = arrival;
      }
      std::swap(arrive_in, next_arrive);
      std::swap(head_in, next_head);
    }
    loop_end = arrive_in;
  }
  double t = 0.0;
  for (int p = 0; p < n; ++p) t = std::max({t, send_end[p], loop_end[p]});
  return t;
}

// Rings played with their phases (ring_time) while a play costs at most this many sends (one
// loop of 8 rings over 16 H100 nodes is 260,096), replayed this many times: on 2-16 H100 nodes,
// 1-256 MiB, Simple and LL128, the closed form is then within 3 % of the simulation (7.4 % with
// the duty's mean concurrency alone; docs/models.md); each replay costs a play and a merge of
// every shared link's sends.
constexpr double kPhasedWork = 3e5;
constexpr int kPhasedRounds = 4;

double ring_time(const PlanBuilder& b, Collective op, const std::vector<std::vector<int>>& orders,
                 sim::Bytes block, sim::Bytes chunk, sim::BytesPerSec cap, std::uint32_t flow_base) {
  std::vector<Edge> edges;
  for (std::size_t r = 0; r < orders.size(); ++r) {
    const int n = static_cast<int>(orders[r].size());
    for (int p = 0; p < n; ++p)
      edges.push_back({orders[r][p], orders[r][(p + 1) % n],
                       (flow_base + static_cast<std::uint32_t>(r)) * 1'000'003u + static_cast<std::uint32_t>(p)});
  }
  const int n = static_cast<int>(orders.front().size());
  const int steps = op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
  const int loops = chunk_count(block, chunk);
  std::vector<double> latency;
  for (const auto& e : edges) latency.push_back(b.step_latency(e.from, e.to).count());
  // Forwarding as it receives (PlanBuilder::send_through), except the edges that move whole
  // steps (PlanBuilder::whole_steps: across the network).
  const bool through = b.protocol().cut_through;
  std::vector<bool> whole(edges.size(), false);
  if (through)
    for (std::size_t e = 0; e < edges.size(); ++e) whole[e] = b.whole_steps(edges[e].from, edges[e].to);
  // Rings that share links: each edge sends for c/r of a step and pauses for the rest (the
  // per-send overhead, the step latency, the wait for its ring's slowest hop); the others on
  // its links take that time (shared_rates' duty, duty_shared_rates' fixed point).
  std::vector<double> rates;
  std::optional<Shares> shares;   // built once for rings that share links: their rates, then the phased play
  if (orders.size() > 1) {
    std::vector<double> pause;
    std::vector<int> group;
    for (std::size_t r = 0; r < orders.size(); ++r)
      for (std::size_t p = 0; p < orders[r].size(); ++p) group.push_back(static_cast<int>(r));
    // Forwarding as it receives, a ring's step takes overhead + max(c / r, step latency): the
    // latency is a floor under the period, not a pause after the bytes.
    const double floor = through ? b.protocol().overhead.count() + *std::max_element(latency.begin(), latency.end()) : 0.0;
    for (std::size_t e = 0; e < edges.size(); ++e)
      pause.push_back(b.protocol().overhead.count() + (through && !whole[e] ? 0.0 : latency[e]));
    shares.emplace(b, edges, cap);
    rates = duty_rates(*shares, block.count() / loops, pause, group, Sharing::mean_concurrency, floor, kDutyRounds);
  } else {
    rates = shared_rates(b, edges, cap);
  }
  const bool alike = std::all_of(rates.begin(), rates.end(), [&](double r) { return r == rates.front(); }) &&
                     std::all_of(latency.begin(), latency.end(), [&](double l) { return l == latency.front(); });
  const double work = static_cast<double>(loops) * steps * static_cast<double>(edges.size());
  if (!alike && work <= 4e6) {
    const int slots = std::max(2, b.protocol().slots / ring_chunk_steps(b.machine().params(), b.choice(), op));
    // Every ring played hop by hop at `rates` (each send at its own rate where `each` has one);
    // each edge's sends into `sends` when given.
    std::vector<std::vector<double>> each;
    const auto play = [&](std::vector<std::vector<Window>>* sends) {
      double t = 0.0;
      std::size_t first = 0;
      for (const auto& order : orders) {
        const std::size_t m = order.size();
        const std::vector<double> r(rates.begin() + first, rates.begin() + first + m);
        const std::vector<double> l(latency.begin() + first, latency.begin() + first + m);
        const std::vector<bool> w(whole.begin() + first, whole.begin() + first + m);
        t = std::max(t, ring_pass_time(b, op, static_cast<int>(m), r, l, w, block, chunk, slots,
                                       sends ? std::span(*sends).subspan(first, m) : std::span<std::vector<Window>>{},
                                       each.empty() ? std::span<const std::vector<double>>{}
                                                    : std::span<const std::vector<double>>(each).subspan(first, m)));
        first += m;
      }
      return t;
    };
    if (orders.size() > 1 && work <= kPhasedWork) {
      // Rings that start together keep the phases their own hops give them (all ranks of a
      // ring step together, each a little after the hop before it): edges of different rings
      // on one link send when the play says, not at random phases as the duty's mean
      // concurrency assumes, and share the link while they overlap. Each send is replayed at
      // the rate its overlaps gave it (Shares::overlapped), kPhasedRounds times.
      std::vector<std::vector<Window>> sends(edges.size());
      for (int round = 0; round < kPhasedRounds; ++round) {
        for (auto& w : sends) w.clear();
        play(&sends);
        each = shares->overlapped(sends);
      }
    }
    return play(nullptr);
  }
  const double overhead = b.protocol().overhead.count();
  const bool any_whole = std::find(whole.begin(), whole.end(), true) != whole.end();
  double t = 0.0;
  for (int k = 0; k < loops; ++k) {
    const sim::Bytes c = chunk_size(block, chunk, k);
    const auto reduction = [&](int s) {
      const bool reducing = op == Collective::reduce_scatter || (op == Collective::all_reduce && s < n - 1);
      return reducing ? b.reduction_time(c).count() : 0.0;
    };
    if (!through) {
      double step = 0.0;
      for (std::size_t e = 0; e < edges.size(); ++e) step = std::max(step, overhead + c.count() / rates[e] + latency[e]);
      for (int s = 0; s < steps; ++s) t += step + reduction(s);
      continue;
    }
    // Forwarding as it receives, every rank alike: a step's bytes start once the rank's
    // previous send has left and the first lines of what it forwards have arrived (a step
    // latency after they left the previous rank), after the overhead; its data arrives a
    // latency after its bytes have left and after the data it forwards. Where any edge moves
    // whole steps, a step waits for the whole forwarded data.
    double bytes = 0.0, lambda = 0.0;
    for (std::size_t e = 0; e < edges.size(); ++e) {
      bytes = std::max(bytes, c.count() / rates[e]);
      lambda = std::max(lambda, latency[e]);
    }
    double start = t + overhead, end = start + bytes, arrival = end + lambda + reduction(0);
    for (int s = 1; s < steps; ++s) {
      start = std::max(end, any_whole ? arrival : start + lambda) + overhead;
      end = start + bytes;
      arrival = std::max(end, arrival) + lambda + reduction(s);
    }
    t = arrival;
  }
  return t;
}

double phase_time(const PlanBuilder& b, const std::vector<Edge>& edges, sim::Bytes payload, sim::BytesPerSec cap) {
  const auto rates = shared_rates(b, edges, cap);
  double t = 0.0;
  for (std::size_t e = 0; e < edges.size(); ++e)
    t = std::max(t, b.protocol().overhead.count() + payload.count() / rates[e] +
                        b.step_latency(edges[e].from, edges[e].to).count());
  return t;
}


}  // namespace wiresim::models
