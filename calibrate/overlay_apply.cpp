// apply_overlay and overlay_from_fits: the two directions between fits, overlays and links.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "calibrate/overlay.h"
#include "calibrate/probe_format.h"

namespace wiresim::calibrate {
namespace {

bool is_endpoint(topo::DeviceKind kind) {
  return kind == topo::DeviceKind::gpu || kind == topo::DeviceKind::cpu || kind == topo::DeviceKind::nic;
}

// Links of the tier one transfer crosses: 1 where the tier joins endpoints directly, else 2
// (in through a switch, out again). Deeper fabrics are not resolved here.
int hops(const topo::LinkGraph& g, const std::vector<sim::LinkId>& links) {
  for (sim::LinkId id : links) {
    const topo::Link& l = g.link(id);
    if (is_endpoint(g.device(l.from).kind) && is_endpoint(g.device(l.to).kind)) return 1;
  }
  return 2;
}

}  // namespace

std::vector<AppliedTier> apply_overlay(topo::LinkGraph& g, const Overlay& overlay) {
  std::vector<AppliedTier> applied;
  for (const auto& [tier, t] : overlay.tiers) {
    std::vector<sim::LinkId> links;
    double narrowest = std::numeric_limits<double>::infinity();
    for (sim::LinkId id = 0; id < g.link_count(); ++id) {
      if (g.link(id).tier != tier) continue;
      links.push_back(id);
      narrowest = std::min(narrowest, g.link(id).bandwidth.count());
    }
    AppliedTier a;
    a.tier = tier;
    a.links = static_cast<int>(links.size());
    if (links.empty()) {
      applied.push_back(a);
      continue;
    }
    if (t.efficiency) a.efficiency = *t.efficiency;
    if (t.bandwidth) a.efficiency = t.bandwidth->count() / narrowest;
    if (t.latency) a.link_latency = *t.latency / hops(g, links);
    for (sim::LinkId id : links) {
      const topo::Link& l = g.link(id);
      g.set_link_parameters(id, l.bandwidth * a.efficiency, a.link_latency.value_or(l.latency));
    }
    applied.push_back(a);
  }
  return applied;
}

Overlay overlay_from_fits(const std::vector<GroupFit>& fits) {
  Overlay o;
  // Launch α, to take software overhead out of kernel-measured latencies.
  std::optional<sim::Seconds> launch;
  for (const GroupFit& f : fits)
    if (f.group.kind == kKindLaunch) launch = f.fit.alpha;
  std::map<topo::Tier, const GroupFit*> best;  // highest β per tier among link measurements
  std::map<topo::Tier, sim::Seconds> kernel_latency;
  for (const GroupFit& f : fits) {
    // A collective's bus bandwidth is what the whole algorithm achieved, not one link's rate:
    // it is reported, never written into a tier (model parameters come from fit --topo).
    if (f.group.collective) {
      o.collectives.push_back({*f.group.collective, f.group.ranks, f.fit.alpha, f.fit.beta, f.group.source});
      continue;
    }
    const auto tier = topo::tier_from_string(f.group.tier);
    if (!tier || !f.fit.beta_identifiable || f.fit.beta.is_unlimited()) continue;
    const GroupFit*& b = best[*tier];
    if (!b || f.fit.beta > b->fit.beta) b = &f;
    const bool kernel = f.group.kind == kKindP2pLoad || f.group.kind == kKindP2pStore;
    if (kernel && launch && f.fit.alpha_identifiable && f.fit.alpha > *launch) {
      const sim::Seconds wire = f.fit.alpha - *launch;
      auto it = kernel_latency.find(*tier);
      if (it == kernel_latency.end() || wire < it->second) kernel_latency[*tier] = wire;
    }
  }
  for (const auto& [tier, f] : best) {
    TierOverlay t;
    t.bandwidth = f->fit.beta;
    t.note = fmt::format("β from {} ({} points, rms residual {:.1f}%)", f->group.label, f->group.points.size(),
                         100 * f->fit.rms_residual);
    if (auto it = kernel_latency.find(tier); it != kernel_latency.end()) {
      t.latency = it->second;
      t.note += "; latency = peer kernel α less launch α";
    }
    o.tiers[tier] = t;
  }
  return o;
}

}  // namespace wiresim::calibrate
