// Failed and degraded hardware, for "what if this NIC dies" questions: patterns name devices
// (every link to or from them) or links ("a->b"), as glob patterns over the names `topo show`
// and `--explain` print: `node0.nic3`, `spine*`, `node1.gpu2->node1.nvswitch0`; `rail2` names
// rail 2 of a rail-optimised fabric (every node's NIC on it, and its leaf switches).
//
//   --fail PATTERN            the links leave service: routes recompute over what is left
//                             (another NIC of the node, PXN through a neighbour GPU, ECMP over
//                             the remaining spines); a pair no route joins any more is an error
//   --degrade PATTERN=SHARE   the links keep SHARE of their bandwidth (0.5 or 50%)
//
//   const FaultReport r = apply_faults(graph, {"node0.nic0"}, {"spine*=50%"});
//   r.summary;   // "failed 2 links (node0.nic0); degraded 16 links to 50% (spine*)"
#pragma once

#include <string>
#include <vector>

#include "topologies/link_graph.h"

namespace wiresim::topo {

struct FaultReport {
  std::vector<LinkId> failed;
  std::vector<LinkId> degraded;
  std::string summary;   // one line for the outputs; empty when nothing was asked
};

// Degradations apply before failures. Throws input::InputError for a pattern that matches
// nothing (naming how devices are called) or a share outside (0, 1].
FaultReport apply_faults(LinkGraph& graph, const std::vector<std::string>& fail, const std::vector<std::string>& degrade);

}  // namespace wiresim::topo
