#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "sim/transfer_dag.h"

using namespace wiresim::sim;

namespace {
std::vector<NodeId> as_vector(std::span<const NodeId> s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("transfer_dag: nodes keep their links, bytes and latency") {
  TransferDag dag;
  const std::vector<LinkId> route{3, 1, 4};
  const NodeId t = dag.add_transfer(route, Bytes{1e6});
  const NodeId m = dag.add_transfer(route, Bytes{2e6}, Seconds{5e-6}, BytesPerSec{1e9}, 0, 7, 8);
  const NodeId d = dag.add_delay(Seconds{2e-6});
  CHECK(dag.size() == 3);
  CHECK(std::vector<LinkId>(dag.links(t).begin(), dag.links(t).end()) == route);
  CHECK(dag.node(t).kind == NodeKind::transfer);
  CHECK(dag.node(t).bytes.count() == 1e6);
  CHECK_FALSE(dag.latency_is_explicit(t));
  CHECK(dag.latency_is_explicit(m));
  CHECK(dag.node(m).latency.count() == 5e-6);
  CHECK(dag.node(m).rate_cap.count() == 1e9);
  CHECK(dag.node(m).track == 7);
  CHECK(dag.node(m).peer == 8);
  CHECK(dag.node(d).kind == NodeKind::delay);
  CHECK(dag.links(d).empty());
}

TEST_CASE("transfer_dag: successors and predecessors in the order edges were added") {
  TransferDag dag;
  for (int i = 0; i < 4; ++i) dag.add_delay(Seconds{0});
  dag.add_dependency(0, 2);
  dag.add_dependency(1, 2);
  dag.add_dependency(0, 1);
  CHECK(as_vector(dag.successors(0)) == std::vector<NodeId>{2, 1});
  CHECK(as_vector(dag.predecessors(2)) == std::vector<NodeId>{0, 1});
  CHECK(dag.predecessor_count(2) == 2);
  // Adding after a freeze merges the new edges behind the old ones.
  const NodeId e = dag.add_delay(Seconds{0});
  dag.add_dependency(0, e);
  dag.add_dependency(e, 3);
  CHECK(as_vector(dag.successors(0)) == std::vector<NodeId>{2, 1, e});
  CHECK(as_vector(dag.predecessors(3)) == std::vector<NodeId>{e});
  CHECK(dag.successors(3).empty());
}

TEST_CASE("transfer_dag: labels are interned and name nodes") {
  TransferDag dag;
  const LabelId a = dag.intern_label("ring step");
  CHECK(dag.intern_label("ring step") == a);
  CHECK(dag.intern_label("launch") != a);
  const NodeId t = dag.add_transfer({}, Bytes{1}, std::nullopt, BytesPerSec::unlimited(), a, 3);
  const NodeId d = dag.add_delay(Seconds{0});
  CHECK(dag.describe(t) == "ring step #0 (track 3)");
  CHECK(dag.describe(d) == "delay #1 (track 0)");
  CHECK(dag.labels()[a] == "ring step");
}

TEST_CASE("transfer_dag: bad input is refused") {
  TransferDag dag;
  const std::vector<LinkId> twice{1, 2, 1};
  CHECK_THROWS_AS(dag.add_transfer(twice, Bytes{1}), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_transfer({}, Bytes{-1}), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_transfer({}, Bytes{1}, Seconds{-1}), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_transfer({}, Bytes{1}, std::nullopt, BytesPerSec{0}), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_delay(Seconds{-1}), std::invalid_argument);
  CHECK_THROWS_AS(dag.add_delay(Seconds{0}, 9), std::out_of_range);
  CHECK_THROWS_AS(dag.add_dependency(0, 1), std::out_of_range);
}
