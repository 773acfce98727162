// wiresim jobs FILE: several jobs on one fabric (scenarios/jobs.h), each alone and together,
// and the links more than one of them crossed.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "input/input_error.h"
#include "scenarios/comm_cost.h"
#include "scenarios/jobs.h"
#include "scenarios/report.h"
#include "tools/commands.h"
#include "tools/machine_input.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct JobsOptions : MachineOptions {
  std::string file;
  std::string method = "simulate";
  std::string placement = "as-given";
  std::string report;
  std::string pick;   // empty: each job's scenario's own pick:
};

// How the jobs' collectives pick their algorithms: one name where all jobs agree, else per job.
nlohmann::ordered_json picks(const scenarios::JobsSpec& spec) {
  nlohmann::ordered_json per_job;
  bool same = true;
  for (const auto& job : spec.jobs) {
    per_job[job.name] = job.scenario.pick;
    same = same && job.scenario.pick == spec.jobs.front().scenario.pick;
  }
  if (same) return spec.jobs.empty() ? nlohmann::ordered_json("fastest") : nlohmann::ordered_json(spec.jobs.front().scenario.pick);
  return per_job;
}

// What the machine differs in from the topology's healthy default, and a pick other than the
// closed form's fastest: one line each, in every output.
std::vector<std::string> conditions_of(const MachineInput& input, const scenarios::JobsSpec& spec) {
  std::vector<std::string> lines = input.conditions();
  const nlohmann::ordered_json pick = picks(spec);
  if (pick.is_object())
    lines.push_back(fmt::format("pick per job: {} (nccl: as NCCL's own cost model picks)", pick.dump()));
  else if (pick != "fastest")
    lines.push_back(pick_note(pick.get<std::string>()));
  return lines;
}

void write_report(const JobsOptions& o, const std::vector<scenarios::PlacementRun>& runs,
                  const std::vector<std::string>& conditions) {
  if (o.report.empty()) return;
  std::ofstream file(o.report);
  if (!file) throw InputError(o.report, 0, 0, "cannot write the report");
  scenarios::write_jobs_report(file, runs, conditions);
}

// The JSON's first keys: the file, the topology, the model and what the machine differs in.
nlohmann::ordered_json json_head(const JobsOptions& o, const scenarios::JobsSpec& spec, const MachineInput& input) {
  nlohmann::ordered_json out;
  out["jobs_file"] = spec.file;
  out["topology"] = spec.topology;
  out["model"] = o.method;
  if (!input.overlay.empty()) out["overlay"] = input.overlay;
  if (const std::string t = transport_note(input.transports); !t.empty()) out["transport"] = t;
  if (!input.faults.empty()) out["faults"] = input.faults;
  out["pick"] = picks(spec);
  return out;
}

