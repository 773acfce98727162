#include "scenarios/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "input/input_error.h"

namespace wiresim::scenarios {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

double score(const StepResult& r, Objective o) {
  switch (o) {
    case Objective::step_time: return r.step.count();
    case Objective::comm_time: return r.exposed_comm.count();
    case Objective::tokens_per_s: return -r.tokens_per_s;
  }
  return 0.0;
}

// One sentence on why a layout lands where it does: where its heaviest traffic goes.
std::string explain(const SweepRow& row, const StepResult& best) {
  const StepResult& r = row.result;
  const StepBound b = step_bound(r);
  const std::string heaviest =
      b.slowest ? fmt::format("{} x {} ({})", b.slowest->count, b.collective, b.slowest->algorithm) : "";
  const double slower = best.step.count() > 0.0 ? r.step / best.step : 1.0;
  const std::string name = row.micro_batches > 1
                               ? fmt::format("{} in {} micro-batches", layout_name(row.layout), row.micro_batches)
                               : layout_name(row.layout);
  if (heaviest.empty()) return fmt::format("{}: no communication; {:.2f} ms of compute.", name, r.compute.ms());
  return fmt::format("{}: {:.2f} ms per step ({:.2f}x the best); most time in {}, most link time over {}; "
                     "{:.2f} ms of communication exposed.",
                     name, r.step.ms(), slower, heaviest, b.tier.empty() ? "no link" : b.tier, r.exposed_comm.ms());
}

}  // namespace

std::string layout_name(const Layout& l) {
  return fmt::format("tp{} ep{} pp{} dp{} {}", l.tp, l.ep, l.pp, l.dp,
                     l.placement == Placement::pack ? "pack" : l.placement == Placement::spread ? "spread" : "explicit");
}

std::vector<Layout> enumerate_layouts(const ModelShape& model, int gpus, int nodes) {
  std::vector<Layout> out;
  for (int tp : divisors(gpus))
    for (int pp : divisors(gpus / tp)) {
      const int dp = gpus / (tp * pp);
      std::vector<int> eps{1};
      if (model.experts > 0)
        for (int ep : divisors(tp * dp))
          if (ep > 1 && ep <= model.experts) eps.push_back(ep);   // uneven: some ranks host one fewer
      for (int ep : eps)
        for (Placement placement : {Placement::pack, Placement::spread}) {
          if (placement == Placement::spread && (nodes < 2 || tp == 1)) continue;
          Layout l;
          l.tp = tp;
          l.pp = pp;
          l.dp = dp;
          l.ep = ep;
          l.placement = placement;
          if (!layout_problem(model, l, gpus)) out.push_back(l);
        }
    }
  return out;
}

