#include <doctest/doctest.h>

#include "models/tuner.h"
#include "input/input_error.h"
#include "test_machines.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

Decision tune_at(const Machine& m, const topo::LinkGraph& g, Collective op, double bytes, TunerOptions o = {}) {
  return tune(m, Problem{op, sim::Bytes{bytes}, g.gpus(), 0}, o);
}

}  // namespace

TEST_CASE("on HGX H100 the tuner picks LL for tiny messages and NVLS/Simple for large ones") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-h100.yaml"));
  const Machine m(g, default_params());
  // 8 B: every algorithm is pure latency; LL's per-step cost (0.6 us on NVLink) is the
  // lowest, and NCCL's own tables make ring/LL (6.6 + 14 x 0.6 = 15.0 us) edge out
  // tree/LL (6.8 + 2 x 7 x 0.6 = 15.2 us) on one node.
  const Decision tiny = tune_at(m, g, Collective::all_reduce, 8);
  CHECK(tiny.best.protocol == Protocol::ll);
  CHECK((tiny.best.algorithm == Algorithm::ring || tiny.best.algorithm == Algorithm::tree));
  // 1 GiB: NVLS moves (n+1)/n of the buffer per GPU instead of the ring's 2(n-1)/n.
  const Decision large = tune_at(m, g, Collective::all_reduce, 1073741824.0);
  CHECK(large.best.algorithm == Algorithm::nvls);
  CHECK(large.best.protocol == Protocol::simple);
  // Every candidate is listed, refused ones with a reason (NVLS with LL).
  bool saw_refusal = false;
  for (const auto& c : large.candidates) saw_refusal = saw_refusal || (!c.time && !c.note.empty());
  CHECK(saw_refusal);
}

TEST_CASE("without NVLS (HGX A100) large all_reduce goes to ring/Simple") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  const Decision large = tune_at(m, g, Collective::all_reduce, 1073741824.0);
  CHECK(large.best.algorithm == Algorithm::ring);
  CHECK(large.best.protocol == Protocol::simple);
}

TEST_CASE("protocol switches from LL to LL128 or Simple as messages grow") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  Protocol previous = Protocol::ll;
  int switches = 0;
  for (double s = 8; s <= 4294967296.0; s *= 2) {
    const Protocol p = tune_at(m, g, Collective::all_reduce, s).best.protocol;
    // Protocols only move forward (LL -> LL128 -> Simple) as the size grows.
    CHECK(static_cast<int>(p) >= static_cast<int>(previous));
    switches += p != previous;
    previous = p;
  }
  CHECK(switches >= 1);
  CHECK(previous == Protocol::simple);
}

TEST_CASE("a forced algorithm that does not apply is refused") {
  const topo::LinkGraph g = topo::load_topology(testing::shipped("hgx-a100.yaml"));
  const Machine m(g, default_params());
  TunerOptions o;
  o.algorithm = Algorithm::nvls;
  CHECK_THROWS_AS(tune_at(m, g, Collective::all_reduce, 1e6, o), input::InputError);
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::ll128;
  const Decision d = tune_at(m, g, Collective::all_reduce, 1e6, o);
  CHECK(d.best.algorithm == Algorithm::ring);
  CHECK(d.best.protocol == Protocol::ll128);
}
