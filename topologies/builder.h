// load_topology: YAML file -> LinkGraph. Validates every key (unknown keys are errors with a
// did-you-mean), normalises units (450GB/s, 400Gb/s, 900GB/s-bidir, 1.5us), expands node
// templates and fabrics, follows `include:` (cycles are errors) and applies `--set k=v`
// overrides to the file's `parameters:`. Bad input throws input::InputError at file:line:col.
//
//   LinkGraph g = load_topology("topologies/cluster-h100-ib.yaml", {{"nodes", "64"}});
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/executor.h"
#include "topologies/link_graph.h"

namespace wiresim::topo {

using Overrides = std::map<std::string, std::string>;

LinkGraph load_topology(const std::string& path, const Overrides& overrides = {});
// A topology file's `parameters:` and their defaults, read without building the graph (the
// catalogue asks which systems are sized by `nodes` or `racks`).
std::map<std::string, std::string> declared_parameters(const std::string& path);
// The same for YAML text (an imported topology, a test); file_name is used in messages and
// for resolving includes.
LinkGraph load_topology_text(const std::string& yaml, const std::string& file_name,
                             const Overrides& overrides = {});
// Parses "k=v" strings from the command line into overrides; throws InputError on bad form.
Overrides parse_overrides(const std::vector<std::string>& settings);
// The simulator's view of the links, same ids.
std::vector<sim::LinkSpec> link_specs(const LinkGraph& graph);

}  // namespace wiresim::topo
