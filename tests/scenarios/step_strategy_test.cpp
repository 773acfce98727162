// The step builder takes the way communication is costed as a strategy (scenarios/comm_cost.h):
// each strategy by hand, the load phase through the same builder and summary, and the sweep's
// counts returned with its rows.
#include <doctest/doctest.h>

#include <string>

#include "models/params.h"
#include "scenarios/comm_cost.h"
#include "scenarios/scenario.h"
#include "scenarios/step.h"
#include "scenarios/sweep.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::scenarios;

namespace {

std::string repo(const std::string& path) { return std::string(WIRESIM_SOURCE_DIR) + "/" + path; }

struct Loaded {
  Scenario scenario;
  topo::LinkGraph graph;
};

Loaded load(const std::string& file) {
  Scenario s = load_scenario(repo("scenarios/" + file));
  topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  return {std::move(s), std::move(g)};
}

}  // namespace

TEST_CASE("FreeComm: the step is its compute alone, the reference every strategy's exposed time is measured from") {
  for (const std::string file : {"llama70b-2node-pp2-microbatch.yaml", "mixtral-ep8-2node-pingpong.yaml"}) {
    CAPTURE(file);
    const Loaded l = load(file);
    const models::Machine machine(l.graph, models::default_params());
    const StepResult simulated = run_step(l.scenario, machine, SimulatedComm{});
    const StepResult free = run_step(l.scenario, machine, FreeComm{});
    CHECK(free.step.count() == simulated.compute.count());
    CHECK(free.compute.count() == free.step.count());
    CHECK(free.exposed_comm.count() == 0.0);
    for (const auto& [kind, c] : free.by_collective) CHECK(c.count == 0);   // nothing was communicated
    CHECK(simulated.step > free.step);
  }
}

TEST_CASE("ClosedFormComm: a lone collective's step is its closed-form time plus the compute around it") {
  // One dense layer's worth: TP 8 on one HGX H100, every collective the same size, run one
  // after another; the step is the sum of their closed forms when compute is zero.
  Loaded l = load("llama70b-tp8-prefill.yaml");
  l.scenario.compute = {};
  const models::Machine machine(l.graph, models::default_params());
  const StepResult r = run_step(l.scenario, machine, ClosedFormComm{});
  const auto& ar = r.by_collective.at("tp_all_reduce");
  const CommPart one = ClosedFormComm{}.collective(
      machine,
      models::Problem{models::Collective::all_reduce, ar.bytes / static_cast<double>(ar.count),
                      std::vector<topo::DeviceId>(l.graph.gpus().begin(), l.graph.gpus().begin() + 8)},
      {}, "tp_all_reduce");
  REQUIRE(one.dag.size() == 1);
  // Equal up to the integer picoseconds of each of the step's nodes.
  CHECK(r.step.count() == rel_approx(ar.count * one.dag.node(0).latency.count()).epsilon(1e-8));
}

TEST_CASE("NaiveComm: the note names the quoted figure of every wire the step crossed") {
  const Loaded l = load("llama70b-2node-tp8-pp2.yaml");
  const models::Machine machine(l.graph, models::default_params());
  const StepResult r = run_step(l.scenario, machine, NaiveComm{});
  CHECK(r.note.find("for nvlink") != std::string::npos);   // the TP all_reduces
  CHECK(r.note.find("for ib") != std::string::npos);       // the pipeline handover between nodes
}

TEST_CASE("a load phase goes through the same builder and summary: tiers, busiest links, no tokens") {
  const Loaded l = load("model-load-pcie5.yaml");
  const models::Machine machine(l.graph, models::default_params());
  const StepResult r = run_step(l.scenario, machine, SimulatedComm{});
  const auto& load = r.by_collective.at("weight_load");
  CHECK(load.count == l.scenario.layout.gpus());
  CHECK(load.time.count() == r.step.count());
  CHECK(r.comm.count() == r.step.count());
  CHECK(r.exposed_comm.count() == r.step.count());
  CHECK(r.tokens_per_s == 0.0);
  REQUIRE_FALSE(r.busiest.empty());
  // Each GPU's copy has its host link to itself: the busiest link is full for the whole step.
  CHECK(r.busiest.front().utilisation == rel_approx(1.0).epsilon(1e-3));
  CHECK(r.by_tier.count("pcie") == 1);
}

TEST_CASE("run_sweep returns its counts: layouts enumerated and those left out for memory") {
  SweepSpec spec;
  spec.model = load_model(repo("scenarios/models/llama-70b.yaml"));
  spec.workload.phase = Phase::prefill;
  spec.workload.tokens = 256;
  spec.gpus = 8;
  spec.topology = "hgx-h100";
  spec.gpu_memory = sim::Bytes{40e9};   // 137 GB of weights: 36 GB usable, so 4 ways and more
  const topo::LinkGraph g = topo::load_topology(repo("topologies/hgx-h100.yaml"));
  const SweepResult r = run_sweep(spec, models::Machine(g, models::default_params()), 1, nullptr);
  const auto all = enumerate_layouts(spec.model, 8, 1);
  CHECK(r.counts.enumerated == static_cast<int>(all.size()));
  CHECK(r.counts.too_big > 0);
  CHECK(r.counts.enumerated == static_cast<int>(r.rows.size()) + r.counts.too_big);
  for (const auto& row : r.rows) {
    CHECK(memory_per_gpu(spec.model, row.layout, spec.workload).total().count() <= 0.9 * 40e9);
    CHECK(row.layout.tp * row.layout.pp >= 4);
  }
}
