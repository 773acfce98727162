// wiresim sweep --topo T.yaml --model M.yaml --gpus N: every layout of the model on N GPUs,
// simulated and ranked.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/input_error.h"
#include "input/units.h"
#include "models/limits.h"
#include "models/params.h"
#include "scenarios/report.h"
#include "scenarios/scenario.h"
#include "scenarios/sweep.h"
#include "tools/commands.h"
#include "tools/machine_input.h"
#include "tools/step_bands.h"
#include "tools/mpi_sweep.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct SweepOptions : MachineOptions {
  bool bands = false;
  std::string model;
  std::optional<int> gpus;   // default: every GPU of the topology
  std::string phase = "prefill";
  long tokens = 4096;
  long batch = 32;
  long context = 4096;
  std::string micro_batches = "1";
  std::string objective = "step_time";
  std::string report;
  int threads = 0;
  int top = 3;
  std::string gpu_memory = "auto";
  std::string peak_flops;
  std::string pick = "fastest";
};

int sweep(const SweepOptions& o) {
  scenarios::SweepSpec spec;
  spec.model = scenarios::load_model(o.model);
  spec.topology = o.topo;
  if (o.phase == "prefill") {
    spec.workload.phase = scenarios::Phase::prefill;
    spec.workload.tokens = o.tokens;
  } else if (o.phase == "decode") {
    spec.workload.phase = scenarios::Phase::decode;
    spec.workload.batch = o.batch;
    spec.workload.context = o.context;
  } else {
    throw InputError(fmt::format("--phase: expected prefill or decode, got '{}'", o.phase));
  }
  if (o.tokens < 1 || o.batch < 1 || o.context < 1) throw InputError("--tokens, --batch and --context must be positive");
  const long most = std::min(spec.workload.phase == scenarios::Phase::prefill ? o.tokens : o.batch, 1024L);
  if (o.micro_batches == "auto") {
    spec.workload.micro_batches = 0;   // run_sweep tries 1, 2, 4, 8 per layout
  } else {
    long m = 0;
    const auto [ptr, ec] = std::from_chars(o.micro_batches.data(), o.micro_batches.data() + o.micro_batches.size(), m);
    if (ec != std::errc{} || ptr != o.micro_batches.data() + o.micro_batches.size() || m < 1 || m > most)
      throw InputError(fmt::format("--micro-batches: expected auto or 1 to {}, got '{}'", most, o.micro_batches));
    spec.workload.micro_batches = static_cast<int>(m);
  }
  if (o.objective == "step_time") spec.objective = scenarios::Objective::step_time;
  else if (o.objective == "comm_time") spec.objective = scenarios::Objective::comm_time;
  else if (o.objective == "tokens_per_s") spec.objective = scenarios::Objective::tokens_per_s;
  else throw InputError(fmt::format("--objective: expected step_time, comm_time or tokens_per_s, got '{}'", o.objective));
  if (o.format != "table" && o.format != "csv" && o.format != "json")
    throw InputError(fmt::format("--format: expected table, csv or json, got '{}'", o.format));
  const MachineInput input = load_machine_input(o, o.topo, topo::parse_overrides(o.settings));
  try {
    // auto: the topology's own GPUs (the smallest, where they differ); none: no check.
    if (o.gpu_memory == "auto") spec.gpu_memory = scenarios::smallest_gpu_memory(input.graph);
    else spec.gpu_memory = o.gpu_memory == "none" ? sim::Bytes{0.0} : sim::parse_size(o.gpu_memory);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("--gpu-memory: {}", e.what()));
  }
  spec.limits = input.limits;
  const models::Machine machine = input.machine();
  // What the sweep's machine differs in from the topology's healthy default, one line each:
  // every output names them (the CSV on stderr, to keep its rows plain).
  std::vector<std::string> conditions = input.conditions();
  pick_option(o.pick);   // refuses an unknown name
  spec.pick = o.pick;
  if (o.pick != "fastest")
    conditions.push_back(pick_note(o.pick));
  if (o.format == "csv")
    for (const auto& c : conditions) fmt::print(stderr, "# {}\n", c);
  const topo::LinkGraph& graph = input.graph;
  spec.gpus = o.gpus.value_or(static_cast<int>(graph.gpus().size()));
  if (!o.peak_flops.empty()) {
    // A roofline per layer: FLOPs at this peak vs weights and KV cache at the GPU's HBM speed.
    try {
      spec.compute.peak_flops = input::parse_flops(o.peak_flops);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("--peak-flops: {}", e.what()));
    }
    spec.compute.memory_bandwidth = graph.device(graph.gpus().front()).memory_bandwidth;
    if (spec.compute.memory_bandwidth.count() <= 0.0)
      throw InputError(fmt::format("--peak-flops: {} gives no memory_bandwidth for its GPUs", o.topo));
  }
  const int threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  const auto progress = [&](int done, int total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed < 1.0) return;
    const int width = 30, filled = total ? width * done / total : width;
    fmt::print(stderr, "\r[{}{}] {}/{} layouts", std::string(filled, '#'), std::string(width - filled, ' '), done, total);
    if (done == total) fmt::print(stderr, "\n");
    std::fflush(stderr);
  };
  // Under mpirun each process takes every K-th layout; rank 0 gathers, ranks and prints.
  spec.shard = MpiSession::rank();
  spec.shards = MpiSession::size();
  // Under MPI only the gathered result is shown: no per-process progress.
  const std::function<void(int, int)> shown = spec.shards > 1 ? std::function<void(int, int)>() : progress;
  scenarios::SweepResult sweep = scenarios::run_sweep(spec, machine, threads, shown);
  std::vector<scenarios::SweepRow> rows = std::move(sweep.rows);
  if (spec.shards > 1) {
    rows = gather_sweep(rows);
    if (spec.shard != 0) return 0;
    rows = scenarios::rank_sweep(std::move(rows), spec.objective);
  }
  // --bands: each layout's step interval (tools/step_bands.h).
  std::vector<StepInterval> bands;
  if (o.bands)
    for (const auto& row : rows) bands.push_back(step_band(input, row.result));
  if (o.format == "csv") {
    fmt::print(
        "rank,tp,ep,pp,dp,placement,micro_batches,step_time_ms,comm_time_ms,exposed_comm_ms,compute_time_ms,tokens_per_s{}\n",
        o.bands ? ",step_time_ms_lo,step_time_ms_hi" : "");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& l = rows[i].layout;
      const auto& r = rows[i].result;
      fmt::print("{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f}{}\n", i + 1, l.tp, l.ep, l.pp, l.dp,
                 l.placement == scenarios::Placement::pack ? "pack" : "spread", rows[i].micro_batches, r.step.ms(),
                 r.comm.ms(), r.exposed_comm.ms(), r.compute.ms(), r.tokens_per_s,
                 o.bands ? fmt::format(",{:.6f},{:.6f}", bands[i].low_ms, bands[i].high_ms) : "");
    }
  } else if (o.format == "json") {
    nlohmann::ordered_json out;
    out["topology"] = o.topo;
    out["model"] = spec.model.name;
    out["gpus"] = spec.gpus;
    out["objective"] = o.objective;
    out["pick"] = o.pick;
    if (!input.overlay.empty()) out["overlay"] = input.overlay;
    if (!input.transports.p2p) out["p2p"] = false;
    if (const std::string t = transport_note(input.transports); !t.empty()) out["transport"] = t;
    if (!input.faults.empty()) out["faults"] = input.faults;
    out["micro_batches"] = o.micro_batches == "auto" ? nlohmann::ordered_json("auto")
                                                     : nlohmann::ordered_json(spec.workload.micro_batches);
    auto& arr = out["layouts"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      const auto& l = row.layout;
      arr.push_back({{"tp", l.tp}, {"ep", l.ep}, {"pp", l.pp}, {"dp", l.dp},
                     {"placement", l.placement == scenarios::Placement::pack ? "pack" : "spread"},
                     {"micro_batches", row.micro_batches}, {"step_time_ms", row.result.step.ms()}, {"comm_time_ms", row.result.comm.ms()},
                     {"exposed_comm_ms", row.result.exposed_comm.ms()}, {"compute_time_ms", row.result.compute.ms()},
                     {"tokens_per_s", row.result.tokens_per_s}, {"explanation", row.explanation}});
      if (o.bands) {
        arr.back()["step_time_ms_lo"] = bands[i].low_ms;
        arr.back()["step_time_ms_hi"] = bands[i].high_ms;
        arr.back()["band_class"] = bands[i].hw_class;
      }
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    const scenarios::SweepCounts& counts = sweep.counts;
    fmt::print("# wiresim sweep: {} on {} GPUs of {}, {} layouts, ranked by {}{}\n", spec.model.name, spec.gpus, o.topo,
               rows.size(), o.objective,
               o.micro_batches == "auto" ? std::string(", micro-batches chosen per layout (1, 2, 4, 8)")
               : spec.workload.micro_batches > 1 ? fmt::format(", {} micro-batches", spec.workload.micro_batches)
                                                 : std::string());
    for (const auto& c : conditions) fmt::print("# {}\n", c);
    if (counts.too_big > 0)
      fmt::print("# {} more layouts left out: their weights, KV cache and activations exceed {:.0f}% of {:.0f} GB per GPU "
                 "(--gpu-memory)\n",
                 counts.too_big, 100.0 * scenarios::kUsableMemoryFraction, spec.gpu_memory.count() / 1e9);
    fmt::print("# {}\n", spec.compute.enabled()
                              ? fmt::format("compute: roofline at {} and the GPU's memory bandwidth", o.peak_flops)
                              : std::string("no compute model: steps are communication only (give --peak-flops)"));
    if (o.bands)
      fmt::print("# step band: 8 in 10 on validation data of the layout's hardware class, applied to the exposed "
                 "communication (docs/accuracy.md)\n");
    fmt::print("{:>4}  {:<24} {:>3} {:>12}{} {:>12} {:>12} {:>14}\n", "rank", "layout", "mb", "step (ms)",
               o.bands ? fmt::format(" {:>19}", "step band (ms)") : "", "comm (ms)", "exposed (ms)", "tokens/s");
    for (std::size_t i = 0; i < rows.size(); ++i)
      fmt::print("{:>4}  {:<24} {:>3} {:>12.3f}{} {:>12.3f} {:>12.3f} {:>14.1f}\n", i + 1,
                 scenarios::layout_name(rows[i].layout), rows[i].micro_batches, rows[i].result.step.ms(),
                 o.bands ? fmt::format(" {:>19}", fmt::format("{:.3f}..{:.3f}", bands[i].low_ms, bands[i].high_ms)) : "",
                 rows[i].result.comm.ms(), rows[i].result.exposed_comm.ms(), rows[i].result.tokens_per_s);
    fmt::print("\n");
    for (std::size_t i = 0; i < std::min<std::size_t>(rows.size(), static_cast<std::size_t>(std::max(0, o.top))); ++i)
      fmt::print("{}. {}\n", i + 1, rows[i].explanation);
  }
  if (!o.report.empty()) {
    std::ofstream file(o.report);
    if (!file) throw InputError(o.report, 0, 0, "cannot write the report");
    std::vector<std::pair<double, double>> report_bands;
    for (const auto& b : bands) report_bands.emplace_back(b.low_ms, b.high_ms);
    scenarios::write_sweep_report(file, spec, rows, o.bands ? &report_bands : nullptr, conditions);
  }
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "rank every TP/EP/PP/DP layout of a model on a topology");
  add_machine_options(cmd, *o, {TopologyOption::required, "table, csv or json"});
  cmd->add_option("--model", o->model, "model YAML file (a `model:` mapping as in a scenario)")->required();
  cmd->add_option("--gpus", o->gpus, "GPUs to lay the model out on (default: all)");
  cmd->add_option("--phase", o->phase, "prefill (default) or decode");
  cmd->add_option("--tokens", o->tokens, "prefill tokens per replica (default 4096)");
  cmd->add_option("--batch", o->batch, "decode sequences per replica (default 32)");
  cmd->add_option("--context", o->context, "decode context length (default 4096)");
  cmd->add_option("--micro-batches", o->micro_batches,
                  "split the batch into this many micro-batches (pipeline stages and EP ping-pong overlap; default 1), "
                  "or auto: try 1, 2, 4, 8 per layout and keep the best");
  cmd->add_option("--objective", o->objective, "step_time (default), comm_time or tokens_per_s");
  cmd->add_flag("--bands", o->bands,
                "give each layout's step time an interval: its collectives' error bands applied to the exposed communication");
  cmd->add_option("--report", o->report, "write a self-contained HTML report with SVG charts");
  cmd->add_option("--pick", o->pick,
                  "how each collective's algorithm is picked: fastest (the closed form's, default) or nccl (NCCL's own "
                  "cost model: what NCCL runs by default; across NVIDIA nodes only)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores); output does not depend on it");
  cmd->add_option("--top", o->top, "explain the best N layouts (default 3)");
  cmd->add_option("--gpu-memory", o->gpu_memory, "each GPU's memory: auto (default: the topology's GPUs), a size (80GB) or none; layouts that need more are left out");
  cmd->add_option("--peak-flops", o->peak_flops, "per-GPU peak for a roofline compute model, e.g. 989TFLOP/s");
  cmd->callback([o, exit_code] { *exit_code = sweep(*o); });
}

}  // namespace wiresim::tools
