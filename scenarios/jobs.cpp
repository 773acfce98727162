#include "scenarios/jobs.h"

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "input/document.h"
#include "input/file.h"
#include "input/input_error.h"
#include "input/keys.h"
#include "input/units.h"
#include "scenarios/step.h"

namespace wiresim::scenarios {

std::string placement_text(const Job& job) {
  return job.nodes.empty() ? fmt::format("GPUs {}", fmt::join(job.gpus, ","))
                           : fmt::format("nodes {}", fmt::join(job.nodes, ","));
}
namespace {

using input::Value;

constexpr std::array<std::string_view, 7> kTopKeys{"name", "description", "topology", "set", "faults", "transport", "jobs"};
constexpr std::array<std::string_view, 5> kJobKeys{"name", "scenario", "nodes", "gpus", "start"};

std::vector<int> indices(const Value& v, const std::string& path) {
  input::require_sequence(v, path);
  if (v.items.empty()) input::fail(v, path + ": expected at least one index");
  std::vector<int> out;
  for (std::size_t i = 0; i < v.items.size(); ++i)
    out.push_back(static_cast<int>(input::as_count(v.items[i], input::index_path(path, i), 0, 10'000'000)));
  return out;
}

[[noreturn]] void job_error(const JobsSpec& spec, const Job& job, const std::string& what) {
  throw input::InputError(spec.file, job.line, job.column, fmt::format("job {}: {}", job.name, what));
}

// The job's GPUs in rank order, checked against the topology.
std::vector<int> job_gpus(const JobsSpec& spec, const Job& job, const topo::LinkGraph& graph) {
  const int total = static_cast<int>(graph.gpus().size());
  if (!job.gpus.empty()) {
    for (int g : job.gpus)
      if (g >= total) job_error(spec, job, fmt::format("GPU {} does not exist: {} has GPUs 0..{}", g, graph.source, total - 1));
    return job.gpus;
  }
  std::vector<int> out;
  for (int n : job.nodes) {
    const std::size_t before = out.size();
    for (int g = 0; g < total; ++g)
      if (graph.device(graph.gpus()[g]).node == n) out.push_back(g);
    if (out.size() == before) job_error(spec, job, fmt::format("node {} has no GPU in {}", n, graph.source));
  }
  return out;
}

}  // namespace

JobsSpec load_jobs(const std::string& path, const std::map<std::string, std::string>& overrides) {
  const Value doc = input::read_document(path, overrides);
  input::require_map(doc, "jobs file");
  input::check_keys(doc, kTopKeys, "");
  JobsSpec spec;
  spec.file = path;
  FileHead head = read_head(doc, path);
  spec.name = std::move(head.name);
  spec.topology = std::move(head.topology);
  spec.set = std::move(head.set);
  if (const Value* f = input::find(doc, "faults")) read_faults(*f, spec.fail, spec.degrade);
  if (const Value* t = input::find(doc, "transport")) read_transports(*t, spec.transports);
  const Value& jobs = input::require(doc, "jobs", "");
  input::require_sequence(jobs, "jobs");
  if (jobs.items.empty()) input::fail(jobs, "jobs: expected at least one job");
  std::set<std::string> names;
  for (std::size_t i = 0; i < jobs.items.size(); ++i) {
    const Value& v = jobs.items[i];
    const std::string at = input::index_path("jobs", i);
    input::require_map(v, at);
    input::check_keys(v, kJobKeys, at);
    Job job;
    job.line = v.at.line;
    job.column = v.at.column;
    job.name = fmt::format("{}", i);
    if (const Value* n = input::find(v, "name")) job.name = input::as_string(*n, at + ".name");
    if (!names.insert(job.name).second) input::fail(v, fmt::format("{}: a second job named '{}'", at, job.name));
    const Value* nodes = input::find(v, "nodes");
    const Value* gpus = input::find(v, "gpus");
    if (!nodes == !gpus) input::fail(v, fmt::format("{}: give the job's GPUs as nodes: [...] or gpus: [...] (one of them)", at));
    if (nodes) job.nodes = indices(*nodes, at + ".nodes");
    if (gpus) job.gpus = indices(*gpus, at + ".gpus");
    if (const Value* s = input::find(v, "start")) job.start = input::as_duration(*s, at + ".start");
    job.scenario = load_scenario(input::beside(path, input::as_string(input::require(v, "scenario", at), at + ".scenario")));
    if (job.scenario.workload.decode_offset > 0)
      input::fail(v, fmt::format("{}: a disaggregated scenario places its decode GPUs by offset; give the prefill and "
                                 "the decode as two jobs",
                                 at));
    spec.jobs.push_back(std::move(job));
  }
  return spec;
}

JobsResult run_jobs(const JobsSpec& spec, const models::Machine& machine, const CommCost& cost,
                    const models::Limits& limits) {
  const topo::LinkGraph& graph = machine.graph();
  JobsResult out;
  std::map<int, std::string> owner;   // GPU -> job
  std::vector<StepResult> alone;
  double nodes = 0.0;
  for (const Job& job : spec.jobs) {
    JobOutcome o;
    o.name = job.name;
    o.start = job.start;
    o.gpus = job_gpus(spec, job, graph);
    Scenario s = job.scenario;
    if (static_cast<int>(o.gpus.size()) != s.layout.gpus())
      job_error(spec, job, fmt::format("its layout (tp {} x pp {} x dp {}) needs {} GPUs; it was given {}", s.layout.tp,
                                       s.layout.pp, s.layout.dp, s.layout.gpus(), o.gpus.size()));
    for (int g : o.gpus)
      if (auto [it, fresh] = owner.emplace(g, job.name); !fresh)
        job_error(spec, job, fmt::format("GPU {} is job {}'s already; jobs may not share a GPU", g, it->second));
    s.layout.placement = Placement::explicit_map;
    s.layout.rank_map = o.gpus;
    alone.push_back(run_step(s, machine, cost, limits));
    o.alone = alone.back().step;
    nodes += static_cast<double>(alone.back().dag.size());
    out.jobs.push_back(std::move(o));
  }
  if (nodes * models::kBytesPerNode > limits.max_memory.count() || 2.0 * nodes > limits.max_events)
    throw input::InputError(spec.file, 0, 0,
                            fmt::format("the jobs together make {:.3g} transfers and delays, needing about {} of memory "
                                        "and {:.3g} events; the limits are {} (--max-memory) and {:.3g} (--max-events)",
                                        nodes, sim::format_size(sim::Bytes{nodes * models::kBytesPerNode}), 2.0 * nodes,
                                        sim::format_size(limits.max_memory), limits.max_events));

  // One DAG: each job after a delay of its start, its GPUs its own processors, its
  // communicators renumbered apart from the other jobs'.
  sim::TransferDag dag;
  std::vector<std::pair<sim::NodeId, sim::NodeId>> range;   // [first, last) per job
  for (std::size_t j = 0; j < alone.size(); ++j) {
    const sim::TransferDag& part = alone[j].dag;
    part.freeze();
    const sim::NodeId first = static_cast<sim::NodeId>(dag.size());
    const std::uint32_t communicators = static_cast<std::uint32_t>(j) << 20;
    const sim::NodeId offset = dag.append(part, {}, [&](std::uint32_t p) {
      return p < kCommunicatorBase ? p : p + communicators;   // GPUs keep theirs; communicators shift
    });
    const sim::NodeId start = dag.add_delay(out.jobs[j].start, dag.intern_label("job start"),
                                            static_cast<std::uint32_t>(out.jobs[j].gpus.front()));
    for (sim::NodeId i = 0; i < part.size(); ++i)
      if (part.predecessor_count(i) == 0) dag.add_dependency(start, offset + i);
    range.emplace_back(first, static_cast<sim::NodeId>(dag.size()));
  }
  const sim::RunResult run = sim::run_dag(machine.links(), dag);
  out.makespan = run.makespan;
  for (std::size_t j = 0; j < range.size(); ++j) {
    sim::Seconds end{0.0};
    for (sim::NodeId i = range[j].first; i < range[j].second; ++i) end = std::max(end, run.nodes[i].end);
    out.jobs[j].together = end - out.jobs[j].start;
  }

  // Which links more than one job crossed, and how busy they were.
  std::map<sim::LinkId, std::vector<sim::Bytes>> per_link;
  for (std::size_t j = 0; j < range.size(); ++j)
    for (sim::NodeId i = range[j].first; i < range[j].second; ++i) {
      const sim::DagNode& n = dag.node(i);
      if (n.kind != sim::NodeKind::transfer) continue;
      for (sim::LinkId l : dag.links(i)) {
        auto& bytes = per_link[l];
        if (bytes.empty()) bytes.resize(range.size());
        bytes[j] += n.bytes;
      }
    }
  for (const auto& [l, bytes] : per_link) {
    if (std::count_if(bytes.begin(), bytes.end(), [](sim::Bytes b) { return b.count() > 0.0; }) < 2) continue;
    double total = 0.0;
    for (sim::Bytes b : bytes) total += b.count();
    const double capacity = machine.links()[l].capacity.count();
    out.shared.push_back({graph.link_label(l), bytes,
                          out.makespan.count() > 0.0 ? total / (capacity * out.makespan.count()) : 0.0});
  }
  out.shared_count = out.shared.size();
  std::stable_sort(out.shared.begin(), out.shared.end(),
                   [](const SharedLink& a, const SharedLink& b) { return a.utilisation > b.utilisation; });
  if (out.shared.size() > 10) out.shared.resize(10);
  return out;
}

std::string_view to_string(PlacementPolicy p) {
  return p == PlacementPolicy::pack ? "pack" : "interleave";
}

JobsSpec place_jobs(const JobsSpec& spec, PlacementPolicy policy, const topo::LinkGraph& graph) {
  std::set<int> gpu_nodes;
  for (auto gpu : graph.gpus()) gpu_nodes.insert(graph.device(gpu).node);
  const int available = static_cast<int>(gpu_nodes.size());
  int needed = 0;
  for (const Job& job : spec.jobs) {
    if (job.nodes.empty())
      job_error(spec, job, fmt::format("placement {} moves whole nodes: give the job's GPUs as nodes: [...]",
                                       to_string(policy)));
    needed += static_cast<int>(job.nodes.size());
  }
  if (needed > available)
    throw input::InputError(spec.file, 0, 0,
                            fmt::format("the jobs take {} nodes and {} has {}: no placement fits them", needed,
                                        graph.source, available));
  const std::vector<int> ids(gpu_nodes.begin(), gpu_nodes.end());
  JobsSpec out = spec;
  for (Job& job : out.jobs) job.nodes.clear();
  std::size_t next = 0;
  if (policy == PlacementPolicy::pack) {
    for (std::size_t j = 0; j < out.jobs.size(); ++j)
      for (std::size_t k = 0; k < spec.jobs[j].nodes.size(); ++k) out.jobs[j].nodes.push_back(ids[next++]);
    return out;
  }
  // Deal one node to each job still short of its count, job after job, until all have theirs.
  for (bool dealt = true; dealt;) {
    dealt = false;
    for (std::size_t j = 0; j < out.jobs.size(); ++j)
      if (out.jobs[j].nodes.size() < spec.jobs[j].nodes.size()) {
        out.jobs[j].nodes.push_back(ids[next++]);
        dealt = true;
      }
  }
  return out;
}

double PlacementRun::worst_slowdown() const {
  double worst = 0.0;
  for (const auto& j : result.jobs) worst = std::max(worst, j.together / j.alone);
  return worst;
}

std::vector<PlacementRun> compare_placements(const JobsSpec& spec, const models::Machine& machine,
                                             const CommCost& cost, const models::Limits& limits) {
  std::vector<PlacementRun> runs{{{"as given"}, spec, {}}};
  for (const auto policy : {PlacementPolicy::pack, PlacementPolicy::interleave}) {
    JobsSpec placed = place_jobs(spec, policy, machine.graph());
    const auto same = [&](const PlacementRun& r) {
      for (std::size_t j = 0; j < placed.jobs.size(); ++j)
        if (r.spec.jobs[j].nodes != placed.jobs[j].nodes || r.spec.jobs[j].gpus != placed.jobs[j].gpus) return false;
      return true;
    };
    if (auto it = std::find_if(runs.begin(), runs.end(), same); it != runs.end())
      it->names.emplace_back(to_string(policy));
    else
      runs.push_back({{std::string(to_string(policy))}, std::move(placed), {}});
  }
  for (auto& r : runs) r.result = run_jobs(r.spec, machine, cost, limits);
  std::stable_sort(runs.begin(), runs.end(),
                   [](const PlacementRun& a, const PlacementRun& b) { return a.result.makespan < b.result.makespan; });
  return runs;
}

}  // namespace wiresim::scenarios
