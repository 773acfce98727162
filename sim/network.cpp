#include "sim/network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace wiresim::sim {
namespace {

constexpr double kPsPerSecond = 1e12;

// Rounds up, as to_sim_time does: an event never fires before its exact time.
SimTime ceil_ps(double ps) { return static_cast<SimTime>(std::ceil(ps - 1e-6)); }

}  // namespace

Network::Network(std::vector<double> capacity) : links_(capacity.size()) {
  for (std::size_t l = 0; l < capacity.size(); ++l) {
    if (!(capacity[l] > 0.0) || !std::isfinite(capacity[l]))
      throw std::invalid_argument(
          fmt::format("link {}: capacity must be finite and > 0, got {} B/s", l, capacity[l]));
    links_[l].capacity = capacity[l];
  }
}

void Network::reserve(std::size_t flows, std::span<const std::uint32_t> per_link) {
  flows_.reserve(flows);
  for (std::size_t l = 0; l < per_link.size() && l < links_.size(); ++l) links_[l].flows.reserve(per_link[l]);
}

void Network::add_flow(std::span<const LinkId> route, double bytes, double rate_cap,
                       double start_ps, std::uint32_t tag, SimTime now) {
  assert(bytes > 0.0 && rate_cap > 0.0);
  assert(!route.empty() || rate_cap < kNoCap);
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[slot];
  f.route = route.data();
  f.route_len = static_cast<std::uint32_t>(route.size());
  f.tag = tag;
  f.alive = true;
  f.bytes = bytes;
  f.remaining = bytes;
  f.rate = 0.0;
  f.cap = rate_cap;
  f.last_ps = start_ps;
  ++active_;
  for (const LinkId l : route) {
    Link& link = links_[l];
    link.flows.push_back(slot);
    link.seeded = true;
    if (link.active++ == 0) link.busy_since = now;
    queue_seed(l);
  }
  if (route.empty()) set_rate(slot, rate_cap, now);  // nothing to share
}

std::optional<SimTime> Network::next_completion() {
  drop_stale_finishes();
  if (finishes_.empty()) return std::nullopt;
  return finishes_.top_time();
}

void Network::drop_stale_finishes() {
  while (!finishes_.empty()) {
    const Flow& f = flows_[finishes_.top_slot()];
    if (f.alive && f.finish == finishes_.top_time()) return;
    finishes_.pop();
  }
}

void Network::rebuild_finishes() {
  finishes_.clear();
  for (std::uint32_t slot = 0; slot < flows_.size(); ++slot)
    if (flows_[slot].alive && flows_[slot].rate > 0.0) finishes_.push(flows_[slot].finish, slot);
}

void Network::take_completed(SimTime now, std::vector<std::uint32_t>& tags) {
  for (drop_stale_finishes(); !finishes_.empty() && finishes_.top_time() == now;
       drop_stale_finishes()) {
    const std::uint32_t slot = finishes_.pop();
    Flow& f = flows_[slot];
    if (audit_) {
      // Sent = delivered: what is left must be no more than rounding up to a picosecond.
      const double left = f.remaining - f.rate * ((static_cast<double>(now) - f.last_ps) / kPsPerSecond);
      if (std::fabs(left) > 1e-9 * f.bytes + f.rate * 1.01e-12 + 1e-9)
        throw std::logic_error(fmt::format("flow {} finished with {} of {} bytes undelivered",
                                           f.tag, left, f.bytes));
    }
    f.alive = false;
    f.unswept = f.route_len;
    --active_;
    for (const LinkId l : f.links()) {
      Link& link = links_[l];
      link.carried += f.bytes;
      if (window_ > 0) {  // the window's bookkeeping; exact runs do without it
        link.load -= f.rate;
        link.freed += f.rate;
      }
      if (audit_) link.audit_tolerance += 1e-9 * f.bytes + 2.02e-12 * link.capacity;
      if (--link.active == 0) {
        link.busy += now - link.busy_since;
        link.load = 0.0;  // no rounding left behind
      }
      queue_seed(l);
    }
    tags.push_back(f.tag);
  }
}

void Network::set_window(std::size_t flows, double slack) {
  if (!(slack >= 0.0 && slack < 1.0)) throw std::invalid_argument(fmt::format("window slack must be in [0, 1), got {}", slack));
  // The window's per-link bookkeeping (load, freed) is kept only while it is on.
  if (active_ > 0 && (flows > 0) != (window_ > 0))
    throw std::logic_error("set_window: turn the window on or off before the first flow");
  window_ = flows;
  slack_ = slack;
  if (finishes_.empty()) finishes_.use_heap(flows > 0);
}

