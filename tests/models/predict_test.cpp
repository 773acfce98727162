// models::predict is the tuner and the run in one call: the same as calling them by hand, at
// every fidelity it offers.
#include <doctest/doctest.h>

#include <cmath>

#include <fmt/format.h>

#include "models/alpha_beta.h"
#include "models/fidelity.h"
#include "models/limits.h"
#include "models/predict.h"
#include "test_machines.h"
#include "tests/approx.h"

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
  CHECK(pr.error == rel_approx(s.error));
}

TEST_CASE("predict: a tree too large to simulate is its closed form, checked by simulation on the first nodes") {
  // Trees do not shrink with the size (every rank fills the pipeline), so neither aggregation
  // nor extrapolation applies: the closed form at full scale, with its error measured against
  // the simulation of the same choice on the most nodes the budget allows.
  const topo::LinkGraph g =
      topo::load_topology(testing::shipped("cluster-h100-ib.yaml"), {{"nodes", "8"}});
  const Machine machine(g, default_params());
  const Problem p = all_reduce(g, 64e6);
  PredictOptions budget;
  budget.tuner.algorithm = Algorithm::tree;
  budget.tuner.protocol = Protocol::simple;
  budget.max_nodes = 2e4;   // 8 nodes need ~4e4 DAG nodes; 4 nodes ~2e4, 2 nodes ~1e4
  const Prediction pr = predict(machine, p, budget);
  const Fidelity f = auto_fidelity(machine, p, pr.decision.best, budget.max_nodes);
  REQUIRE(f.closed_form);
  CHECK(f.aggregation == 1);
  CHECK(f.extrapolate == 1);
  REQUIRE(f.check_nodes >= 2);
  CHECK(f.check_nodes < 8);
  CHECK(estimate_plan(machine, first_nodes(machine, p, f.check_nodes), pr.decision.best).nodes <= budget.max_nodes);
  // The time is the closed form's at full scale.
  CHECK(pr.outcome.time.count() == estimate(machine, p, pr.decision.best).time.count());
  // The error is the closed form against the simulation on the first check_nodes nodes.
  const Problem sub = first_nodes(machine, p, f.check_nodes);
  CHECK(sub.ranks.size() == 8u * f.check_nodes);
  CHECK(sub.ranks.front() == p.ranks.front());
  sim::RunOptions windowed;
  windowed.window_flows = f.window_flows;
  windowed.window_slack = f.window_slack;
  const double simulated = run_collective(machine, sub, pr.decision.best, Method::simulate, nullptr, windowed).time.count();
  const double formula = estimate(machine, sub, pr.decision.best).time.count();
  CHECK(pr.error_measured);
  CHECK(pr.error == rel_approx(std::abs(formula - simulated) / simulated));
  CHECK(pr.error < 0.05);
  CHECK(pr.fidelity.find("closed form") != std::string::npos);
  CHECK(pr.fidelity.find(fmt::format("first {} nodes", f.check_nodes)) != std::string::npos);
}
