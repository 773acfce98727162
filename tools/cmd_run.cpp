// wiresim run SCENARIO.yaml: one inference step of a scenario, simulated (or its closed
// form, or the back-of-the-envelope naive estimate beside the simulation).
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/limits.h"
#include "models/params.h"
#include "scenarios/scenario.h"
#include "scenarios/step.h"
#include "input/input_error.h"
#include "sim/trace.h"
#include "tools/commands.h"
#include "tools/machine_input.h"
#include "tools/step_bands.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct RunOptions : MachineOptions {
  std::string scenario;
  std::string method = "simulate";
  std::string trace;
  std::string pick;
  bool bands = false;
  bool explain = false;
};

// --explain: what bounds the step, and how each communicator's GPUs exchange.
void print_explain(const scenarios::StepResult& r) {
  const double hidden = std::max(0.0, r.comm.ms() - r.exposed_comm.ms());
  fmt::print("\nexplain:\n");
  const scenarios::StepBound b = scenarios::step_bound(r);
  fmt::print("  bound by {}: {:.3f} ms of the {:.3f} ms step is exposed communication; {:.3f} ms of communication "
             "is hidden behind compute\n",
             b.communication ? "communication" : "compute", r.exposed_comm.ms(), r.step.ms(), hidden);
  if (b.slowest)
    fmt::print("  slowest collective: {} ({}, {:.3f} ms in flight); busiest tier: {}\n", b.collective,
               b.slowest->algorithm, b.slowest->time.ms(),
               b.busiest ? fmt::format("{} ({:.3f} ms of link time)", b.tier, b.busiest->busy.ms()) : "none");
  for (const auto& g : r.groups)
    fmt::print("  {} over GPUs {}: {}{}{}\n", g.kind, fmt::join(g.gpus, ","), g.transports,
               g.shm ? " — staged through host memory (SHM: each transfer is copied into and out of a CPU buffer)" : "",
               !g.net_via_host ? ""
               : g.transports.find("NET/Socket") != std::string::npos
                   ? " — NET/Socket through host memory (kernel TCP moves host buffers only; one socket per connection)"
                   : " — NET through host memory (no GPUDirect RDMA: the NIC reads and writes a CPU buffer)");
}

std::string layout_text(const scenarios::Layout& l) {
  const char* placement = l.placement == scenarios::Placement::pack     ? "pack"
                          : l.placement == scenarios::Placement::spread ? "spread"
                                                                        : "explicit";
  return fmt::format("tp {} ep {} pp {} dp {} ({})", l.tp, l.ep, l.pp, l.dp, placement);
}

// The calibration overlay this run is under (empty: none), named in every output; likewise
// a transport that is not NCCL's default and the --fail/--degrade faults.
std::string overlay_note;
std::string transport;
std::string faults_note;
// --bands: the interval of the step time (null: not asked for).
const StepInterval* band = nullptr;

