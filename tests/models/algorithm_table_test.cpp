#include <doctest/doctest.h>

#include <set>

#include "models/algorithm.h"
#include "models/algorithm_list.h"
#include "models/tuner.h"
#include "test_machines.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

// The algorithms the tuner lists for `op`, in its order (each once, over all protocols).
std::vector<Algorithm> candidates(const Machine& m, const topo::LinkGraph& g, Collective op, bool all) {
  TunerOptions o;
  o.all_algorithms = all;
  const Decision d = tune(m, Problem{op, sim::Bytes{1 << 20}, g.gpus(), 0}, o);
  std::vector<Algorithm> out;
  for (const auto& c : d.candidates)
    if (out.empty() || out.back() != c.choice.algorithm) out.push_back(c.choice.algorithm);
  return out;
}

}  // namespace

TEST_CASE("every algorithm has one descriptor, and its name round-trips") {
  std::set<Algorithm> seen;
  for (const AlgorithmDescriptor* d : algorithms()) {
    CHECK(seen.insert(d->id).second);
    CHECK(&descriptor(d->id) == d);
    CHECK(to_string(d->id) == d->name);
    CHECK(parse_algorithm(d->name) == d->id);
  }
  CHECK(all_algorithms().size() == seen.size());
}

// Every line of the list is one enum value and one table entry, in the list's order, with the
// value's name.
TEST_CASE("the enum and the table are the one list of models/algorithm_list.h, in its order") {
  std::size_t i = 0;
#define CHECK_LINE(value, desc)                                   \
  CHECK(static_cast<std::size_t>(Algorithm::value) == i);         \
  CHECK(algorithms()[i]->id == Algorithm::value);                 \
  CHECK(algorithms()[i]->name == #value);                         \
  CHECK(all_algorithms()[i] == Algorithm::value);                 \
  ++i;
  WIRESIM_ALGORITHMS(CHECK_LINE)
#undef CHECK_LINE
  CHECK(i == algorithms().size());
}

TEST_CASE("the tuner's default candidate sets are NCCL's; `all` adds the rest") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  using A = Algorithm;
  CHECK(candidates(m, g, Collective::all_reduce, false) ==
        std::vector{A::ring, A::tree, A::nvls, A::nvls_tree, A::collnet});
  CHECK(candidates(m, g, Collective::all_gather, false) == std::vector{A::ring, A::nvls, A::pat});
  CHECK(candidates(m, g, Collective::reduce_scatter, false) == std::vector{A::ring, A::nvls, A::pat});
  CHECK(candidates(m, g, Collective::broadcast, false) == std::vector{A::ring});
  CHECK(candidates(m, g, Collective::reduce, false) == std::vector{A::ring});
  CHECK(candidates(m, g, Collective::all_to_all, false) == std::vector{A::direct});
  CHECK(candidates(m, g, Collective::send_recv, false) == std::vector{A::direct});
  CHECK(candidates(m, g, Collective::all_reduce, true) ==
        std::vector{A::ring, A::tree, A::nvls, A::nvls_tree, A::one_shot, A::two_shot, A::hierarchical, A::collnet});
  CHECK(candidates(m, g, Collective::all_to_all, true) == std::vector{A::direct, A::pairwise});
}

TEST_CASE("why_not refuses a collective exactly when the descriptor does not implement it") {
  // One HGX H100 (nvls, one_shot, two_shot apply there), two of them over InfiniBand
  // (nvls_tree, hierarchical), one GPU of each of the two (pat), and the two on a fabric that
  // reduces (collnet): every implemented collective applies on one of the four, with Simple;
  // every other one is refused on all with the descriptor's words.
  const topo::LinkGraph one = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const topo::LinkGraph two = topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", "2"}});
  const topo::LinkGraph sharp =
      topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", "2"}, {"sharp", "true"}});
  const Machine m1(one, default_params()), m2(two, default_params()), m3(sharp, default_params());
  for (const AlgorithmDescriptor* d : algorithms())
    for (Collective op : all_collectives()) {
      CAPTURE(d->name);
      CAPTURE(to_string(op));
      const auto why1 = why_not(m1, Problem{op, sim::Bytes{1 << 20}, one.gpus(), 0}, d->id, Protocol::simple);
      const auto why2 = why_not(m2, Problem{op, sim::Bytes{1 << 20}, two.gpus(), 0}, d->id, Protocol::simple);
      const auto why3 =
          why_not(m2, Problem{op, sim::Bytes{1 << 20}, {two.gpus()[0], two.gpus()[8]}, 0}, d->id, Protocol::simple);
      const auto why4 = why_not(m3, Problem{op, sim::Bytes{1 << 20}, sharp.gpus(), 0}, d->id, Protocol::simple);
      if (d->collectives.contains(op)) {
        CHECK((!why1 || !why2 || !why3 || !why4));
      } else {
        REQUIRE(why1.has_value());
        REQUIRE(why2.has_value());
        REQUIRE(why3.has_value());
        REQUIRE(why4.has_value());
        CHECK(*why1 == *why2);
        CHECK(*why1 == *why3);
        CHECK(*why1 == *why4);
        CHECK(why1->find(d->name) != std::string::npos);
      }
    }
}

TEST_CASE("a protocol an algorithm does not run with is refused with NCCL's word for it") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  const Problem p{Collective::all_reduce, sim::Bytes{1 << 20}, g.gpus(), 0};
  CHECK(why_not(m, p, Algorithm::nvls, Protocol::ll) == "nvls runs with the Simple protocol only (as in NCCL)");
  CHECK(why_not(m, p, Algorithm::nvls, Protocol::ll128).has_value());
  CHECK_FALSE(why_not(m, p, Algorithm::nvls, Protocol::simple).has_value());
}
