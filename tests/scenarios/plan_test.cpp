// The planner, by hand: a small model on one GPU whose step is pure roofline compute, priced
// per GPU-hour; the same machine at two prices; and a target nothing meets.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "models/params.h"
#include "scenarios/plan.h"
#include "tests/approx.h"
#include "topologies/catalog.h"

using namespace wiresim;
using namespace wiresim::scenarios;

namespace {

// Two systems on the same HGX H100 topology, one at $2 and one at $3 per GPU-hour.
topo::Catalog two_prices() {
  const std::string figures =
      "    memory: {value: 80GB, source: s, date: 2026-12-01}\n"
      "    memory_bandwidth: {value: 3TB/s, source: s, date: 2026-12-01}\n"
      "    peak_flops:\n"
      "      bf16: {value: 1000TFLOP/s, source: s, date: 2026-12-01}\n"
      "    power_w: {value: 700, source: s, date: 2026-12-01}\n";
  const std::string yaml = "accelerators:\n  cheap:\n    model: c\n" + figures +
                           "    price_per_gpu_hour_usd: {value: 2, source: s, date: 2026-12-01}\n"
                           "  dear:\n    model: d\n" + figures +
                           "    price_per_gpu_hour_usd: {value: 3, source: s, date: 2026-12-01}\n"
                           "systems:\n"
                           "  box-cheap: {topology: hgx-h100.yaml, accelerator: cheap}\n"
                           "  box-dear: {topology: hgx-h100.yaml, accelerator: dear}\n";
  return topo::load_catalog_text(yaml, "two.yaml", std::string(WIRESIM_SOURCE_DIR) + "/topologies");
}

ModelShape small_model() {
  ModelShape m;
  m.name = "small";
  m.hidden = 1024;
  m.layers = 2;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn = 4096;
  return m;
}

}  // namespace

TEST_CASE("plan: one GPU, batch 1 decode is the roofline by hand, and its cost per million tokens") {
  PlanSpec spec;
  spec.model = small_model();
  spec.context = 1000;
  spec.max_batch = 1;
  spec.max_gpus = 1;
  spec.systems = {"box-cheap"};
  const PlanResult r = run_plan(spec, two_prices(), models::default_params(), 1, {});
  REQUIRE(r.plans.size() == 1);
  const Plan& p = r.plans.front();
  // Per layer, one token: attention 4 h^2 parameters (kv = heads) read with the KV cache of
  // 1000 tokens (2 x 1000 x 1024 x 2 B), MLP 3 h ffn; each the slower of FLOPs at
  // 0.5 x 1000 TFLOP/s and bytes at 0.6 x 3 TB/s.
  const double h = 1024, peak = 0.5 * 1000e12, bw = 0.6 * 3e12;
  const double attn = 4 * h * h, mlp = 3 * h * 4096, kv = 2.0 * 1000 * 1024 * 2;
  const double layer = std::max(2 * attn / peak, (2 * attn + kv) / bw) + std::max(2 * mlp / peak, 2 * mlp / bw);
  const double step = 2 * layer;
  CHECK(p.result.step.count() == rel_approx(step).epsilon(1e-6));
  CHECK(p.tokens_per_s == rel_approx(1.0 / step).epsilon(1e-6));
  // $2 per GPU-hour, one GPU: 2 / 3600 per second, over 1 / step tokens per second.
  CHECK(p.cost_per_mtok == rel_approx(2.0 / 3600.0 * step * 1e6).epsilon(1e-6));
  CHECK(p.bottleneck == "compute");
  CHECK(p.front);
}

TEST_CASE("plan: the same machine at $2 and $3 per GPU-hour ranks every plan of the cheaper first, at 2/3 the cost") {
  PlanSpec spec;
  spec.model = small_model();
  spec.context = 1000;
  spec.max_batch = 4;
  spec.max_gpus = 2;
  const PlanResult r = run_plan(spec, two_prices(), models::default_params(), 1, {});
  REQUIRE(!r.plans.empty());
  for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].cost_per_mtok <= r.plans[i].cost_per_mtok);
  int paired = 0;
  for (const Plan& cheap : r.plans) {
    if (cheap.system != "box-cheap") continue;
    for (const Plan& dear : r.plans)
      if (dear.system == "box-dear" && dear.gpus == cheap.gpus && dear.batch == cheap.batch &&
          dear.layout.tp == cheap.layout.tp && dear.layout.pp == cheap.layout.pp) {
        CHECK(dear.result.step.count() == cheap.result.step.count());
        CHECK(cheap.cost_per_mtok == rel_approx(dear.cost_per_mtok * 2.0 / 3.0));
        ++paired;
      }
  }
  // 1 GPU (tp1) and 2 GPUs (tp2, pp2) at batches 1, 2, 4.
  CHECK(paired == 9);
  // The small model fits every batch tried on both systems: nothing stopped the search early.
  for (const auto& f : r.fits) CHECK((f.largest_batch == 4 && f.stopped.empty()));
  CHECK(r.plans.front().system == "box-cheap");
  // The front: no plan on it is both slower and dearer than another.
  for (const Plan& a : r.plans)
    if (a.front)
      for (const Plan& b : r.plans) CHECK_FALSE((b.result.step < a.result.step && b.cost_per_mtok < a.cost_per_mtok));
}

