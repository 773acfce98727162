// In-network reduction (InfiniBand SHARP; topologies: `fabric: {sharp: true}`), the network
// part of the algorithms that use it (collnet; nvls across nodes). Each node's head h (its h-th
// GPU) sends its part of a chunk up its NIC to its leaf switch; the leaf reduces the parts of
// its nodes; where a rail's nodes hang off several leaves, each leaf sends its sum up one cable
// to a spine (the first on the way from the first leaf to the second), which reduces those; the
// sum comes back down the same way to every head. The reduction costs the algorithm's NET step
// latency once per chunk, pipelined. Deeper fabrics are refused.
//
//   SharpTree tree;
//   if (auto why = sharp_tree(machine, problem, by_node, "collnet", &tree)) return why;
//   SharpStage net(b, tree, by_node, step, "collnet");
//   const auto back = net.reduce(h, chunk, ready);   // per node: the sum is in head h
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/algorithm.h"
#include "models/plan.h"

namespace wiresim::models {

struct SharpTree {
  std::vector<std::vector<std::vector<sim::LinkId>>> up, down;              // [node][head]: to and from the leaf
  std::vector<std::vector<int>> leaf_of;                                     // [head][node]: index into leaves[head]
  std::vector<std::vector<topo::DeviceId>> leaves;                           // [head]
  std::vector<std::vector<std::pair<sim::LinkId, sim::LinkId>>> to_spine;   // [head][leaf]: up, down; empty: one leaf
  bool two_levels() const;
};

// The tree of every head of `by_node` (2 nodes or more, the same GPU count each), or why not:
// no network switch, a switch that does not reduce, no cable from a leaf to the spine.
// `algorithm` names the caller in the reason.
std::optional<std::string> sharp_tree(const Machine& machine, const Problem& problem, const NodeGroups& by_node,
                                      std::string_view algorithm, SharpTree* out);

// The network part of the chunks of an expansion, in program order per connection.
class SharpStage {
 public:
  SharpStage(PlanBuilder& b, const SharpTree& tree, const NodeGroups& by_node, sim::Seconds step,
             std::string_view algorithm);
  // Chunk `c` of head h, node i's part in its head at ready[i]: when the sum is back in each
  // node's head h.
  std::vector<sim::NodeId> reduce(int h, sim::Bytes c, const std::vector<sim::NodeId>& ready);

 private:
  PlanBuilder& b_;
  const SharpTree& tree_;
  const NodeGroups& by_node_;
  sim::Seconds step_;
  sim::LabelId up_label_, switch_label_, down_label_;
  std::vector<std::vector<sim::NodeId>> prev_up_, prev_down_;               // [node][head]
  std::vector<std::vector<sim::NodeId>> prev_spine_up_, prev_spine_down_;   // [head][leaf]
};

// For the closed forms, a chunk of `bytes` payload: `stage`, the slowest network link's time for
// it (s; the pace of a stream of chunks), and `way`, its time up and back down, every level's
// transfer and wire (s; without the step).
struct SharpTimes {
  double stage = 0.0;
  double way = 0.0;
};
SharpTimes sharp_times(const PlanBuilder& b, const SharpTree& tree, double bytes);

}  // namespace wiresim::models
