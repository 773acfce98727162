#include "models/run.h"

#include <algorithm>

#include "models/alpha_beta.h"

namespace wiresim::models {

Outcome run_collective(const Machine& machine, const Problem& problem, const Choice& choice, Method method,
                       Detail* detail, const sim::RunOptions& options) {
  Outcome out;
  out.choice = choice;
  if (method == Method::analytic) {
    const Estimate e = estimate(machine, problem, choice);
    out.time = e.time;
    out.shape = e.formula;
  } else {
    Detail local;
    Detail& d = detail ? *detail : local;
    d.plan = expand(machine, problem, choice);
    d.run = sim::run_dag(machine.links(), d.plan.dag, options);
    out.time = d.run.makespan;
    out.local_reshares = d.run.local_reshares;
    out.shape = d.plan.shape;
    for (sim::NodeId i = 0; i < d.plan.dag.size(); ++i)
      out.transfers += d.plan.dag.node(i).kind == sim::NodeKind::transfer;
    const double span = out.time.count();
    for (sim::LinkId l = 0; l < d.run.links.size(); ++l) {
      const auto& stats = d.run.links[l];
      if (stats.carried.count() <= 0.0 || span <= 0.0) continue;
      out.hottest.push_back({l, stats.utilisation, stats.carried});
    }
    std::stable_sort(out.hottest.begin(), out.hottest.end(),
                     [](const auto& a, const auto& b) { return a.utilisation > b.utilisation; });
    if (out.hottest.size() > 5) out.hottest.resize(5);
  }
  const double seconds = out.time.count();
  out.algbw_GBps = seconds > 0.0 ? problem.size.count() / seconds / 1e9 : 0.0;
  out.busbw_GBps = out.algbw_GBps * bus_factor(problem.op, static_cast<int>(problem.ranks.size()));
  return out;
}

}  // namespace wiresim::models