TEST_CASE("plan: a target nothing meets gives no plan, the fastest that ran, and the count") {
  PlanSpec spec;
  spec.model = small_model();
  spec.max_batch = 2;
  spec.max_gpus = 1;
  spec.systems = {"box-cheap"};
  spec.max_latency = wiresim::sim::Seconds{1e-9};
  const PlanResult r = run_plan(spec, two_prices(), models::default_params(), 1, {});
  CHECK(r.plans.empty());
  REQUIRE_FALSE(r.closest.empty());
  CHECK(r.counts.missed == r.counts.evaluated);
  // Every batch misses, so the search stops after the first, and says so.
  CHECK(r.counts.evaluated == 1);
  REQUIRE(r.fits.size() == 1);
  CHECK(r.fits[0].largest_batch == 1);
  CHECK(r.fits[0].stopped == "target");
}

TEST_CASE("step_bound: the slowest collective and the tier with the most link time, not the most bytes") {
  using namespace wiresim;
  scenarios::StepResult r;
  r.step = sim::Seconds{10e-3};
  r.compute = sim::Seconds{7e-3};
  r.exposed_comm = sim::Seconds{3e-3};   // 30 % of the step: bound by communication
  r.by_collective["tp_all_reduce"] = {4, sim::Bytes{1e9}, sim::Seconds{2e-3}, "ring/simple"};
  r.by_collective["pp_send_recv"] = {2, sim::Bytes{1e6}, sim::Seconds{5e-3}, "p2p"};
  // NVLink carried 10x the bytes in a tenth of the link time: the NIC tier is what is busy.
  r.by_tier["nvlink"] = {sim::Bytes{10e9}, sim::Seconds{1e-3}};
  r.by_tier["ib"] = {sim::Bytes{1e9}, sim::Seconds{10e-3}};
  r.by_tier["pcie"] = {sim::Bytes{0.0}, sim::Seconds{0.0}};
  scenarios::StepBound b = scenarios::step_bound(r);
  CHECK(b.communication);
  CHECK(b.collective == "pp_send_recv");
  REQUIRE(b.slowest != nullptr);
  CHECK(b.slowest->count == 2);
  CHECK(b.tier == "ib");
  CHECK(scenarios::bottleneck(r) == "pp_send_recv over ib");

  r.exposed_comm = sim::Seconds{2.5e-3};   // exactly a quarter: compute-bound
  CHECK_FALSE(scenarios::step_bound(r).communication);
  CHECK(scenarios::bottleneck(r) == "compute");

  scenarios::StepResult none;   // no collective, no traffic
  b = scenarios::step_bound(none);
  CHECK(b.slowest == nullptr);
  CHECK(b.busiest == nullptr);
  CHECK(b.tier.empty());
}

TEST_CASE("plan: a cluster is a system whose topology declares its size (nodes, or racks for NVL72)") {
  // The shipped catalogue: by default the clusters are left out; named, they are built with
  // --nodes of them, whatever the parameter is called.
  const std::string figures =
      "    memory: {value: 192GB, source: s, date: 2026-12-01}\n"
      "    memory_bandwidth: {value: 8TB/s, source: s, date: 2026-12-01}\n"
      "    peak_flops:\n"
      "      bf16: {value: 2500TFLOP/s, source: s, date: 2026-12-01}\n"
      "    power_w: {value: 1200, source: s, date: 2026-12-01}\n"
      "    price_per_gpu_hour_usd: {value: 5, source: s, date: 2026-12-01}\n";
  const topo::Catalog c = topo::load_catalog_text(
      "accelerators:\n  gb:\n    model: g\n" + figures +
          "systems:\n"
          "  rack: {topology: gb200-nvl72.yaml, accelerator: gb}\n"
          "  racks-ib: {topology: gb200-nvl72-ib.yaml, accelerator: gb}\n"
          "  h100-ib: {topology: cluster-h100-ib.yaml, accelerator: gb}\n",
      "c.yaml", std::string(WIRESIM_SOURCE_DIR) + "/topologies");
  PlanSpec spec;
  spec.model = small_model();
  spec.max_batch = 1;
  spec.max_gpus = 1;
  PlanResult r = run_plan(spec, c, models::default_params(), 1, {});
  REQUIRE(r.fits.size() == 1);
  CHECK(r.fits.front().system == "rack");
  spec.systems = {"racks-ib", "h100-ib"};
  spec.nodes = 3;
  r = run_plan(spec, c, models::default_params(), 1, {});
  REQUIRE(r.plans.size() == 2);
  for (const Plan& p : r.plans) CHECK(p.system_gpus == (p.system == "racks-ib" ? 3 * 72 : 3 * 8));
}
