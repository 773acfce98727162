// apply_faults on a graph: which links a pattern names, failed links leaving the adjacency
// (ids kept), degraded ones at their share.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "input/input_error.h"
#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/faults.h"

using namespace wiresim;
using namespace wiresim::topo;

TEST_CASE("a failed NIC leaves every adjacency list, keeps its link ids; a degraded link keeps its share") {
  Overrides o;
  o["nodes"] = "2";
  LinkGraph g = load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/cluster-h100-ib.yaml", o);
  const std::size_t links = g.link_count();
  std::vector<double> before(g.link_count());
  for (LinkId id = 0; id < g.link_count(); ++id) before[id] = g.link(id).bandwidth.count();
  const FaultReport r = apply_faults(g, {"node0.nic0"}, {"node0.gpu0->*=25%"});
  CHECK(g.link_count() == links);
  REQUIRE(r.failed.size() == 4);   // the NIC's PCIe and network link, each way
  for (LinkId id : r.failed) {
    CHECK(g.link_failed(id));
    const Link& l = g.link(id);
    const auto out = g.out_links(l.from);
    CHECK(std::find(out.begin(), out.end(), id) == out.end());
  }
  CHECK(r.summary == "degraded " + std::to_string(r.degraded.size()) + " links to 25% (node0.gpu0->*); failed 4 links (node0.nic0)");
  for (LinkId id : r.degraded) {
    CHECK(g.link_name(id).rfind("node0.gpu0->", 0) == 0);
    CHECK(g.link(id).bandwidth.count() == rel_approx(0.25 * before[id]));
  }
  CHECK_FALSE(r.degraded.empty());
  // Outputs name what a fault did: labels, and the simulator's link names (traces).
  const auto specs = link_specs(g);
  for (LinkId id : r.degraded) {
    CHECK(g.link_label(id) == g.link_name(id) + " [25%]");
    CHECK(specs[id].name == g.link_label(id));
  }
  for (LinkId id : r.failed) CHECK(g.link_label(id) == g.link_name(id) + " [failed]");
  CHECK(g.link_label(g.find_link(g.gpus()[1], *g.find("node0.nvswitch0")).value()) == "node0.gpu1->node0.nvswitch0");
  CHECK_THROWS_AS(apply_faults(g, {"nowhere*"}, {}), input::InputError);
}