void Network::reshare(SimTime now) {
  if (++epoch_ == 0) {  // wrapped: forget old marks
    for (Link& l : links_) l.mark = l.big = 0;
    for (Flow& f : flows_) f.mark = 0;
    epoch_ = 1;
  }
  ++reshares_;
  // A component is giant when a search from a seed reads more than two windows' worth of
  // link entries; a link found in one is taken as giant, unsearched, for the next
  // kGiantMemory reshares (searching each time would cost what the window saves).
  constexpr std::uint32_t kGiantMemory = 1024;
  const bool windowed = window_ > 0 && active_ > window_;
  const std::size_t max_visits = windowed ? 2 * window_ : std::numeric_limits<std::size_t>::max();
  for (const LinkId seed : seeds_) {
    Link& link = links_[seed];
    link.queued = false;
    if (link.mark == epoch_) {
      if (link.big == epoch_) big_seeds_.push_back(seed);
      continue;
    }
    if (windowed && link.big_until > reshares_) {
      big_seeds_.push_back(seed);
      continue;
    }
    if (link.active <= 1 && solve_alone(seed, now)) continue;
    if (collect_component(seed, max_visits)) {
      if (!comp_flows_.empty()) solve_component(now);
      continue;
    }
    for (const LinkId l : comp_links_) {
      links_[l].big = epoch_;
      links_[l].big_until = reshares_ + kGiantMemory;
    }
    big_seeds_.push_back(seed);
  }
  seeds_.clear();
  if (!big_seeds_.empty()) reshare_window(now);
  big_seeds_.clear();
  if (finishes_.size() > 2 * active_ + 1024) rebuild_finishes();
}

// The common cases, without the search: a seed link with no live flow (only its dead to
// sweep), or with one flow that is alone on every one of its links (a component of one:
// its slowest link or its cap, as solve_component would give it). False: search.
bool Network::solve_alone(LinkId seed, SimTime now) {
  Link& link = links_[seed];
  if (link.active == 0) {
    sweep(link.flows);
    link.mark = epoch_;
    link.seeded = false;
    link.freed = 0.0;
    return true;
  }
  sweep(link.flows);
  const std::uint32_t slot = link.flows.front();
  Flow& f = flows_[slot];
  for (const LinkId l : f.links())
    if (links_[l].active != 1 || links_[l].mark == epoch_) return false;
  double rate = f.cap;
  for (const LinkId l : f.links()) {
    Link& on = links_[l];
    if (l != seed) sweep(on.flows);
    on.mark = epoch_;
    on.seeded = false;
    on.freed = 0.0;
    rate = std::min(rate, on.capacity);
  }
  f.mark = epoch_;
  ++components_solved_;
  ++flows_resolved_;
  set_rate(slot, rate, now);
  return true;
}

// Drops dead flows from a link's list; a dead flow's slot is free once no list holds it.
void Network::sweep(std::vector<std::uint32_t>& on_link) {
  std::size_t kept = 0;
  for (const std::uint32_t slot : on_link) {
    Flow& f = flows_[slot];
    if (f.alive) on_link[kept++] = slot;
    else if (--f.unswept == 0) free_.push_back(slot);
  }
  on_link.resize(kept);
}

// Breadth-first over links and flows from `seed`, sweeping dead flows out of link lists.
// Gives up (false) once it has read more than max_visits link entries: a giant component.
bool Network::collect_component(LinkId seed, std::size_t max_visits) {
  comp_links_.clear();
  comp_flows_.clear();
  links_[seed].mark = epoch_;
  links_[seed].local = 0;
  comp_links_.push_back(seed);
  std::size_t visits = 0;
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    std::vector<std::uint32_t>& on_link = links_[comp_links_[i]].flows;
    sweep(on_link);
    visits += on_link.size();
    if (visits > max_visits) return false;
    for (const std::uint32_t slot : on_link) {
      Flow& f = flows_[slot];
      if (f.mark == epoch_) {
        // Seen by this search, or by one that gave up on this same giant component.
        if (f.local < comp_flows_.size() && comp_flows_[f.local] == slot) continue;
        return false;
      }
      f.mark = epoch_;
      f.local = static_cast<std::uint32_t>(comp_flows_.size());
      comp_flows_.push_back(slot);
      for (const LinkId l : f.links()) {
        Link& link = links_[l];
        if (link.mark == epoch_) {
          if (link.local < comp_links_.size() && comp_links_[link.local] == l) continue;
          return false;
        }
        link.mark = epoch_;
        link.local = static_cast<std::uint32_t>(comp_links_.size());
        comp_links_.push_back(l);
      }
    }
  }
  return true;
}

