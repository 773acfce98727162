// wiresim jobs FILE: several jobs on one fabric (scenarios/jobs.h), each alone and together,
// and the links more than one of them crossed.
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "input/input_error.h"
#include "scenarios/comm_cost.h"
#include "scenarios/jobs.h"
#include "tools/commands.h"
#include "tools/machine_input.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct JobsOptions : MachineOptions {
  std::string file;
  std::string method = "simulate";
};

int jobs(const JobsOptions& o) {
  if (o.method != "simulate" && o.method != "analytic")
    throw InputError(fmt::format("--model: expected simulate or analytic, got '{}'", o.method));
  if (o.format != "table" && o.format != "json")
    throw InputError(fmt::format("--format: expected table or json, got '{}'", o.format));
  scenarios::JobsSpec spec = scenarios::load_jobs(o.file);
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
  const scenarios::JobsResult r = scenarios::run_jobs(spec, machine, cost, input.limits);
  if (o.format == "json") {
    nlohmann::ordered_json out;
    out["jobs_file"] = spec.file;
    out["topology"] = spec.topology;
    out["model"] = o.method;
    if (!input.overlay.empty()) out["overlay"] = input.overlay;
    if (const std::string t = transport_note(input.transports); !t.empty()) out["transport"] = t;
    if (!input.faults.empty()) out["faults"] = input.faults;
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
  const std::string transport = transport_note(input.transports);
  fmt::print("# wiresim jobs {} on {}: {} jobs, model {}{}{}\n", spec.file, spec.topology, r.jobs.size(), o.method,
             input.faults.empty() ? "" : "; faults: " + input.faults, transport.empty() ? "" : "; " + transport);
  if (!input.overlay.empty()) fmt::print("# overlay {}\n", input.overlay);
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
  cmd->callback([o, exit_code] { *exit_code = jobs(*o); });
}

}  // namespace wiresim::tools
