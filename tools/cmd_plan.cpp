// wiresim plan --model M.yaml [--tpot 50ms | --ttft 2s]: which system of the hardware
// catalogue, how many GPUs, laid out how and at which batch meets the target, cheapest per
// token first (scenarios/plan.h).
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/input_error.h"
#include "input/units.h"
#include "scenarios/plan.h"
#include "scenarios/report.h"
#include "scenarios/sweep.h"
#include "tools/commands.h"
#include "tools/machine_input.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct PlanOptions {
  std::string model;
  std::string phase = "decode";
  long context = 4096;
  long prompt = 2048;
  long max_batch = 256;
  std::string tpot;
  std::string ttft;
  double min_tokens_per_s = 0.0;
  std::vector<std::string> systems;
  int nodes = 1;
  int max_gpus = 64;
  double mfu = 0.5;
  double mbu = 0.6;
  std::string catalog;
  std::vector<std::string> settings;   // catalogue figures
  std::string method = "simulate";
  std::string report;
  int threads = 0;
  int top = 20;
  MachineOptions machine;              // --params, --max-memory, --max-events, --format
};

sim::Seconds time_arg(const std::string& flag, const std::string& text) {
  try {
    return sim::parse_time(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("{}: {}", flag, e.what()));
  }
}

std::string layout_text(const scenarios::Layout& l) {
  return fmt::format("tp{} ep{} pp{}{}", l.tp, l.ep, l.pp, l.placement == scenarios::Placement::spread ? " spread" : "");
}

nlohmann::ordered_json to_json(const scenarios::Plan& p) {
  return {{"system", p.system},
          {"accelerator", p.accelerator},
          {"gpus", p.gpus},
          {"system_gpus", p.system_gpus},
          {"tp", p.layout.tp},
          {"ep", p.layout.ep},
          {"pp", p.layout.pp},
          {"placement", p.layout.placement == scenarios::Placement::spread ? "spread" : "pack"},
          {"batch", p.batch},
          {"latency_ms", p.result.step.ms()},
          {"tokens_per_s", p.tokens_per_s},
          {"cost_usd_per_mtok", p.cost_per_mtok},
          {"price_usd_per_gpu_hour", p.price_per_gpu_hour},
          {"memory_per_gpu_GB", p.result.memory.total().count() / 1e9},
          {"exposed_comm_ms", p.result.exposed_comm.ms()},
          {"bottleneck", p.bottleneck},
          {"meets_target", p.meets_target},
          {"pareto_front", p.front}};
}

