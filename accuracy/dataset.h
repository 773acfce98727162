// Validation data sets: real nccl-tests / rccl-tests tables (validation/data/*.csv) and the
// map (validation/map.yaml) that says which shipped topology, GPUs and controls each stands
// for, which hardware class it belongs to and which role it plays:
//   fit      a constant of models/params.yaml is fitted on it (accuracy/fit.h says which);
//   checked  used to judge changes, never fitted on;
//   holdout  scored once at the end of a change, never used to choose one.
//
//   const auto map = read_map("validation/map.yaml");
//   const DataFile d = read_data("validation/data/h100_hgx8_allreduce_nccl-tests-i290.csv");
//   auto ranks = pick_ranks(graph, map.at("h100_hgx8_allreduce_nccl-tests-i290.csv"));
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/builder.h"
#include "topologies/link_graph.h"

namespace wiresim::accuracy {

enum class Role { fit, checked, holdout };
std::string_view to_string(Role r);
std::optional<Role> parse_role(std::string_view s);

// One entry of the map.
struct Mapping {
  std::string topology;            // path, resolved against the map's folder
  topo::Overrides settings;        // `set:` overrides (nodes, racks, ...)
  int gpus = 0;                    // 0: every GPU of the topology
  int gpus_per_node = 0;           // take this many GPUs from each node
  std::vector<int> ranks;          // explicit GPU indices (graph.gpus() order)
  std::optional<std::string> collective;
  bool p2p = true;
  std::optional<std::string> algo, proto;
  std::optional<int> channels;
  std::optional<int> gpus_per_thread;   // overrides the '-g N' of the file's command line
  Role role = Role::checked;
  std::string hw_class;            // hardware class, for per-class summaries and --cv
  std::string note;
  std::optional<std::string> unmapped;   // why no topology stands for this hardware
};

// Throws input::InputError at file:line:column for anything it does not understand.
std::map<std::string, Mapping> read_map(const std::string& path);

struct Measurement {
  double size = 0.0;       // bytes, as nccl-tests prints it
  double time_us = 0.0;    // out-of-place time
  // The row's printed algbw and busbw (GB/s; 0 where the file has no such column) and its line.
  double algbw = 0.0;
  double busbw = 0.0;
  int line = 0;
};

struct DataFile {
  std::string collective;        // from the '# collective:' header line ("" if none)
  int gpus_per_thread = 1;       // from '-g N' on the '# command:' line (nccl-tests' GPUs per thread)
  std::vector<Measurement> points;
};

// An nccl-tests CSV: '#' header lines, then size_bytes,time_us,algbw_GBps,busbw_GBps.
DataFile read_data(const std::string& path);

// The GPUs a mapping names, in rank order.
std::vector<topo::DeviceId> pick_ranks(const topo::LinkGraph& graph, const Mapping& m);

}  // namespace wiresim::accuracy
