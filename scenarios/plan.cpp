#include "scenarios/plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "input/input_error.h"
#include "scenarios/sweep.h"
#include "topologies/builder.h"

namespace wiresim::scenarios {
namespace {

// A catalogue system whose topology declares how many nodes (or NVL72 racks, a rack being one
// node there) it has is a cluster: the plan builds it with PlanSpec::nodes of them, and leaves
// it out unless asked for by name. Returns that parameter's name, or "" for a single system.
std::string size_parameter(const topo::CatalogEntry& e) {
  const auto declared = topo::declared_parameters(e.topology_path);
  for (const char* p : {"nodes", "racks"})
    if (declared.count(p)) return p;
  return "";
}

bool is_cluster(const topo::CatalogEntry& e) { return !size_parameter(e).empty(); }

std::vector<const topo::CatalogEntry*> chosen_systems(const PlanSpec& spec, const topo::Catalog& catalog) {
  std::vector<const topo::CatalogEntry*> out;
  if (spec.systems.empty()) {
    for (const auto& e : catalog.entries)
      if (!is_cluster(e)) out.push_back(&e);
  } else {
    for (const auto& name : spec.systems) out.push_back(&catalog.at(name));
  }
  return out;
}

// Marks the plans on the front: no other plan is at least as fast and as cheap, and better in one.
void mark_front(std::vector<Plan>& plans) {
  for (auto& p : plans) {
    p.front = std::none_of(plans.begin(), plans.end(), [&](const Plan& q) {
      const double lp = p.result.step.count(), lq = q.result.step.count();
      return lq <= lp && q.cost_per_mtok <= p.cost_per_mtok && (lq < lp || q.cost_per_mtok < p.cost_per_mtok);
    });
  }
}

}  // namespace

std::string bottleneck(const StepResult& r) {
  const StepBound b = step_bound(r);
  if (!b.communication) return "compute";
  const std::string kind = b.slowest ? b.collective : "communication";
  return b.tier.empty() ? kind : fmt::format("{} over {}", kind, b.tier);
}

PlanResult run_plan(const PlanSpec& spec, const topo::Catalog& catalog, const models::Params& params, int threads,
                    const std::function<void(const std::string&)>& progress, const CommCost* cost) {
  PlanResult out;
  std::vector<Plan> all;
  for (const topo::CatalogEntry* e : chosen_systems(spec, catalog)) {
    const auto flops = e->peak_flops.find(spec.model.dtype);
    if (flops == e->peak_flops.end() || !flops->second.value || !e->memory_bandwidth.value || !e->memory.value ||
        !e->price_per_gpu_hour_usd.value) {
      const std::string missing = flops == e->peak_flops.end() || !flops->second.value
                                      ? fmt::format("{} peak FLOP/s (the {} GPU may not support it)", spec.model.dtype,
                                                    e->accelerator)
                                      : "memory, HBM bandwidth or price";
      out.notes.push_back(fmt::format("{}: left out, the catalogue gives no {}", e->name, missing));
      continue;
    }
    topo::Overrides overrides;
    if (const std::string p = size_parameter(*e); !p.empty()) overrides[p] = std::to_string(spec.nodes);
    const topo::LinkGraph graph = topo::load_topology(e->topology_path, overrides);
    const models::Machine machine(graph, params, spec.transports);
    const int system_gpus = static_cast<int>(graph.gpus().size());
    if (progress) progress(fmt::format("{} ({} GPUs)", e->name, system_gpus));
    for (int g = 1; g <= std::min(system_gpus, spec.max_gpus); g *= 2) {
      PlanResult::Fit& fit = out.fits.emplace_back(PlanResult::Fit{e->name, g, 0, {}});
      for (long b = 1; b <= spec.max_batch; b *= 2) {
        SweepSpec s;
        s.model = spec.model;
        s.workload.phase = spec.phase;
        if (spec.phase == Phase::decode) {
          s.workload.batch = b;
          s.workload.context = spec.context;
        } else {
          s.workload.tokens = b * spec.prompt;
        }
        s.gpus = g;
        s.topology = e->name;
        s.gpu_memory = *e->memory.value;
        s.compute.peak_flops = *flops->second.value * spec.efficiency.mfu;
        s.compute.memory_bandwidth = *e->memory_bandwidth.value * spec.efficiency.mbu;
        s.limits = spec.limits;
        s.max_dp = 1;
        SweepResult r;
        try {
          r = run_sweep(s, machine, threads, nullptr, cost);
        } catch (const input::InputError&) {
          // No layout of g GPUs holds this batch: a larger batch will not fit either.
          const auto layouts = enumerate_layouts(spec.model, g, 1);
          out.counts.too_big += static_cast<int>(std::count_if(layouts.begin(), layouts.end(),
                                                               [](const Layout& l) { return l.dp == 1; }));
          fit.stopped = "memory";
          break;
        }
        out.counts.too_big += r.counts.too_big;
        fit.largest_batch = b;
        bool any_within = false;   // some layout's step within the latency target
        for (auto& row : r.rows) {
          Plan p;
          p.system = e->name;
          p.accelerator = e->accelerator;
          p.gpus = g;
          p.system_gpus = system_gpus;
          p.layout = row.layout;
          p.batch = b;
          p.price_per_gpu_hour = *e->price_per_gpu_hour_usd.value;
          p.result = std::move(row.result);
          p.tokens_per_s = p.result.tokens_per_s;
          p.cost_per_mtok = p.tokens_per_s > 0.0 ? p.price_per_gpu_hour * g / 3600.0 / p.tokens_per_s * 1e6 : INFINITY;
          p.meets_target = (!spec.max_latency || p.result.step <= *spec.max_latency) &&
                           p.tokens_per_s >= spec.min_tokens_per_s;
          p.bottleneck = bottleneck(p.result);
          any_within = any_within || !spec.max_latency || p.result.step <= *spec.max_latency;
          ++out.counts.evaluated;
          if (!p.meets_target) ++out.counts.missed;
          all.push_back(std::move(p));
        }
        // A larger batch takes longer per step: once every layout misses the latency, stop.
        if (!any_within) {
          fit.stopped = "target";
          break;
        }
      }
    }
  }
  for (auto& p : all)
    if (p.meets_target) out.plans.push_back(p);
  std::stable_sort(out.plans.begin(), out.plans.end(), [](const Plan& a, const Plan& b) {
    return a.cost_per_mtok != b.cost_per_mtok ? a.cost_per_mtok < b.cost_per_mtok : a.result.step < b.result.step;
  });
  mark_front(out.plans);
  if (out.plans.empty()) {
    out.closest = all;
    std::stable_sort(out.closest.begin(), out.closest.end(),
                     [](const Plan& a, const Plan& b) { return a.result.step < b.result.step; });
    if (out.closest.size() > 5) out.closest.resize(5);
  }
  return out;
}

}  // namespace wiresim::scenarios