nlohmann::ordered_json to_json(const scenarios::Scenario& s, const std::string& topo, const std::string& method,
                               const scenarios::StepResult& r) {
  nlohmann::ordered_json out;
  out["scenario"] = s.name;
  out["topology"] = topo;
  out["method"] = method;
  if (!overlay_note.empty()) out["overlay"] = overlay_note;
  if (!transport.empty()) out["transport"] = transport;
  if (!faults_note.empty()) out["faults"] = faults_note;
  out["pick"] = s.pick;
  out["model"] = s.model.name;
  out["phase"] = s.workload.phase == scenarios::Phase::prefill  ? "prefill"
                 : s.workload.phase == scenarios::Phase::decode ? "decode"
                                                                : "load";
  if (s.workload.phase == scenarios::Phase::load) out["load_from"] = scenarios::load_source_text(s.workload);
  out["layout"] = {{"tp", s.layout.tp}, {"ep", s.layout.ep}, {"pp", s.layout.pp}, {"dp", s.layout.dp},
                   {"gpus", s.layout.gpus()}};
  out["micro_batches"] = s.workload.micro_batches;
  out["step_time_ms"] = r.step.ms();
  if (band) {
    out["step_time_ms_lo"] = band->low_ms;
    out["step_time_ms_hi"] = band->high_ms;
    out["band_class"] = band->hw_class;
  }
  out["comm_time_ms"] = r.comm.ms();
  out["exposed_comm_ms"] = r.exposed_comm.ms();
  out["compute_time_ms"] = r.compute.ms();
  out["tokens_per_s"] = r.tokens_per_s;
  out["memory_per_gpu_GB"] = {{"weights", r.memory.weights.count() / 1e9},
                              {"kv_cache", r.memory.kv_cache.count() / 1e9},
                              {"activations", r.memory.activations.count() / 1e9},
                              {"total", r.memory.total().count() / 1e9},
                              {"capacity", r.gpu_memory.count() > 0.0 ? nlohmann::ordered_json(r.gpu_memory.count() / 1e9)
                                                                      : nlohmann::ordered_json(nullptr)}};
  if (r.offload)
    out["offload"] = {{"host", scenarios::offload_place_text(s.workload.offload)},
                      {"kv_share", s.workload.offload.kv},
                      {"weights_share", s.workload.offload.weights},
                      {"to_gpu_bytes", r.offload->to_gpu.count()},
                      {"to_host_bytes", r.offload->to_host.count()},
                      {"time_ms", r.offload->time.ms()},
                      {"exposed_ms", r.offload->exposed.ms()}};
  out["compute_utilisation"] = r.compute_utilisation;
  out["per_token_latency_ms"] = r.per_token_latency.ms();
  nlohmann::ordered_json by_collective = nlohmann::ordered_json::object();
  for (const auto& [kind, c] : r.by_collective)
    by_collective[kind] = {{"count", c.count}, {"bytes", c.bytes.count()}, {"time_ms", c.time.ms()},
                           {"algorithm", c.algorithm}};
  nlohmann::ordered_json by_tier = nlohmann::ordered_json::object();
  for (const auto& [tier, t] : r.by_tier) by_tier[tier] = {{"bytes", t.bytes.count()}, {"busy_ms", t.busy.ms()}};
  out["breakdown"] = {{"by_collective", by_collective}, {"by_tier", by_tier}};
  auto& busiest = out["busiest_links"] = nlohmann::ordered_json::array();
  for (const auto& h : r.busiest) busiest.push_back({{"link", h.link}, {"utilisation", h.utilisation}});
  auto& groups = out["groups"] = nlohmann::ordered_json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"kind", g.kind}, {"gpus", g.gpus}, {"transports", g.transports}, {"host_memory_staging", g.staged}});
  if (!r.note.empty()) out["note"] = r.note;
  return out;
}

