// Max-min fair rates by progressive filling: link capacities and flow routes in, one
// rate per flow out. A pure computation, tested on its own (as SimGrid's lmm/).
//
// Model: every flow uses every link of its route at one rate (a path, or a multicast
// tree). Raise all rates together; when a link fills, the flows crossing it are fixed at
// its fair share C_l / n_l (remaining capacity over unfixed flows); a flow whose rate cap
// is reached is fixed at its cap. Repeat with what is left. The result is the unique
// allocation where no flow can get more without taking from a flow with no more than it.
// Cost: O(I log L) for I (flow, link) incidences over L links, with an indexed heap of
// links keyed by fair share (shares only rise as flows are fixed) and the capped flows
// sorted by cap.
//
//   // two flows share link 0 (100 GB/s); flow 1 is capped at 30 GB/s -> {70e9, 30e9}
//   const double none = std::numeric_limits<double>::infinity();
//   auto r = max_min_rates({100e9}, {{0}, {0}}, {none, 30e9});
//   assert(r[0] == 70e9 && r[1] == 30e9);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wiresim::sim {

// A problem in compressed form: flow f crosses links route_links[route_offsets[f] ..
// route_offsets[f + 1]). Capacities and caps in bytes/s; a cap of +infinity means none;
// rate_cap may be empty (no caps). A flow with no links and no cap gets +infinity.
struct MaxMinProblem {
  std::span<const double> capacity;
  std::span<const std::uint32_t> route_offsets;  // flows + 1 entries
  std::span<const std::uint32_t> route_links;
  std::span<const double> rate_cap;
};

// Keeps its scratch space between calls, so that solving a component in the network's
// hot path allocates nothing once the buffers have grown.
class MaxMinSolver {
 public:
  // rates must have one entry per flow.
  void solve(const MaxMinProblem& problem, std::span<double> rates);

 private:
  void fix(const MaxMinProblem& p, std::uint32_t flow, double rate, std::span<double> rates);
  void heap_remove(std::uint32_t link);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  bool before(std::uint32_t a, std::uint32_t b) const {
    return share_[a] < share_[b] || (share_[a] == share_[b] && a < b);
  }

  std::vector<double> remaining_;       // per link: capacity not yet given to fixed flows
  std::vector<double> share_;           // per link: remaining_ / unfixed_
  std::vector<std::uint32_t> unfixed_;  // per link: flows on it not fixed yet
  std::vector<std::uint32_t> link_offsets_, link_flows_;  // transpose of the routes
  std::vector<std::uint32_t> heap_, heap_pos_;
  std::vector<std::uint32_t> capped_;   // flows with a finite cap, by (cap, index)
  std::vector<std::uint8_t> fixed_;
};

// Convenience form for tests and small problems: routes as lists of link indices.
std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<std::vector<std::uint32_t>>& routes,
                                  const std::vector<double>& rate_cap = {});

}  // namespace wiresim::sim
