#include "sim/maxmin.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>

namespace wiresim::sim {
namespace {
constexpr std::uint32_t kNotInHeap = std::numeric_limits<std::uint32_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

void MaxMinSolver::solve(const MaxMinProblem& p, std::span<double> rates) {
  const std::size_t links = p.capacity.size();
  const std::size_t flows = p.route_offsets.empty() ? 0 : p.route_offsets.size() - 1;
  assert(rates.size() == flows);
  assert(p.rate_cap.empty() || p.rate_cap.size() == flows);

  // Transpose the routes: which flows cross each link, in flow order.
  unfixed_.assign(links, 0);
  for (const std::uint32_t l : p.route_links) ++unfixed_[l];
  link_offsets_.resize(links + 1);
  link_offsets_[0] = 0;
  for (std::size_t l = 0; l < links; ++l) link_offsets_[l + 1] = link_offsets_[l] + unfixed_[l];
  link_flows_.resize(p.route_links.size());
  heap_pos_.assign(links, 0);  // reused as fill cursors, then as heap positions
  for (std::uint32_t f = 0; f < flows; ++f)
    for (std::uint32_t i = p.route_offsets[f]; i < p.route_offsets[f + 1]; ++i) {
      const std::uint32_t l = p.route_links[i];
      link_flows_[link_offsets_[l] + heap_pos_[l]++] = f;
    }

  remaining_.assign(p.capacity.begin(), p.capacity.end());
  share_.resize(links);
  heap_.clear();
  for (std::uint32_t l = 0; l < links; ++l) {
    heap_pos_[l] = kNotInHeap;
    if (unfixed_[l] == 0) continue;
    share_[l] = remaining_[l] / unfixed_[l];
    heap_pos_[l] = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(l);
    sift_up(heap_.size() - 1);
  }

  fixed_.assign(flows, 0);
  std::size_t done = 0;
  capped_.clear();
  for (std::uint32_t f = 0; f < flows; ++f) {
    const double cap = p.rate_cap.empty() ? kInf : p.rate_cap[f];
    if (cap < kInf) capped_.push_back(f);
    else if (p.route_offsets[f] == p.route_offsets[f + 1]) {
      rates[f] = kInf;  // no link, no cap: nothing limits it
      fixed_[f] = 1;
      ++done;
    }
  }
  std::sort(capped_.begin(), capped_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return p.rate_cap[a] < p.rate_cap[b] || (p.rate_cap[a] == p.rate_cap[b] && a < b);
  });

  std::size_t next_cap = 0;
  while (done < flows) {
    while (next_cap < capped_.size() && fixed_[capped_[next_cap]]) ++next_cap;
    const double link_share = heap_.empty() ? kInf : share_[heap_.front()];
    if (next_cap < capped_.size() && p.rate_cap[capped_[next_cap]] < link_share) {
      fix(p, capped_[next_cap], p.rate_cap[capped_[next_cap]], rates);
      ++done;
      continue;
    }
    // Every unfixed flow crosses a link still in the heap (or is capped), so it is not empty.
    assert(!heap_.empty());
    const std::uint32_t l = heap_.front();
    const double s = share_[l];
    heap_remove(l);
    for (std::uint32_t i = link_offsets_[l]; i < link_offsets_[l + 1]; ++i) {
      const std::uint32_t f = link_flows_[i];
      if (fixed_[f]) continue;
      fix(p, f, s, rates);
      ++done;
    }
  }
}

// Fixes `flow` at `rate` and takes that rate out of every link it crosses.
void MaxMinSolver::fix(const MaxMinProblem& p, std::uint32_t flow, double rate,
                       std::span<double> rates) {
  rates[flow] = rate;
  fixed_[flow] = 1;
  for (std::uint32_t i = p.route_offsets[flow]; i < p.route_offsets[flow + 1]; ++i) {
    const std::uint32_t l = p.route_links[i];
    if (heap_pos_[l] == kNotInHeap) continue;  // the link being filled
    remaining_[l] -= rate;
    if (--unfixed_[l] == 0) {
      heap_remove(l);
      continue;
    }
    // Rounding may leave a hair below zero on a link that the last flows fill exactly.
    const double share = std::max(remaining_[l], 0.0) / unfixed_[l];
    if (share == share_[l]) continue;  // same key, same place (an even split stays even)
    const bool rose = share > share_[l];
    share_[l] = share;
    if (rose) sift_down(heap_pos_[l]);  // shares rise as flows are fixed, but for rounding
    else sift_up(heap_pos_[l]);
  }
}

void MaxMinSolver::heap_remove(std::uint32_t link) {
  const std::size_t i = heap_pos_[link];
  heap_pos_[link] = kNotInHeap;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  heap_[i] = last;
  heap_pos_[last] = static_cast<std::uint32_t>(i);
  sift_up(i);
  sift_down(heap_pos_[last]);
}

void MaxMinSolver::sift_up(std::size_t i) {
  const std::uint32_t l = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(l, heap_[parent])) break;
    heap_[i] = heap_[parent];
    heap_pos_[heap_[i]] = static_cast<std::uint32_t>(i);
    i = parent;
  }
  heap_[i] = l;
  heap_pos_[l] = static_cast<std::uint32_t>(i);
}

void MaxMinSolver::sift_down(std::size_t i) {
  const std::uint32_t l = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], l)) break;
    heap_[i] = heap_[child];
    heap_pos_[heap_[i]] = static_cast<std::uint32_t>(i);
    i = child;
  }
  heap_[i] = l;
  heap_pos_[l] = static_cast<std::uint32_t>(i);
}

std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<std::vector<std::uint32_t>>& routes,
                                  const std::vector<double>& rate_cap) {
  if (!rate_cap.empty() && rate_cap.size() != routes.size())
    throw std::invalid_argument("max_min_rates: one rate cap per flow, or none");
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> flat;
  for (const auto& r : routes) {
    for (const std::uint32_t l : r) {
      if (l >= capacity.size()) throw std::out_of_range("max_min_rates: link index out of range");
      flat.push_back(l);
    }
    offsets.push_back(static_cast<std::uint32_t>(flat.size()));
  }
  std::vector<double> rates(routes.size());
  MaxMinSolver solver;
  solver.solve({capacity, offsets, flat, rate_cap}, rates);
  return rates;
}

}  // namespace wiresim::sim