SweepResult run_sweep(const SweepSpec& spec, const models::Machine& machine, int threads,
                      const std::function<void(int, int)>& progress, const CommCost* cost) {
  const topo::LinkGraph& graph = machine.graph();
  SweepResult out;
  std::set<int> node_ids;
  for (auto g : graph.gpus()) node_ids.insert(graph.device(g).node);
  if (spec.gpus < 1 || spec.gpus > static_cast<int>(graph.gpus().size()))
    throw input::InputError(fmt::format("--gpus: expected 1..{} (the GPUs in {}), got {}", graph.gpus().size(),
                                      spec.topology, spec.gpus));
  auto all = enumerate_layouts(spec.model, spec.gpus, static_cast<int>(node_ids.size()));
  if (spec.max_dp > 0) std::erase_if(all, [&](const Layout& l) { return l.dp > spec.max_dp; });
  std::vector<Layout> layouts;
  std::string too_big;   // why the last layout left out was
  for (const auto& l : all) {
    const auto why = memory_problem(memory_per_gpu(spec.model, l, spec.workload), spec.gpu_memory);
    if (why) too_big = fmt::format("{}: {}", layout_name(l), *why);
    else layouts.push_back(l);
  }
  out.counts.enumerated = static_cast<int>(all.size());
  out.counts.too_big = static_cast<int>(all.size() - layouts.size());
  if (layouts.empty() && !all.empty())
    throw input::InputError(fmt::format("no layout of {} GPUs fits the model in {:.0f} GB per GPU (--gpu-memory); {}",
                                        spec.gpus, spec.gpu_memory.count() / 1e9, too_big));
  if (layouts.empty())
    throw input::InputError(fmt::format("no layout of {} GPUs fits the model (heads {}, layers {}, experts {})", spec.gpus,
                                      spec.model.heads, spec.model.layers, spec.model.experts));
  constexpr std::size_t kMaxLayouts = 100'000;
  if (layouts.size() > kMaxLayouts)
    throw input::InputError(fmt::format("the sweep has {} layouts, over the limit of {}", layouts.size(), kMaxLayouts));
  if (spec.shards > 1) {
    std::vector<Layout> mine;
    for (std::size_t i = static_cast<std::size_t>(spec.shard); i < layouts.size(); i += static_cast<std::size_t>(spec.shards))
      mine.push_back(layouts[i]);
    layouts.swap(mine);
  }
  std::vector<SweepRow> rows(layouts.size());
  std::vector<std::string> errors(layouts.size());
  std::atomic<std::size_t> next{0};
  std::atomic<int> done{0};
  const int n_threads = std::max(1, std::min<int>(threads, static_cast<int>(layouts.size())));
  models::Limits per_worker = spec.limits;
  per_worker.max_memory = spec.limits.max_memory / static_cast<double>(n_threads);
  const SimulatedComm simulate;
  const CommCost& comm = cost ? *cost : simulate;
  const auto worker = [&] {
    // A machine per thread: its route caches are its own.
    const models::Machine local(graph, machine.params(), machine.transports());
    for (std::size_t i; (i = next.fetch_add(1)) < layouts.size();) {
      Scenario s;
      s.name = layout_name(layouts[i]);
      s.file = spec.topology;
      s.model = spec.model;
      s.workload = spec.workload;
      s.layout = layouts[i];
      s.compute = spec.compute;
      s.pick = spec.pick;
      rows[i].index = static_cast<int>(i) * spec.shards + spec.shard;
      rows[i].layout = layouts[i];
      // Micro-batch counts to try: the one asked for, or 1, 2, 4, 8 (as many as the batch
      // allows); the best by the objective wins, the smaller count on a tie.
      const long batch = s.workload.phase == Phase::prefill ? s.workload.tokens : s.workload.batch;
      std::vector<int> counts;
      if (spec.workload.micro_batches > 0) counts.push_back(spec.workload.micro_batches);
      else
        for (int m : {1, 2, 4, 8})
          if (m <= batch) counts.push_back(m);
      bool have = false;
      for (int m : counts) {
        s.workload.micro_batches = m;
        try {
          StepResult r = run_step(s, local, comm, per_worker);
          r.dag = sim::TransferDag{};
          r.run = sim::RunResult{};
          if (!have || score(r, spec.objective) < score(rows[i].result, spec.objective)) {
            rows[i].result = std::move(r);
            rows[i].micro_batches = m;
          }
          have = true;
        } catch (const std::exception& e) {
          if (errors[i].empty()) errors[i] = e.what();
        }
      }
      if (have) errors[i].clear();
      ++done;
    }
  };
  std::vector<std::thread> pool;
  if (n_threads > 1)
    for (int t = 0; t < n_threads; ++t) pool.emplace_back(worker);
  if (n_threads == 1) {
    worker();
  } else if (progress) {   // without a progress callback the pool is only joined
    int shown = -1;
    while (done.load() < static_cast<int>(layouts.size())) {
      if (progress && done.load() != shown) progress(shown = done.load(), static_cast<int>(layouts.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  for (auto& t : pool) t.join();
  if (progress) progress(static_cast<int>(layouts.size()), static_cast<int>(layouts.size()));
  for (std::size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty()) throw input::InputError(fmt::format("layout {}: {}", layout_name(layouts[i]), errors[i]));
  out.rows = spec.shards > 1 ? std::move(rows) : rank_sweep(std::move(rows), spec.objective);
  return out;
}

std::vector<SweepRow> rank_sweep(std::vector<SweepRow> rows, Objective objective) {
  std::sort(rows.begin(), rows.end(), [&](const SweepRow& a, const SweepRow& b) {
    const double sa = score(a.result, objective), sb = score(b.result, objective);
    return sa != sb ? sa < sb : a.index < b.index;
  });
  for (auto& row : rows) row.explanation = rows.empty() ? "" : explain(row, rows.front().result);
  return rows;
}

}  // namespace wiresim::scenarios
