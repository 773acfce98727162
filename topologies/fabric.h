// Fabric: the scale-out network that joins the nodes of a cluster, expanded from a few
// parameters into leaf and spine switches and their links.
//
// rail_optimized: NIC i of every node is on rail i mod `rails` (by default every NIC of a
// node is its own rail); each rail has its own leaves, each serving `down` NIC ports, so
// same-rail traffic under one leaf is one switch hop (NVIDIA DGX SuperPOD,
// shared/data/hardware.md §6). fat_tree: NICs fill leaves in order,
// node by node. Either way a leaf of radix k with oversubscription o (down:up = o:1) has
// down = floor(k·o/(o+1)) node ports and up = ceil(down/o) uplinks, spread evenly over the
// spines (one cable per spine by default), and every leaf reaches every spine, so any two
// leaves have `spines` equal-cost paths. A spine here is a logical switch: its radix is
// not bounded, so it also stands for the spine+core tiers of very large clusters.
//
//   FabricSpec spec = parse_fabric(*find(doc, "fabric"), "fabric");
//   build_fabric(spec, graph, nics_by_node);   // adds leaf0.., spine0.. and their links
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "input/yaml.h"
#include "topologies/link_graph.h"

namespace wiresim::topo {

struct FabricSpec {
  enum class Layout { rail_optimized, fat_tree };
  Layout layout = Layout::rail_optimized;
  Tier tier = Tier::ib;
  std::string nic_group = "nic";   // the node's device group whose members attach
  input::Position nic_group_at;
  long leaf_radix = 64;
  std::optional<long> rails;       // default: the number of NICs per node
  input::Position rails_at;
  double oversubscription = 1.0;   // down:up ports at a leaf
  std::optional<long> spines;
  input::Position spines_at;
  std::string spines_via;          // the parameter that set it, for messages
  sim::BytesPerSec nic_bandwidth;  // per NIC cable
  sim::Seconds nic_latency;
  sim::BytesPerSec uplink_bandwidth;  // per leaf-spine cable
  sim::Seconds uplink_latency;
  // The switches reduce in the network (InfiniBand SHARP; NCCL's CollNet through the SHARP
  // plugin): every leaf and spine gets `multicast`, which the collnet algorithm needs.
  bool sharp = false;
};

// Rates that parse but look like a slip of the unit land in `warnings` (plausibility.h).
FabricSpec parse_fabric(const input::Value& fabric, const std::string& path, std::vector<std::string>& warnings);
// The rails of a rail-optimised fabric over nodes of `nics_per_node` NICs (1 for a fat
// tree); throws at fabric.rails when it does not divide the NIC count.
long fabric_rails(const FabricSpec& spec, long nics_per_node);
// nics[node][i]: the NIC devices of each node, in group order.
void build_fabric(const FabricSpec& spec, LinkGraph& graph,
                  const std::vector<std::vector<DeviceId>>& nics);

}  // namespace wiresim::topo