void print_table(const scenarios::Scenario& s, const std::string& topo, const std::string& method,
                 const scenarios::StepResult& r, const scenarios::StepResult* simulated) {
  const auto& m = s.model;
  fmt::print("# wiresim run {} on {} ({} GPUs), method {}\n", s.name, topo, s.layout.gpus(), method);
  if (!overlay_note.empty()) fmt::print("# overlay {}\n", overlay_note);
  if (!transport.empty()) fmt::print("# {}\n", transport);
  if (!faults_note.empty()) fmt::print("# faults: {}\n", faults_note);
  if (s.pick != "fastest") fmt::print("# {}\n", pick_note(s.pick));
  fmt::print("# model {}: hidden {}, {} layers, {} heads ({} kv), {}{}\n", m.name.empty() ? "?" : m.name, m.hidden,
             m.layers, m.heads, m.kv_heads, m.dtype,
             m.experts ? fmt::format(", {} experts top-{} ({} routing)", m.experts, m.top_k, m.routing) : "");
  const std::string split =
      s.workload.micro_batches > 1 ? fmt::format(" in {} micro-batches", s.workload.micro_batches) : "";
  if (s.workload.phase == scenarios::Phase::prefill)
    fmt::print("# prefill of {} tokens per replica{}; layout {}\n", s.workload.tokens, split, layout_text(s.layout));
  else if (s.workload.phase == scenarios::Phase::decode)
    fmt::print("# decode of {} sequences per replica (context {}){}; layout {}\n", s.workload.batch, s.workload.context,
               split, layout_text(s.layout));
  else
    fmt::print("# load of the weights from {}; layout {}\n", scenarios::load_source_text(s.workload),
               layout_text(s.layout));
  if (s.workload.offload.any())
    fmt::print("# offload: {:.0f}% of the KV cache and {:.0f}% of the weights in {}, copied in every step\n",
               100.0 * s.workload.offload.kv, 100.0 * s.workload.offload.weights,
               scenarios::offload_place_text(s.workload.offload));
  fmt::print("{:<24} {:>12.3f} ms\n", "step time", r.step.ms());
  if (band)
    fmt::print("{:<24} {:>12.3f} .. {:.3f} ms   (8 in 10 on validation data of class {}; exposed communication scaled)\n",
               "step time band", band->low_ms, band->high_ms, band->hw_class);
  fmt::print("{:<24} {:>12.3f} ms   (in flight on replica 0; exposed {:.3f} ms)\n", "communication", r.comm.ms(),
             r.exposed_comm.ms());
  fmt::print("{:<24} {:>12.3f} ms   (the step with communication free)\n", "compute", r.compute.ms());
  if (r.offload)
    fmt::print("{:<24} {:>12.3f} ms   (in flight on replica 0: {} host->GPU + {} GPU->host per step, all GPUs; "
               "exposed {:.3f} ms{})\n",
               "offload copies", r.offload->time.ms(), sim::format_size(r.offload->to_gpu),
               sim::format_size(r.offload->to_host), r.offload->exposed.ms(),
               r.offload->exposed.count() > 0.0 ? "" : ", hidden behind the step");
  if (r.compute_utilisation > 0.0)
    fmt::print("{:<24} {:>12.1f} %    (of the step the GPUs spend computing, mean over GPUs)\n", "GPU compute busy",
               100.0 * r.compute_utilisation);
  if (r.compute.count() > 0.0 || r.tokens_per_s == 0.0)
    fmt::print("{:<24} {:>12.1f} tokens/s\n", "throughput", r.tokens_per_s);
  else   // communication alone is not a throughput anyone gets
    fmt::print("{:<24} {:>12}   (no compute model: give compute.peak_flops or layer_time)\n", "throughput", "-");
  fmt::print("{:<24} {}{}\n", "memory per GPU", scenarios::describe(r.memory),
             r.gpu_memory.count() > 0.0
                 ? fmt::format(" of {:.1f} GB usable ({:.0f}% of {:.0f} GB)", scenarios::kUsableMemoryFraction * r.gpu_memory.count() / 1e9,
                               100.0 * scenarios::kUsableMemoryFraction, r.gpu_memory.count() / 1e9)
                 : std::string(" (the topology gives no GPU memory: not checked)"));
  if (simulated)
    fmt::print("{:<24} {:>12.3f} ms   (the event-driven run of the same step)\n", "simulated step time",
               simulated->step.ms());
  if (!r.note.empty()) fmt::print("# {}\n", r.note);
  fmt::print("\n{:<16} {:>7} {:>14} {:>12}  {}\n", "collective", "count", "bytes", "time (ms)", "algorithm");
  for (const auto& [kind, c] : r.by_collective)
    fmt::print("{:<16} {:>7} {:>14} {:>12.3f}  {}\n", kind, c.count, sim::format_size(c.bytes), c.time.ms(), c.algorithm);
  if (!r.by_tier.empty()) {
    fmt::print("\n{:<10} {:>14} {:>16}\n", "tier", "bytes", "link busy (ms)");
    for (const auto& [tier, t] : r.by_tier) fmt::print("{:<10} {:>14} {:>16.3f}\n", tier, sim::format_size(t.bytes), t.busy.ms());
  }
  if (!r.busiest.empty()) {
    fmt::print("\nbusiest links (bytes / (capacity x step time)):\n");
    for (const auto& h : r.busiest) fmt::print("  {:<40} {:5.1f}%\n", h.link, 100.0 * h.utilisation);
  }
  fmt::print("# a collective's time is wall time with one in flight on replica 0; GB = 1e9 B, GiB = 2^30 B\n");
}