// --placement compare (scenarios::compare_placements): every placement, fastest first.
int compare_placements(const JobsOptions& o, const scenarios::JobsSpec& spec, const MachineInput& input,
                       const models::Machine& machine, const scenarios::CommCost& cost) {
  const std::vector<scenarios::PlacementRun> candidates = scenarios::compare_placements(spec, machine, cost, input.limits);
  const std::vector<std::string> conditions = conditions_of(input, spec);
  write_report(o, candidates, conditions);
  if (o.format == "json") {
    nlohmann::ordered_json out = json_head(o, spec, input);
    auto& arr = out["placements"] = nlohmann::ordered_json::array();
    for (const auto& c : candidates) {
      nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
      for (std::size_t j = 0; j < c.result.jobs.size(); ++j) {
        const auto& r = c.result.jobs[j];
        jobs.push_back({{"name", r.name}, {"nodes", c.spec.jobs[j].nodes}, {"gpus", r.gpus}, {"alone_ms", r.alone.ms()},
                        {"together_ms", r.together.ms()}, {"slowdown", r.together / r.alone}});
      }
      arr.push_back({{"placement", c.names}, {"makespan_ms", c.result.makespan.ms()},
                     {"worst_slowdown", c.worst_slowdown()}, {"jobs", jobs}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("# wiresim jobs {} on {}: {} jobs, model {}; placements compared, fastest first\n", spec.file,
             spec.topology, spec.jobs.size(), o.method);
  for (const auto& line : conditions) fmt::print("# {}\n", line);
  fmt::print("{:<24} {:>13} {:>15}  {}\n", "placement", "makespan(ms)", "worst slowdown", "where each job runs");
  for (const auto& c : candidates) {
    std::vector<std::string> by_job;
    for (const auto& job : c.spec.jobs) by_job.push_back(fmt::format("{}: {}", job.name, scenarios::placement_text(job)));
    fmt::print("{:<24} {:>13.3f} {:>14.3f}x  {}\n", fmt::format("{}", fmt::join(c.names, ", ")),
               c.result.makespan.ms(), c.worst_slowdown(), fmt::join(by_job, "; "));
  }
  if (candidates.size() > 1)
    fmt::print("# {} ends {:.3f}x sooner than {}\n", candidates.front().names.front(),
               candidates.back().result.makespan / candidates.front().result.makespan, candidates.back().names.front());
  return 0;
}

int jobs(const JobsOptions& o) {
  if (o.method != "simulate" && o.method != "analytic")
    throw InputError(fmt::format("--model: expected simulate or analytic, got '{}'", o.method));
  if (o.format != "table" && o.format != "json")
    throw InputError(fmt::format("--format: expected table or json, got '{}'", o.format));
  if (o.placement != "as-given" && o.placement != "pack" && o.placement != "interleave" && o.placement != "compare")
    throw InputError(fmt::format("--placement: expected as-given, pack, interleave or compare, got '{}'", o.placement));
  scenarios::JobsSpec spec = scenarios::load_jobs(o.file);
  if (!o.pick.empty()) {
    pick_option(o.pick);   // refuses an unknown name
    for (auto& job : spec.jobs) job.scenario.pick = o.pick;
  }
  if (!o.topo.empty()) spec.topology = o.topo;
  for (const auto& [k, v] : topo::parse_overrides(o.settings)) spec.set[k] = v;
  // The file's faults, then the command line's; its transport, unless the command line names one.
  MachineOptions machine_options = o;
  machine_options.fail.insert(machine_options.fail.begin(), spec.fail.begin(), spec.fail.end());
  machine_options.degrade.insert(machine_options.degrade.begin(), spec.degrade.begin(), spec.degrade.end());
  const MachineInput input = load_machine_input(machine_options, spec.topology, spec.set, spec.transports);
  const models::Machine machine = input.machine();
  const scenarios::SimulatedComm simulated;
  const scenarios::ClosedFormComm closed_form;
  const scenarios::CommCost& cost =
      o.method == "analytic" ? static_cast<const scenarios::CommCost&>(closed_form) : simulated;
  if (o.placement == "compare") return compare_placements(o, spec, input, machine, cost);
  if (o.placement != "as-given")
    spec = scenarios::place_jobs(
        spec, o.placement == "pack" ? scenarios::PlacementPolicy::pack : scenarios::PlacementPolicy::interleave,
        input.graph);
  const scenarios::JobsResult r = scenarios::run_jobs(spec, machine, cost, input.limits);
  const std::vector<std::string> conditions = conditions_of(input, spec);
  write_report(o, {{{o.placement == "as-given" ? std::string("as given") : o.placement}, spec, r}}, conditions);
  if (o.format == "json") {
    nlohmann::ordered_json out = json_head(o, spec, input);
    out["makespan_ms"] = r.makespan.ms();
    auto& jobs = out["jobs"] = nlohmann::ordered_json::array();
    for (const auto& j : r.jobs)
      jobs.push_back({{"name", j.name}, {"gpus", j.gpus}, {"start_ms", j.start.ms()}, {"alone_ms", j.alone.ms()},
                      {"together_ms", j.together.ms()}, {"slowdown", j.together / j.alone}});
    out["shared_links_count"] = r.shared_count;
    auto& shared = out["shared_links"] = nlohmann::ordered_json::array();
    for (const auto& l : r.shared) {
      nlohmann::ordered_json bytes = nlohmann::ordered_json::object();
      for (std::size_t j = 0; j < l.bytes.size(); ++j) bytes[r.jobs[j].name] = l.bytes[j].count();
      shared.push_back({{"link", l.link}, {"bytes", bytes}, {"utilisation", l.utilisation}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("# wiresim jobs {} on {}: {} jobs, model {}\n", spec.file, spec.topology, r.jobs.size(), o.method);
  for (const auto& line : conditions) fmt::print("# {}\n", line);
  fmt::print("{:<16} {:>6} {:>10} {:>12} {:>14} {:>9}\n", "job", "GPUs", "start(ms)", "alone(ms)", "together(ms)",
             "slowdown");
  for (const auto& j : r.jobs)
    fmt::print("{:<16} {:>6} {:>10.3f} {:>12.3f} {:>14.3f} {:>8.3f}x\n", j.name, j.gpus.size(), j.start.ms(),
               j.alone.ms(), j.together.ms(), j.together / j.alone);
  fmt::print("# all jobs together end at {:.3f} ms\n", r.makespan.ms());
  if (r.shared.empty()) {
    fmt::print("# no link carried more than one job's bytes\n");
    return 0;
  }
  fmt::print("# {} links carried more than one job's bytes; the busiest (bytes / (capacity x {:.3f} ms)):\n",
             r.shared_count, r.makespan.ms());
  for (const auto& l : r.shared) {
    std::string per_job;
    for (std::size_t j = 0; j < l.bytes.size(); ++j)
      if (l.bytes[j].count() > 0.0)
        per_job += fmt::format("{}{} {}", per_job.empty() ? "" : ", ", r.jobs[j].name, sim::format_size(l.bytes[j]));
    fmt::print("#   {:<28} {:5.1f}%  {}\n", l.link, 100.0 * l.utilisation, per_job);
  }
  return 0;
}

}  // namespace

void add_jobs_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<JobsOptions>();
  auto* cmd = app.add_subcommand("jobs", "several jobs (scenarios on their own GPUs) on one fabric: alone and together");
  cmd->add_option("file", o->file, "jobs YAML file (scenarios/jobs/*.yaml)")->required();
  add_machine_options(cmd, *o, {TopologyOption::optional, "table or json"});
  cmd->add_option("--model", o->method, "simulate (default) or analytic (closed forms: no contention between jobs)");
  cmd->add_option("--placement", o->placement,
                  "as-given (default: the file's nodes and GPUs), pack (each job on the next free nodes), interleave "
                  "(nodes dealt out job after job) or compare (all three, fastest first); jobs keep their node counts");
  cmd->add_option("--pick", o->pick,
                  "how every job's collectives pick their algorithm: fastest (the closed form's) or nccl (NCCL's own cost "
                  "model); overrides each scenario's pick: (default: the scenario's, fastest if it names none)");
  cmd->add_option("--report", o->report, "write a self-contained HTML report with SVG charts");
  cmd->callback([o, exit_code] { *exit_code = jobs(*o); });
}

}  // namespace wiresim::tools
