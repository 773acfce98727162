#include "topologies/fabric.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace wiresim::topo {
namespace {

struct Cable {
  sim::BytesPerSec bandwidth;
  sim::Seconds latency;
};

Cable parse_cable(const Value& v, const std::string& path) {
  require_map(v, path);
  static constexpr std::array<std::string_view, 2> kKeys = {"bandwidth", "latency"};
  check_keys(v, kKeys, path);
  return {as_rate(require(v, "bandwidth", path), join_path(path, "bandwidth")),
          as_time(require(v, "latency", path), join_path(path, "latency"))};
}

double parse_ratio(const Value& v, const std::string& path) {
  // "2:1" or a plain number 2.
  if (v.kind == Value::Kind::scalar) {
    const auto colon = v.text.find(':');
    if (colon != std::string::npos) {
      Value a = v, b = v;
      a.text = v.text.substr(0, colon);
      b.text = v.text.substr(colon + 1);
      const double down = as_number(a, path), up = as_number(b, path);
      if (down > 0 && up > 0) return down / up;
    } else {
      const double r = as_number(v, path);
      if (r > 0) return r;
    }
  }
  fail(v, fmt::format("{}: expected a ratio of down to up ports such as 1, 2 or \"2:1\", got '{}'",
                      path, v.text));
}

}  // namespace

FabricSpec parse_fabric(const Value& fabric, const std::string& path) {
  require_map(fabric, path);
  static constexpr std::array<std::string_view, 8> kKeys = {
      "topology", "tier", "nic", "leaf_radix", "oversubscription", "spines", "nic_link", "uplink"};
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
  if (const Value* r = find(fabric, "leaf_radix"))
    spec.leaf_radix = as_count(*r, join_path(path, "leaf_radix"), 2, 100'000);
  if (const Value* o = find(fabric, "oversubscription"))
    spec.oversubscription = parse_ratio(*o, join_path(path, "oversubscription"));
  if (const Value* s = find(fabric, "spines"); s && s->text != "auto") {
    spec.spines = as_count(*s, join_path(path, "spines"), 1, 100'000);
    spec.spines_at = s->at;
  }
  const Cable nic = parse_cable(require(fabric, "nic_link", path), join_path(path, "nic_link"));
  spec.nic_bandwidth = nic.bandwidth;
  spec.nic_latency = nic.latency;
  const Cable up = parse_cable(require(fabric, "uplink", path), join_path(path, "uplink"));
  spec.uplink_bandwidth = up.bandwidth;
  spec.uplink_latency = up.latency;
  return spec;
}

void build_fabric(const FabricSpec& spec, LinkGraph& graph,
                  const std::vector<std::vector<DeviceId>>& nics) {
  const long nodes = static_cast<long>(nics.size());
  const long rails = nics.empty() ? 0 : static_cast<long>(nics.front().size());
  const double o = spec.oversubscription;
  const long down = std::max(1L, static_cast<long>(std::floor(spec.leaf_radix * o / (o + 1.0))));
  const long up = std::max(1L, static_cast<long>(std::ceil(static_cast<double>(down) / o)));
  const bool by_rail = spec.layout == FabricSpec::Layout::rail_optimized;
  const long leaves_per_rail = (nodes + down - 1) / down;
  const long leaves = by_rail ? rails * leaves_per_rail : (nodes * rails + down - 1) / down;

  std::vector<DeviceId> leaf_ids;
  for (long k = 0; k < leaves; ++k) {
    Device d;
    d.name = fmt::format("leaf{}", k);
    d.kind = DeviceKind::network_switch;
    d.node = -1;
    d.rail = by_rail ? static_cast<int>(k / leaves_per_rail) : -1;
    leaf_ids.push_back(graph.add_device(d));
  }
  for (long n = 0; n < nodes; ++n) {
    for (long r = 0; r < rails; ++r) {
      const long leaf = by_rail ? r * leaves_per_rail + n / down : (n * rails + r) / down;
      graph.add_duplex(Link{nics[n][r], leaf_ids[leaf], spec.tier, 1, spec.nic_bandwidth,
                            spec.nic_latency});
    }
  }
  if (leaves < 2) return;  // one leaf joins everything

  const long spines = spec.spines.value_or(up);
  if (spines > up)
    fail(spec.spines_at, fmt::format("fabric.spines: each leaf has {} uplinks (radix {}, "
                                     "oversubscription {}), so at most {} spines, got {}",
                                     up, spec.leaf_radix, o, up, spines));
  std::vector<DeviceId> spine_ids;
  for (long s = 0; s < spines; ++s) {
    Device d;
    d.name = fmt::format("spine{}", s);
    d.kind = DeviceKind::network_switch;
    d.node = -1;
    spine_ids.push_back(graph.add_device(d));
  }
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
