#include "models/sharp.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/machine.h"

namespace wiresim::models {

bool SharpTree::two_levels() const {
  return std::any_of(to_spine.begin(), to_spine.end(), [](const auto& v) { return !v.empty(); });
}

std::optional<std::string> sharp_tree(const Machine& m, const Problem& problem, const NodeGroups& by_node,
                                      std::string_view algorithm, SharpTree* out) {
  const int nodes = static_cast<int>(by_node.size());
  const int heads = static_cast<int>(by_node.front().size());
  SharpTree r;
  r.up.assign(nodes, std::vector<std::vector<sim::LinkId>>(heads));
  r.down = r.up;
  r.leaf_of.assign(heads, std::vector<int>(nodes, 0));
  r.leaves.assign(heads, {});
  r.to_spine.assign(heads, {});
  const auto& g = m.graph();
  const auto is_switch = [&](topo::DeviceId d) { return g.device(d).kind == topo::DeviceKind::network_switch; };
  const auto no_sharp = [&](topo::DeviceId sw) {
    return fmt::format("{} needs in-network reduction (fabric: {{sharp: true}}), and {} has none", algorithm,
                       g.device(sw).name);
  };
  for (int h = 0; h < heads; ++h) {
    for (int i = 0; i < nodes; ++i) {
      const topo::DeviceId self = problem.ranks[by_node[i][h]];
      const topo::DeviceId other = problem.ranks[by_node[i == 0 ? 1 : 0][h]];
      const auto there = m.route(self, other, 0), back = m.route(other, self, 0);
      const auto top = std::find_if(there.begin(), there.end(), [&](sim::LinkId l) { return is_switch(g.link(l).to); });
      if (top == there.end())
        return fmt::format("{} needs a network switch between nodes, and {} reaches {} without one", algorithm,
                           g.device(self).name, g.device(other).name);
      const topo::DeviceId leaf = g.link(*top).to;
      if (!g.device(leaf).multicast) return no_sharp(leaf);
      auto& known = r.leaves[h];
      const auto at = std::find(known.begin(), known.end(), leaf);
      r.leaf_of[h][i] = static_cast<int>(at - known.begin());
      if (at == known.end()) known.push_back(leaf);
      r.up[i][h].assign(there.begin(), top + 1);
      const auto from = std::find_if(back.begin(), back.end(), [&](sim::LinkId l) { return g.link(l).from == leaf; });
      r.down[i][h].assign(from, back.end());
    }
    if (r.leaves[h].size() < 2) continue;
    // The spine: where the way from a node of the first leaf to one of the second turns down.
    const auto second = std::find(r.leaf_of[h].begin(), r.leaf_of[h].end(), 1) - r.leaf_of[h].begin();
    const auto across = m.route(problem.ranks[by_node[0][h]], problem.ranks[by_node[second][h]], 0);
    const auto up = std::find_if(across.begin(), across.end(), [&](sim::LinkId l) {
      return g.link(l).from == r.leaves[h][0] && is_switch(g.link(l).to);
    });
    if (up == across.end())
      return fmt::format("{} found no switch above {}", algorithm, g.device(r.leaves[h][0]).name);
    const topo::DeviceId spine = g.link(*up).to;
    if (!g.device(spine).multicast) return no_sharp(spine);
    const auto cable = [&](topo::DeviceId a, topo::DeviceId b) -> std::optional<sim::LinkId> {
      for (const auto l : g.out_links(a))
        if (g.link(l).to == b) return l;
      return std::nullopt;
    };
    for (const topo::DeviceId leaf : r.leaves[h]) {
      const auto u = cable(leaf, spine), d = cable(spine, leaf);
      if (!u || !d)
        return fmt::format("{} reduces over one spine per rail, and {} has no cable to {} (a deeper SHARP tree is "
                           "not modelled)",
                           algorithm, g.device(leaf).name, g.device(spine).name);
      r.to_spine[h].push_back({*u, *d});
    }
  }
  if (out) *out = std::move(r);
  return std::nullopt;
}

SharpStage::SharpStage(PlanBuilder& b, const SharpTree& tree, const NodeGroups& by_node, sim::Seconds step,
                       std::string_view algorithm)
    : b_(b), tree_(tree), by_node_(by_node), step_(step),
      up_label_(b.label(fmt::format("{} up (to switch)", algorithm))),
      switch_label_(b.label(fmt::format("{} switch reduction", algorithm))),
      down_label_(b.label(fmt::format("{} down (from switch)", algorithm))) {
  const std::size_t heads = tree.leaves.size();
  prev_up_.assign(by_node.size(), std::vector<sim::NodeId>(heads, b.launch()));
  prev_down_ = prev_up_;
  for (std::size_t h = 0; h < heads; ++h) {
    prev_spine_up_.emplace_back(tree.to_spine[h].size(), b.launch());
    prev_spine_down_.emplace_back(tree.to_spine[h].size(), b.launch());
  }
}

std::vector<sim::NodeId> SharpStage::reduce(int h, sim::Bytes c, const std::vector<sim::NodeId>& ready) {
  const Machine& m = b_.machine();
  const int nodes = static_cast<int>(by_node_.size());
  const auto none = sim::BytesPerSec::unlimited();
  const int track = by_node_[0][h];
  // The sum: at the leaf, or at the spine over the leaves' sums.
  const sim::NodeId reduced = b_.delay(step_, {}, switch_label_, track);
  const int leaves = static_cast<int>(tree_.to_spine[h].size());
  std::vector<sim::NodeId> joined(std::max(leaves, 1), reduced);
  if (leaves > 0)
    for (int q = 0; q < leaves; ++q) joined[q] = b_.delay(sim::Seconds{0.0}, {}, up_label_, track);
  for (int i = 0; i < nodes; ++i) {
    const int head = by_node_[i][h];
    const auto& links = tree_.up[i][h];
    const auto up = b_.send_links(links, head, head, c, {ready[i], prev_up_[i][h]}, m.wire_latency(links), up_label_, none);
    prev_up_[i][h] = up.transfer;
    b_.depend(up.arrival, joined[leaves > 0 ? tree_.leaf_of[h][i] : 0]);
  }
  std::vector<sim::NodeId> at_leaf(std::max(leaves, 1), reduced);
  for (int q = 0; q < leaves; ++q) {
    const sim::LinkId link = tree_.to_spine[h][q].first;
    const auto up = b_.send_links({&link, 1}, track, track, c, {joined[q], prev_spine_up_[h][q]},
                                  m.links()[link].latency, up_label_, none);
    prev_spine_up_[h][q] = up.transfer;
    b_.depend(up.arrival, reduced);
  }
  for (int q = 0; q < leaves; ++q) {
    const sim::LinkId link = tree_.to_spine[h][q].second;
    const auto down = b_.send_links({&link, 1}, track, track, c, {reduced, prev_spine_down_[h][q]},
                                    m.links()[link].latency, down_label_, none);
    prev_spine_down_[h][q] = down.transfer;
    at_leaf[q] = down.arrival;
  }
  std::vector<sim::NodeId> back(nodes);
  for (int i = 0; i < nodes; ++i) {
    const int head = by_node_[i][h];
    const auto& links = tree_.down[i][h];
    const auto down = b_.send_links(links, head, head, c, {at_leaf[leaves > 0 ? tree_.leaf_of[h][i] : 0], prev_down_[i][h]},
                                    m.wire_latency(links), down_label_, none);
    prev_down_[i][h] = down.transfer;
    back[i] = down.arrival;
  }
  return back;
}

SharpTimes sharp_times(const PlanBuilder& b, const SharpTree& tree, double bytes) {
  const Machine& m = b.machine();
  const double payload = b.protocol().payload;
  double nic = 0.0, wire = 0.0, spine = 0.0, spine_wire = 0.0;
  for (std::size_t i = 0; i < tree.up.size(); ++i)
    for (std::size_t h = 0; h < tree.up[i].size(); ++h) {
      double rate = INFINITY;
      for (auto l : tree.up[i][h]) rate = std::min(rate, m.links()[l].capacity.count());
      for (auto l : tree.down[i][h]) rate = std::min(rate, m.links()[l].capacity.count());
      nic = std::max(nic, bytes / (rate * payload));
      wire = std::max(wire, (m.wire_latency(tree.up[i][h]) + m.wire_latency(tree.down[i][h])).count());
    }
  for (const auto& cables : tree.to_spine)
    for (const auto& [up, down] : cables) {
      const double rate = std::min(m.links()[up].capacity.count(), m.links()[down].capacity.count());
      spine = std::max(spine, bytes / (rate * payload));
      spine_wire = std::max(spine_wire, (m.links()[up].latency + m.links()[down].latency).count());
    }
  return {std::max(nic, spine), 2.0 * (nic + spine) + wire + spine_wire};
}

}  // namespace wiresim::models