void Network::solve_component(SimTime now) {
  ++components_solved_;
  flows_resolved_ += comp_flows_.size();
  if (window_ > 0)
    for (const LinkId l : comp_links_) {
      links_[l].seeded = false;
      links_[l].freed = 0.0;
    }
  if (comp_flows_.size() == 1) {  // alone: its slowest link or its cap
    const std::uint32_t slot = comp_flows_[0];
    double rate = flows_[slot].cap;
    for (const LinkId l : flows_[slot].links()) rate = std::min(rate, links_[l].capacity);
    set_rate(slot, rate, now);
    return;
  }
  comp_capacity_.resize(comp_links_.size());
  for (std::size_t i = 0; i < comp_links_.size(); ++i)
    comp_capacity_[i] = links_[comp_links_[i]].capacity;
  // Offsets first, so that the routes are written in place; caps only if some flow has one.
  comp_offsets_.resize(comp_flows_.size() + 1);
  comp_offsets_[0] = 0;
  bool capped = false;
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    const Flow& f = flows_[comp_flows_[i]];
    comp_offsets_[i + 1] = comp_offsets_[i] + f.route_len;
    capped = capped || f.cap < kNoCap;
  }
  comp_route_.resize(comp_offsets_.back());
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    const Flow& f = flows_[comp_flows_[i]];
    std::uint32_t* to = comp_route_.data() + comp_offsets_[i];
    for (const LinkId l : f.links()) *to++ = links_[l].local;
  }
  comp_cap_.clear();
  if (capped)
    for (const std::uint32_t slot : comp_flows_) comp_cap_.push_back(flows_[slot].cap);
  comp_rates_.resize(comp_flows_.size());
  solver_.solve({comp_capacity_, comp_offsets_, comp_route_, comp_cap_}, comp_rates_);
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) set_rate(comp_flows_[i], comp_rates_[i], now);
}

// Gives a flow its new rate: bank the bytes sent at the old rate, then predict its end.
void Network::set_rate(std::uint32_t slot, double rate, SimTime now) {
  Flow& f = flows_[slot];
  if (rate == f.rate) return;  // same rate, same predicted end: nothing to redo
  if (!(rate > 0.0) || !std::isfinite(rate))
    throw std::logic_error(fmt::format("flow {} was given rate {} B/s", f.tag, rate));
  if (f.rate > 0.0) {
    const double now_ps = static_cast<double>(now);
    f.remaining = std::max(0.0, f.remaining - f.rate * ((now_ps - f.last_ps) / kPsPerSecond));
    f.last_ps = now_ps;
  }
  if (window_ > 0)
    for (const LinkId l : f.links()) links_[l].load += rate - f.rate;
  f.rate = rate;
  // The bytes left are never below one rounding step's worth when this runs, but clamp
  // anyway: a flow must finish after the instant being processed.
  f.finish = std::max(now + 1, ceil_ps(f.last_ps + f.remaining / rate * kPsPerSecond));
  finishes_.push(f.finish, slot);
}

std::optional<double> Network::rate_of(std::uint32_t tag) const {
  for (const Flow& f : flows_)
    if (f.alive && f.tag == tag) return f.rate;
  return std::nullopt;
}

void Network::audit_advance(SimTime now) {
  const double seconds = static_cast<double>(now - audit_time_) / kPsPerSecond;
  for (const Flow& f : flows_) {
    if (!f.alive) continue;
    for (const LinkId l : f.links()) links_[l].audit_bytes += f.rate * seconds;
  }
  audit_time_ = now;
}

void Network::audit_sharing() const {
  std::vector<double> load(links_.size(), 0.0), top(links_.size(), 0.0);
  for (const Flow& f : flows_) {
    if (!f.alive) continue;
    if (!(f.rate > 0.0)) throw std::logic_error(fmt::format("flow {} has no rate", f.tag));
    if (f.rate > f.cap * (1 + 1e-12))
      throw std::logic_error(fmt::format("flow {} exceeds its cap: {} > {} B/s", f.tag, f.rate, f.cap));
    for (const LinkId l : f.links()) {
      load[l] += f.rate;
      top[l] = std::max(top[l], f.rate);
    }
  }
  constexpr double kTol = 1e-9;
  for (std::size_t l = 0; l < links_.size(); ++l)
    if (load[l] > links_[l].capacity * (1 + kTol))
      throw std::logic_error(fmt::format("link {} carries {} B/s over its capacity {} B/s", l,
                                         load[l], links_[l].capacity));
  // Max-min fair iff every flow has a bottleneck: its cap, or a full link on which no flow
  // gets more than it does. (Local re-shares are feasible, not max-min: not checked.)
  if (approximate()) return;
  for (const Flow& f : flows_) {
    if (!f.alive || f.rate >= f.cap * (1 - kTol)) continue;
    const bool bottlenecked = std::any_of(f.route, f.route + f.route_len, [&](LinkId l) {
      return load[l] >= links_[l].capacity * (1 - kTol) && f.rate >= top[l] * (1 - kTol);
    });
    if (!bottlenecked)
      throw std::logic_error(fmt::format(
          "flow {} at {} B/s is not max-min fair: no full link where it gets the most", f.tag,
          f.rate));
  }
}

void Network::audit_finish() const {
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const Link& link = links_[l];
    if (std::fabs(link.audit_bytes - link.carried) > link.audit_tolerance + 1e-6)
      throw std::logic_error(fmt::format("link {}: rates integrate to {} bytes but flows carried {}",
                                         l, link.audit_bytes, link.carried));
  }
}

}  // namespace wiresim::sim
