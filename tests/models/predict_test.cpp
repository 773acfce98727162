// models::predict is the tuner and the run in one call: the same as calling them by hand, at
// every fidelity it offers.
#include <doctest/doctest.h>

#include "models/alpha_beta.h"
#include "models/fidelity.h"
#include "models/predict.h"
#include "test_machines.h"

using namespace wiresim;
using namespace wiresim::models;

namespace {

Problem all_reduce(const topo::LinkGraph& g, double bytes) {
  std::vector<topo::DeviceId> ranks(g.gpus().begin(), g.gpus().end());
  return Problem{Collective::all_reduce, sim::Bytes{bytes}, ranks, 0};
}

}  // namespace

TEST_CASE("predict: the tuner's choice run at full detail, by closed form, and at a fixed aggregation") {
  const topo::LinkGraph g = testing::crossbar(8, sim::BytesPerSec{400e9});
  const Machine machine(g, default_params());
  const Problem p = all_reduce(g, 64e6);
  const Decision d = tune(machine, p, {});
  PredictOptions exact;
  exact.aggregation = 1;
  const Prediction full = predict(machine, p, exact);
  CHECK(full.decision.best.algorithm == d.best.algorithm);
  CHECK(full.decision.best.protocol == d.best.protocol);
  CHECK(full.outcome.time.count() == run_collective(machine, p, d.best, Method::simulate).time.count());
  CHECK(full.fidelity.empty());
  PredictOptions closed;
  closed.method = Method::analytic;
  CHECK(predict(machine, p, closed).outcome.time.count() == estimate(machine, p, d.best).time.count());
  // A forced algorithm reaches the tuner.
  PredictOptions ring;
  ring.tuner.algorithm = Algorithm::ring;
  ring.aggregation = 1;
  CHECK(predict(machine, p, ring).decision.best.algorithm == Algorithm::ring);
  // A fixed aggregation is the run at that aggregation, with no error measured.
  PredictOptions four;
  four.aggregation = 4;
  four.tuner.algorithm = Algorithm::ring;
  Choice c = predict(machine, p, ring).decision.best;
  c.aggregation = 4;
  const Prediction merged = predict(machine, p, four);
  CHECK(merged.decision.best.aggregation == 4);
  CHECK(merged.outcome.time.count() == run_collective(machine, p, c, Method::simulate).time.count());
  CHECK_FALSE(merged.error_measured);
}

TEST_CASE("predict: auto fidelity is auto_fidelity and run_scaled, and says what it did") {
  const topo::LinkGraph g = testing::crossbar(8, sim::BytesPerSec{400e9});
  const Machine machine(g, default_params());
  const Problem p = all_reduce(g, 4e9);
  PredictOptions small_budget;
  small_budget.tuner.algorithm = Algorithm::ring;
  small_budget.max_nodes = 2e3;   // forces a reduced run
  const Prediction pr = predict(machine, p, small_budget);
  const Fidelity f = auto_fidelity(machine, p, pr.decision.best, 2e3);
  REQUIRE((f.aggregation > 1 || f.extrapolate > 1));
  const Scaled s = run_scaled(machine, p, tune(machine, p, small_budget.tuner).best, f, {});
  CHECK(pr.outcome.time.count() == s.outcome.time.count());
  CHECK(pr.decision.best.aggregation == f.aggregation);
  CHECK_FALSE(pr.fidelity.empty());
  CHECK(pr.error_measured);
  CHECK(pr.error == doctest::Approx(s.error));
}
