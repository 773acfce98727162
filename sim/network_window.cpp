// Network::reshare_window: the local re-share of giant components (see network.h).
//
// The window is every live flow on a seed link that is due (a flow was added on it, or the
// flows that ended on it freed more than `slack` of its capacity). On a seed link all flows
// are in the window, so the window shares its whole capacity; on any other link a window
// flow crosses, the flows outside keep their rates and the window shares what they leave,
// C - (load - inside), never less than what its flows had (so rounding in the running
// load cannot squeeze an old flow to nothing). Progressive filling on that sub-problem
// gives the window's new rates; flows outside it are untouched, so the result is feasible
// and max-min within the window, not over the component.
#include <algorithm>
#include <cmath>

#include "sim/network.h"

namespace wiresim::sim {

void Network::reshare_window(SimTime now) {
  if (++wepoch_ == 0) {  // wrapped: forget old marks
    for (Link& l : links_) l.smark = l.wmark = 0;
    for (Flow& f : flows_) f.wmark = 0;
    wepoch_ = 1;
  }
  comp_links_.clear();
  comp_flows_.clear();
  comp_complete_.clear();
  for (const LinkId seed : big_seeds_) {
    Link& link = links_[seed];
    if (link.smark == wepoch_) continue;
    link.smark = wepoch_;
    if (!link.seeded && !(link.freed > slack_ * link.capacity)) {
      ++deferred_;  // what ended here left too little to be worth a re-share yet
      continue;
    }
    link.seeded = false;
    link.freed = 0.0;
    sweep(link.flows);
    link.wmark = wepoch_;
    link.wlocal = static_cast<std::uint32_t>(comp_links_.size());
    comp_links_.push_back(seed);
    comp_complete_.push_back(1);
    for (const std::uint32_t slot : link.flows) {
      Flow& f = flows_[slot];
      if (f.wmark == wepoch_) continue;
      f.wmark = wepoch_;
      comp_flows_.push_back(slot);
    }
  }
  if (comp_flows_.empty()) return;
  ++local_reshares_;
  ++components_solved_;
  flows_resolved_ += comp_flows_.size();
  // The window's other links, and what the window's flows have on each.
  comp_offsets_.resize(comp_flows_.size() + 1);
  comp_cap_.resize(comp_flows_.size());
  comp_route_.clear();
  comp_inside_.assign(comp_links_.size(), 0.0);
  comp_offsets_[0] = 0;
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    const Flow& f = flows_[comp_flows_[i]];
    for (const LinkId l : f.links()) {
      Link& link = links_[l];
      if (link.wmark != wepoch_) {
        link.wmark = wepoch_;
        link.wlocal = static_cast<std::uint32_t>(comp_links_.size());
        comp_links_.push_back(l);
        comp_complete_.push_back(0);
        comp_inside_.push_back(0.0);
      }
      comp_inside_[link.wlocal] += f.rate;
      comp_route_.push_back(link.wlocal);
    }
    comp_offsets_[i + 1] = static_cast<std::uint32_t>(comp_route_.size());
    comp_cap_[i] = f.cap;
  }
  comp_capacity_.resize(comp_links_.size());
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const Link& link = links_[comp_links_[i]];
    comp_capacity_[i] = comp_complete_[i]
                            ? link.capacity
                            : std::max(link.capacity - (link.load - comp_inside_[i]), comp_inside_[i]);
  }
  comp_rates_.resize(comp_flows_.size());
  solver_.solve({comp_capacity_, comp_offsets_, comp_route_, comp_cap_}, comp_rates_);
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) set_rate(comp_flows_[i], comp_rates_[i], now);
}

}  // namespace wiresim::sim
