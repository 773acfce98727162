#include "topologies/fabric.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "input/keys.h"
#include "input/units.h"
#include "topologies/plausibility.h"

namespace wiresim::topo {
namespace {

using input::join_path;
using input::suggest;
using input::Value;

struct Cable {
  sim::BytesPerSec bandwidth;
  sim::Seconds latency;
};

Cable parse_cable(const Value& v, const std::string& path, std::vector<std::string>& warnings) {
  require_map(v, path);
  static constexpr std::array<std::string_view, 2> kKeys = {"bandwidth", "latency"};
  check_keys(v, kKeys, path);
  const Value& bandwidth = require(v, "bandwidth", path);
  const Cable cable{as_rate(bandwidth, join_path(path, "bandwidth")),
                    as_time(require(v, "latency", path), join_path(path, "latency"))};
  if (const auto w = network_rate_warning(cable.bandwidth))
    warnings.push_back(fmt::format("{}: warning: {}.bandwidth: {}", input::where(bandwidth.at), path, *w));
  return cable;
}

double parse_ratio(const Value& v, const std::string& path) {
  // "2:1" or a plain number 2.
  const auto number = [](const std::string& s) {
    double x = 0.0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    return ec == std::errc{} && ptr == s.data() + s.size() && x > 0 && x < 1e6 ? x : 0.0;
  };
  if (v.kind == Value::Kind::scalar) {
    const auto colon = v.text.find(':');
    const double down = number(v.text.substr(0, colon));
    const double up = colon == std::string::npos ? 1.0 : number(v.text.substr(colon + 1));
    if (down > 0 && up > 0) return down / up;
  }
  fail(v, fmt::format("{}: expected a ratio of down to up ports such as 1, 2 or \"2:1\", got '{}'",
                      path, v.text));
}

// A fabric switch: in no node, on `rail` (-1: every rail).
DeviceId add_switch(LinkGraph& graph, std::string name, int rail, bool sharp) {
  Device d;
  d.multicast = sharp;
  d.name = std::move(name);
  d.kind = DeviceKind::network_switch;
  d.node = -1;
  d.rail = rail;
  return graph.add_device(std::move(d));
}

}  // namespace

FabricSpec parse_fabric(const Value& fabric, const std::string& path, std::vector<std::string>& warnings) {
  require_map(fabric, path);
  static constexpr std::array<std::string_view, 10> kKeys = {
      "topology", "tier",   "nic",      "rails", "leaf_radix", "oversubscription",
      "spines",   "nic_link", "uplink", "sharp"};
  check_keys(fabric, kKeys, path);
  FabricSpec spec;
  const Value& layout = require(fabric, "topology", path);
  const std::string name = as_string(layout, join_path(path, "topology"));
  if (name == "rail_optimized") spec.layout = FabricSpec::Layout::rail_optimized;
  else if (name == "fat_tree") spec.layout = FabricSpec::Layout::fat_tree;
  else {
    static constexpr std::array<std::string_view, 2> kLayouts = {"rail_optimized", "fat_tree"};
    fail(layout, fmt::format("{}.topology: unknown '{}'; {}", path, name, suggest(name, kLayouts)));
  }
  const Value& tier = require(fabric, "tier", path);
  const auto t = tier_from_string(as_string(tier, join_path(path, "tier")));
  if (!t || !is_network_tier(*t)) {
    static constexpr std::array<std::string_view, 3> kTiers = {"ib", "roce", "eth"};
    fail(tier, fmt::format("{}.tier: expected a network tier; {}", path, suggest(tier.text, kTiers)));
  }
  spec.tier = *t;
  if (const Value* nic = find(fabric, "nic")) {
    spec.nic_group = as_string(*nic, join_path(path, "nic"));
    spec.nic_group_at = nic->at;
  } else {
    spec.nic_group_at = fabric.at;
  }
  if (const Value* r = find(fabric, "rails"); r && r->text != "auto") {
    spec.rails = as_count(*r, join_path(path, "rails"), 1, 100'000);
    spec.rails_at = r->at;
  }
  if (const Value* r = find(fabric, "leaf_radix"))
    spec.leaf_radix = as_count(*r, join_path(path, "leaf_radix"), 2, 100'000);
  if (const Value* o = find(fabric, "oversubscription"))
    spec.oversubscription = parse_ratio(*o, join_path(path, "oversubscription"));
  if (const Value* s = find(fabric, "spines"); s && s->text != "auto") {
    spec.spines = as_count(*s, join_path(path, "spines"), 1, 100'000);
    spec.spines_at = s->at;
    spec.spines_via = s->via;
  }
  const Cable nic = parse_cable(require(fabric, "nic_link", path), join_path(path, "nic_link"), warnings);
  spec.nic_bandwidth = nic.bandwidth;
  spec.nic_latency = nic.latency;
  const Cable up = parse_cable(require(fabric, "uplink", path), join_path(path, "uplink"), warnings);
  spec.uplink_bandwidth = up.bandwidth;
  spec.uplink_latency = up.latency;
  if (const Value* sharp = find(fabric, "sharp")) {
    spec.sharp = as_bool(*sharp, join_path(path, "sharp"));
    // SHARP is InfiniBand's (Quantum switches); on another tier it is a what-if, kept as asked.
    if (spec.sharp && spec.tier != Tier::ib)
      warnings.push_back(fmt::format("{}: warning: {}.sharp: in-network reduction (SHARP) is an InfiniBand switch "
                                     "feature, and this fabric is {}; modelled as asked",
                                     input::where(sharp->at), path, to_string(spec.tier)));
  }
  return spec;
}

long fabric_rails(const FabricSpec& spec, long nics_per_node) {
  if (spec.layout != FabricSpec::Layout::rail_optimized) return 1;
  const long rails = spec.rails.value_or(nics_per_node);
  if (rails > nics_per_node || nics_per_node % rails != 0)
    fail(spec.rails_at, fmt::format("fabric.rails: a node has {} NICs; expected a number of rails "
                                    "that divides it, got {}", nics_per_node, rails));
  return rails;
}

void build_fabric(const FabricSpec& spec, LinkGraph& graph,
                  const std::vector<std::vector<DeviceId>>& nics) {
  const long nodes = static_cast<long>(nics.size());
  const long per_node = nics.empty() ? 0 : static_cast<long>(nics.front().size());
  const double o = spec.oversubscription;
  const long down = std::max(1L, static_cast<long>(std::floor(spec.leaf_radix * o / (o + 1.0))));
  const long up = std::max(1L, static_cast<long>(std::ceil(static_cast<double>(down) / o)));
  const bool by_rail = spec.layout == FabricSpec::Layout::rail_optimized;
  const long rails = fabric_rails(spec, per_node);
  const long ports_per_rail = nodes * (per_node / rails);
  const long leaves_per_rail = (ports_per_rail + down - 1) / down;
  const long leaves = by_rail ? rails * leaves_per_rail : (nodes * per_node + down - 1) / down;

  std::vector<DeviceId> leaf_ids;
  for (long k = 0; k < leaves; ++k)
    leaf_ids.push_back(add_switch(graph, fmt::format("leaf{}", k), by_rail ? static_cast<int>(k / leaves_per_rail) : -1,
                                      spec.sharp));
  for (long n = 0; n < nodes; ++n) {
    for (long i = 0; i < per_node; ++i) {
      // Rail r's ports, node by node, fill its leaves in order.
      const long port_in_rail = n * (per_node / rails) + i / rails;
      const long leaf = by_rail ? (i % rails) * leaves_per_rail + port_in_rail / down
                                : (n * per_node + i) / down;
      graph.add_duplex(Link{nics[n][i], leaf_ids[leaf], spec.tier, 1, spec.nic_bandwidth,
                            spec.nic_latency});
    }
  }
  if (leaves < 2) return;  // one leaf joins everything

  const long spines = spec.spines.value_or(up);
  if (spines > up)
    fail(spec.spines_at, fmt::format("fabric.spines: each leaf has {} uplinks (radix {}, "
                                     "oversubscription {}), so at most {} spines, got {}",
                                     up, spec.leaf_radix, o, up, spines), spec.spines_via);
  std::vector<DeviceId> spine_ids;
  for (long s = 0; s < spines; ++s) spine_ids.push_back(add_switch(graph, fmt::format("spine{}", s), -1, spec.sharp));
  for (DeviceId leaf : leaf_ids) {
    for (long s = 0; s < spines; ++s) {
      // up cables spread as evenly as they go: the first up % spines spines get one more.
      const int cables = static_cast<int>(up / spines + (s < up % spines ? 1 : 0));
      graph.add_duplex(Link{leaf, spine_ids[s], spec.tier, cables, spec.uplink_bandwidth * cables,
                            spec.uplink_latency});
    }
  }
}

}  // namespace wiresim::topo