int run(const RunOptions& o) {
  if (o.method != "simulate" && o.method != "analytic" && o.method != "naive")
    throw InputError(fmt::format("--model: expected simulate, analytic or naive, got '{}'", o.method));
  if (o.format != "table" && o.format != "csv" && o.format != "json")
    throw InputError(fmt::format("--format: expected table, csv or json, got '{}'", o.format));
  const auto overrides = topo::parse_overrides(o.settings);
  scenarios::Scenario s = scenarios::load_scenario(o.scenario);
  if (!o.topo.empty()) s.topology = o.topo;
  for (const auto& [k, v] : overrides) s.set[k] = v;
  if (!o.pick.empty()) {
    pick_option(o.pick);   // refuses an unknown name
    s.pick = o.pick;
  }
  if (o.bands && o.method == "naive") throw InputError("--bands: not with --model naive (it is not the model the bands validate)");
  // The file's faults, then the command line's; its transport, unless the command line names one.
  MachineOptions machine_options = o;
  machine_options.fail.insert(machine_options.fail.begin(), s.fail.begin(), s.fail.end());
  machine_options.degrade.insert(machine_options.degrade.begin(), s.degrade.begin(), s.degrade.end());
  const MachineInput input = load_machine_input(machine_options, s.topology, s.set, s.transports);
  overlay_note = input.overlay;
  transport = transport_note(input.transports);
  faults_note = input.faults;
  // CSV keeps its contract header; what the machine differs in goes to stderr there.
  if (o.format == "csv") {
    for (const auto& line : input.conditions()) fmt::print(stderr, "# {}\n", line);
    if (s.pick != "fastest") fmt::print(stderr, "# pick: {}\n", s.pick);
  }
  const topo::LinkGraph& graph = input.graph;
  const models::Machine machine = input.machine();
  const scenarios::SimulatedComm simulated_comm;
  const scenarios::ClosedFormComm closed_form;
  const scenarios::NaiveComm naive;
  const scenarios::CommCost& cost = o.method == "naive"      ? static_cast<const scenarios::CommCost&>(naive)
                                    : o.method == "analytic" ? static_cast<const scenarios::CommCost&>(closed_form)
                                                             : simulated_comm;
  const scenarios::StepResult r = scenarios::run_step(s, machine, cost, input.limits);
  std::optional<StepInterval> interval;
  if (o.bands) interval = step_band(input, r);
  band = interval ? &*interval : nullptr;
  std::unique_ptr<scenarios::StepResult> simulated;
  if (o.method == "naive")
    simulated = std::make_unique<scenarios::StepResult>(scenarios::run_step(s, machine, simulated_comm, input.limits));
  if (o.format == "json") {
    auto j = to_json(s, s.topology, o.method, r);
    if (simulated) j["simulated_step_time_ms"] = simulated->step.ms();
    fmt::print("{}\n", j.dump(2));
  } else if (o.format == "csv") {
    // Offload columns only where the workload offloads (bytes per step over all GPUs).
    fmt::print("scenario,topology,gpus,tp,ep,pp,dp,method,step_time_ms,comm_time_ms,exposed_comm_ms,compute_time_ms,"
               "tokens_per_s{}{}\n", band ? ",step_time_ms_lo,step_time_ms_hi" : "",
               r.offload ? ",offload_time_ms,offload_exposed_ms,offload_to_gpu_bytes,offload_to_host_bytes" : "");
    fmt::print("{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f}{}{}\n", s.name, s.topology, s.layout.gpus(),
               s.layout.tp, s.layout.ep, s.layout.pp, s.layout.dp, o.method, r.step.ms(), r.comm.ms(),
               r.exposed_comm.ms(), r.compute.ms(), r.tokens_per_s,
               band ? fmt::format(",{:.6f},{:.6f}", band->low_ms, band->high_ms) : "",
               r.offload ? fmt::format(",{:.6f},{:.6f},{:.0f},{:.0f}", r.offload->time.ms(), r.offload->exposed.ms(),
                                       r.offload->to_gpu.count(), r.offload->to_host.count())
                         : "");
  } else {
    print_table(s, s.topology, o.method, r, simulated.get());
    if (o.explain) print_explain(r);
  }
  if (!o.trace.empty()) {
    if (o.method != "simulate") throw InputError("--trace needs --model simulate");
    std::ofstream file(o.trace);
    if (!file) throw InputError(o.trace, 0, 0, "cannot write the trace file");
    sim::TraceOptions options;
    for (auto g : graph.gpus()) options.track_names.push_back(graph.device(g).name);
    const auto specs = topo::link_specs(graph);
    options.links = specs;
    sim::write_chrome_trace(file, r.dag, r.run, options);
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "simulate one inference step of a scenario (TP/EP/PP/DP on a topology)");
  cmd->add_option("scenario", o->scenario, "scenario YAML file")->required();
  add_machine_options(cmd, *o, {TopologyOption::optional, "table, csv or json"});
  cmd->add_option("--model", o->method, "simulate (default), analytic (closed forms) or naive (traffic / quoted bandwidth)");
  cmd->add_option("--trace", o->trace, "write a Chrome/Perfetto trace of the step to this file");
  cmd->add_option("--pick", o->pick,
                  "how each collective's algorithm is picked: fastest (the closed form's, default) or nccl (NCCL's own "
                  "cost model: what NCCL runs by default; across NVIDIA nodes only); overrides the scenario's pick:");
  cmd->add_flag("--explain", o->explain,
                "say what bounds the step and how each communicator's GPUs exchange (P2P, SHM through host memory, NET)");
  cmd->add_flag("--bands", o->bands,
                "give the step time an interval: its collectives' error bands (coll --bands) applied to the exposed communication");
  cmd->callback([o, exit_code] { *exit_code = run(*o); });
}

}  // namespace wiresim::tools
