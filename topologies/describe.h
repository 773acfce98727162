// Text views of a LinkGraph for `wiresim topo`: a summary (devices by kind, links by tier,
// per-GPU bandwidth per tier, NVLink domains, NICs per GPU), the GPU/NIC matrix that
// `nvidia-smi topo -m` prints, and Graphviz.
//
//   const Router router(graph);
//   fmt::print("{}", topo_summary(graph, router));
//   fmt::print("{}", topo_matrix(graph, router, {.max_nodes = 2}));
#pragma once

#include <string>

#include "topologies/link_graph.h"
#include "topologies/routes.h"

namespace wiresim::topo {

std::string topo_summary(const LinkGraph& graph, const Router& router);

struct MatrixOptions {
  int max_nodes = 2;  // a cluster shows its first nodes only (NET between them)
};
// Tab-separated like nvidia-smi: a header of GPU#/NIC# columns and NUMA Affinity, one row
// per device, then the legends. parse_topo_matrix (topologies/import.h) reads it back.
std::string topo_matrix(const LinkGraph& graph, const Router& router, const MatrixOptions& options = {});

// An undirected Graphviz graph: one edge per full-duplex pair, labelled with tier, count
// and bandwidth; nodes of a cluster in their own boxes.
std::string topo_dot(const LinkGraph& graph);

}  // namespace wiresim::topo
