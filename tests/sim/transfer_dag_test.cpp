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

TEST_CASE("transfer_dag: append splices a part in, renaming its tracks and keeping its dependencies") {
  TransferDag part;
  const std::vector<LinkId> route{2, 5};
  const NodeId launch = part.add_delay(Seconds{1e-6}, part.intern_label("launch"), 0);
  const NodeId send = part.add_transfer(route, Bytes{4e6}, Seconds{3e-6}, BytesPerSec{2e9}, part.intern_label("send"), 1, 0);
  const NodeId implicit = part.add_transfer(route, Bytes{1e6}, std::nullopt, BytesPerSec::unlimited(),
                                            part.intern_label("send"), 7, 1);
  part.add_dependency(launch, send);
  part.add_dependency(launch, implicit);

  TransferDag dag;
  const NodeId before = dag.add_delay(Seconds{2e-6}, dag.intern_label("compute"), 9);
  const std::vector<std::uint32_t> tracks{10, 11, 12};
  const NodeId offset = dag.append(part, tracks);
  CHECK(offset == before + 1);
  REQUIRE(dag.size() == 4);
  // Tracks and peers renamed; a track past the list takes its last entry.
  CHECK(dag.node(offset).track == 10);
  CHECK(dag.node(offset + 1).track == 11);
  CHECK(dag.node(offset + 1).peer == 10);
  CHECK(dag.node(offset + 2).track == 12);
  CHECK(dag.node(offset + 2).peer == 11);
  // Bytes, rates, latencies (explicit or not), links and labels carried over.
  CHECK(dag.node(offset + 1).bytes.count() == 4e6);
  CHECK(dag.node(offset + 1).rate_cap.count() == 2e9);
  CHECK(dag.latency_is_explicit(offset + 1));
  CHECK(dag.node(offset + 1).latency.count() == 3e-6);
  CHECK_FALSE(dag.latency_is_explicit(offset + 2));
  CHECK(std::vector<LinkId>(dag.links(offset + 2).begin(), dag.links(offset + 2).end()) == route);
  CHECK(dag.labels()[dag.node(offset + 1).label] == "send");
  CHECK(dag.labels()[dag.node(before).label] == "compute");
  CHECK(as_vector(dag.successors(offset)) == std::vector<NodeId>{offset + 1, offset + 2});
  CHECK(dag.successors(before).empty());
  // No track list: tracks kept.
  TransferDag same;
  same.append(part);
  CHECK(same.node(2).track == 7);
  CHECK(same.node(2).peer == 1);
}

TEST_CASE("transfer_dag: append with processors carries bindings, renamed, held-until included") {
  // A part: two 1 us kernels on processor 0 (one at a time), and a 'collective' that holds
  // processor 5 from its launch until its end node.
  TransferDag part;
  const NodeId k1 = part.add_delay(Seconds{1e-6});
  const NodeId k2 = part.add_delay(Seconds{1e-6});
  part.set_processor(k1, 0, 0);
  part.set_processor(k2, 0, 1);
  const NodeId launch = part.add_delay(Seconds{0.0});
  const NodeId end = part.add_delay(Seconds{3e-6});
  part.add_dependency(launch, end);
  part.set_processor(launch, 5, 0, end);

  TransferDag dag;
  const NodeId a = dag.append(part, {}, [](std::uint32_t p) { return p; });
  const NodeId b = dag.append(part, {}, [](std::uint32_t p) { return p + 100; });
  CHECK(dag.binding(a + k1).processor == 0);
  CHECK(dag.binding(a + k2).priority == 1);
  CHECK(dag.binding(b + k1).processor == 100);
  CHECK(dag.binding(b + launch).processor == 105);
  CHECK(dag.binding(b + end).releases == 105);
  CHECK(dag.binding(a + end).releases == 5);
  // The plain append drops them (processors are the receiving DAG's).
  TransferDag plain;
  const NodeId c = plain.append(part);
  CHECK(plain.binding(c + k1).processor == TransferDag::kNoProcessor);
}