int plan(const PlanOptions& o) {
  scenarios::PlanSpec spec;
  spec.model = scenarios::load_model(o.model);
  if (o.phase == "decode") spec.phase = scenarios::Phase::decode;
  else if (o.phase == "prefill") spec.phase = scenarios::Phase::prefill;
  else throw InputError(fmt::format("--phase: expected decode or prefill, got '{}'", o.phase));
  if (!o.tpot.empty() && !o.ttft.empty()) throw InputError("--tpot and --ttft: give the one of the phase planned");
  if (!o.tpot.empty() && spec.phase != scenarios::Phase::decode) throw InputError("--tpot: a decode target (--phase decode)");
  if (!o.ttft.empty() && spec.phase != scenarios::Phase::prefill) throw InputError("--ttft: a prefill target (--phase prefill)");
  if (!o.tpot.empty()) spec.max_latency = time_arg("--tpot", o.tpot);
  if (!o.ttft.empty()) spec.max_latency = time_arg("--ttft", o.ttft);
  if (o.context < 1 || o.prompt < 1 || o.max_batch < 1) throw InputError("--context, --prompt and --max-batch must be positive");
  if (o.nodes < 1 || o.max_gpus < 1) throw InputError("--nodes and --max-gpus must be positive");
  if (!(o.mfu > 0.0 && o.mfu <= 1.0) || !(o.mbu > 0.0 && o.mbu <= 1.0))
    throw InputError(fmt::format("--mfu and --mbu: fractions of the peak in (0, 1], got {} and {}", o.mfu, o.mbu));
  if (o.method != "simulate" && o.method != "analytic")
    throw InputError(fmt::format("--comm: expected simulate or analytic, got '{}'", o.method));
  if (o.machine.format != "table" && o.machine.format != "csv" && o.machine.format != "json")
    throw InputError(fmt::format("--format: expected table, csv or json, got '{}'", o.machine.format));
  spec.context = o.context;
  spec.prompt = o.prompt;
  spec.max_batch = o.max_batch;
  spec.min_tokens_per_s = o.min_tokens_per_s;
  spec.systems = o.systems;
  spec.nodes = o.nodes;
  spec.max_gpus = o.max_gpus;
  spec.efficiency = {o.mfu, o.mbu};
  spec.limits = {models::parse_max_memory(o.machine.max_memory), models::parse_max_events(o.machine.max_events)};
  spec.transports = resolve_transports(o.machine);
  const std::string transport = transport_note(spec.transports);
  const auto overrides = topo::parse_overrides(o.settings);
  const topo::Catalog catalog = o.catalog.empty() ? topo::default_catalog(overrides) : topo::load_catalog(o.catalog, overrides);
  const models::Params params = base_params(o.machine);
  const scenarios::SimulatedComm simulated;
  const scenarios::ClosedFormComm closed_form;
  const scenarios::CommCost& cost = o.method == "analytic" ? static_cast<const scenarios::CommCost&>(closed_form) : simulated;
  const int threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const auto progress = [&](const std::string& line) {
    if (o.machine.format == "table") fmt::print(stderr, "wiresim: planning on {}\n", line);
  };
  const scenarios::PlanResult r = scenarios::run_plan(spec, catalog, params, threads, progress, &cost);
  if (!o.report.empty()) {
    std::ofstream file(o.report);
    if (!file) throw InputError(o.report, 0, 0, "cannot write the report");
    scenarios::write_plan_report(file, spec, r);
  }
  const bool decode = spec.phase == scenarios::Phase::decode;
  const std::vector<scenarios::Plan>& shown = r.plans.empty() ? r.closest : r.plans;
  if (o.machine.format == "json") {
    nlohmann::ordered_json out;
    out["model"] = spec.model.name;
    out["phase"] = o.phase;
    out["target"] = spec.max_latency ? nlohmann::ordered_json(spec.max_latency->ms()) : nlohmann::ordered_json(nullptr);
    out["target_is"] = decode ? "tpot_ms" : "ttft_ms";
    out["efficiency"] = {{"mfu", o.mfu}, {"mbu", o.mbu}};
    out["catalog"] = catalog.source;
    if (!transport.empty()) out["transport"] = transport;
    out["counts"] = {{"evaluated", r.counts.evaluated}, {"too_big", r.counts.too_big}, {"missed", r.counts.missed}};
    auto& plans = out["plans"] = nlohmann::ordered_json::array();
    for (const auto& p : shown) plans.push_back(to_json(p));
    out["notes"] = r.notes;
    auto& fits = out["largest_batch"] = nlohmann::ordered_json::array();
    for (const auto& f : r.fits) fits.push_back({{"system", f.system}, {"gpus", f.gpus}, {"batch", f.largest_batch}, {"stopped_by", f.stopped}});
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  if (o.machine.format == "csv") {
    if (!transport.empty()) fmt::print(stderr, "# {}\n", transport);
    fmt::print("rank,system,accelerator,gpus,tp,ep,pp,batch,latency_ms,tokens_per_s,cost_usd_per_mtok,memory_per_gpu_GB,"
               "meets_target,pareto_front,bottleneck\n");
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const auto& p = shown[i];
      fmt::print("{},{},{},{},{},{},{},{},{:.4f},{:.2f},{:.4f},{:.2f},{},{},\"{}\"\n", i + 1, p.system, p.accelerator, p.gpus,
                 p.layout.tp, p.layout.ep, p.layout.pp, p.batch, p.result.step.ms(), p.tokens_per_s, p.cost_per_mtok,
                 p.result.memory.total().count() / 1e9, p.meets_target, p.front, p.bottleneck);
    }
    return 0;
  }
  fmt::print("# wiresim plan: {} {}, {}; target {}\n", spec.model.name, o.phase,
             decode ? fmt::format("context {} tokens", spec.context) : fmt::format("prompts of {} tokens", spec.prompt),
             spec.max_latency ? fmt::format("{} <= {:.1f} ms", decode ? "TPOT" : "TTFT", spec.max_latency->ms())
                              : std::string("none (every plan that fits)"));
  fmt::print("# compute at MFU {:.2f} x peak {} FLOP/s and MBU {:.2f} x HBM (defaults: PaLM 2022, Databricks 2023); "
             "communication {}\n",
             o.mfu, spec.model.dtype, o.mbu, o.method == "analytic" ? "by closed form" : "simulated");
  fmt::print("# prices: {} (USD per GPU-hour, on-demand, third-party pages: docs/catalog.md); cost of one replica\n",
             catalog.source);
  fmt::print("# {} plans run, {} layouts left out for memory, {} missed the target\n", r.counts.evaluated,
             r.counts.too_big, r.counts.missed);
  if (!transport.empty()) fmt::print("# {}\n", transport);
  for (const auto& n : r.notes) fmt::print("# {}\n", n);
  // The largest batch that ran in memory, per system and GPU count ("-": none fits).
  std::string system_line;
  for (std::size_t i = 0; i < r.fits.size(); ++i) {
    const auto& f = r.fits[i];
    if (i == 0 || r.fits[i - 1].system != f.system)
      system_line = fmt::format("# largest batch run (then stopped by), {}:", f.system);
    system_line += fmt::format(" {} GPU{} {}{};", f.gpus, f.gpus > 1 ? "s" : "",
                               f.largest_batch > 0 ? std::to_string(f.largest_batch) : std::string("-"),
                               f.stopped.empty() ? "" : " (" + f.stopped + ")");
    if (i + 1 == r.fits.size() || r.fits[i + 1].system != f.system) fmt::print("{}\n", system_line);
  }
  if (r.plans.empty()) fmt::print("# no plan meets the target; the fastest that ran:\n");
  fmt::print("{:>4} {:<24} {:>4} {:<14} {:>5} {:>11} {:>11} {:>10} {:>7}  {}\n", "rank", "system", "gpus", "layout",
             "batch", decode ? "TPOT (ms)" : "TTFT (ms)", "tokens/s", "$/Mtok", "GB/GPU", "bottleneck (* front)");
  const std::size_t n = std::min<std::size_t>(shown.size(), static_cast<std::size_t>(std::max(1, o.top)));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = shown[i];
    fmt::print("{:>4} {:<24} {:>4} {:<14} {:>5} {:>11.2f} {:>11.0f} {:>10.3f} {:>7.1f}  {}{}\n", i + 1, p.system, p.gpus,
               layout_text(p.layout), p.batch, p.result.step.ms(), p.tokens_per_s, p.cost_per_mtok,
               p.result.memory.total().count() / 1e9, p.front ? "* " : "", p.bottleneck);
  }
  if (shown.size() > n) fmt::print("# {} more (--top N, or --format csv for all)\n", shown.size() - n);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand("plan", "which system, how many GPUs, laid out how: the cheapest plans that meet a latency target");
  cmd->add_option("--model", o->model, "model YAML file (a `model:` mapping as in a scenario)")->required();
  cmd->add_option("--phase", o->phase, "decode (default) or prefill");
  cmd->add_option("--tpot", o->tpot, "decode: time per output token at most this, e.g. 50ms");
  cmd->add_option("--ttft", o->ttft, "prefill: time to the first token (the prefill) at most this, e.g. 2s");
  cmd->add_option("--context", o->context, "decode: tokens in each sequence's KV cache (default 4096)");
  cmd->add_option("--prompt", o->prompt, "prefill: tokens per prompt (default 2048)");
  cmd->add_option("--max-batch", o->max_batch, "largest batch tried (powers of two from 1; default 256)");
  cmd->add_option("--min-tokens-per-s", o->min_tokens_per_s, "per replica, at least this throughput");
  cmd->add_option("--systems", o->systems, "catalogue systems to consider (default: every one but clusters)")->delimiter(',');
  cmd->add_option("--nodes", o->nodes, "clusters named in --systems: this many nodes (default 1)");
  cmd->add_option("--max-gpus", o->max_gpus, "most GPUs in one replica (default 64)");
  cmd->add_option("--mfu", o->mfu, "achieved share of peak FLOP/s (default 0.5)");
  cmd->add_option("--mbu", o->mbu, "achieved share of HBM bandwidth (default 0.6)");
  cmd->add_option("--catalog", o->catalog, "hardware catalogue YAML (default: the shipped topologies/catalog.yaml)");
  cmd->add_option("--set", o->settings, "override a catalogue figure, e.g. --set hgx-h100.price_per_gpu_hour_usd=2.5");
  cmd->add_option("--comm", o->method, "simulate (default) or analytic: how steps cost communication");
  cmd->add_option("--report", o->report, "write a self-contained HTML report: the latency/cost front as an SVG plot");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores); output does not depend on it");
  cmd->add_option("--top", o->top, "rows of the table (default 20)");
  add_machine_options(cmd, o->machine, {TopologyOption::none, "table, csv or json", false});
  cmd->callback([o, exit_code] { *exit_code = plan(*o); });
}

}  // namespace wiresim::tools
