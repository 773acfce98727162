// `wiresim calibrate fit|log|probe`: fit α–β per tier from probe CSVs (and report each
// nccl-tests log's α–β), or with --topo fit the model's own parameters to nccl-tests logs
// (calibrate/model_fit.h), checked on held-out sizes; write an overlay; show what a log holds;
// run the CUDA probe. (`calibrate compare` is in cmd_calibrate_compare.cpp.)
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibrate/fit_groups.h"
#include "accuracy/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/overlay.h"
#include "calibrate/probe_csv.h"
#include "input/file.h"
#include "input/input_error.h"
#include "tools/commands.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using namespace calibrate;

struct FitArgs {
  std::vector<std::string> files;
  std::string overlay;
  std::string format = "table";
  // Model-based fit (with --topo): the topology the logs ran on.
  std::string topo;
  std::vector<std::string> settings;
  int gpus_per_node = 0;
  int hold_out = 3;
  bool force = false;
  std::string model = "simulate";
};

std::vector<FitGroup> load_groups(const FitArgs& args) {
  std::vector<FitGroup> groups;
  for (const std::string& file : args.files) {
    const std::string text = input::read_file(file);
    if (looks_like_probe_csv(text)) {
      auto g = groups_from_probe(parse_probe_csv(text, file), file);
      groups.insert(groups.end(), g.begin(), g.end());
      continue;
    }
    if (!looks_like_nccl_tests_log(text))
      throw input::InputError(file, 1, 1, fmt::format("neither a probe CSV (header '{}') nor an nccl-tests log",
                                                      kProbeCsvHeader));
    groups.push_back(group_from_log(parse_nccl_tests_log(text, file)));
  }
  return groups;
}

std::string rate(sim::BytesPerSec r) { return r.is_unlimited() ? "inf" : fmt::format("{:.4g}", r.gbps()); }

void print_table(const std::vector<GroupFit>& fits) {
  fmt::print("{:<26} {:>6} {:>10} {:>21} {:>10} {:>21} {:>7} {:>8} {:>11}\n", "group", "points", "alpha_us",
             "alpha_95%_us", "beta_GBps", "beta_95%_GBps", "rms_%", "outliers", "held_out_%");
  for (const GroupFit& g : fits) {
    const AlphaBetaFit& f = g.fit;
    fmt::print("{:<26} {:>6} {:>10.4g} {:>21} {:>10} {:>21} {:>7.2f} {:>8} {:>11}\n", g.group.label, g.group.points.size(),
               f.alpha.us(), fmt::format("[{:.4g}, {:.4g}]", f.alpha_ci.low.us(), f.alpha_ci.high.us()),
               rate(f.beta), fmt::format("[{}, {}]", rate(f.beta_ci.low), rate(f.beta_ci.high)),
               100 * f.rms_residual, f.outliers,
               std::isnan(g.held_out_pct) ? std::string("-") : fmt::format("{:.2f}", g.held_out_pct));
    for (const std::string& n : g.group.notes) fmt::print("  note: {}\n", n);
    for (const std::string& w : f.warnings) fmt::print("  warning: {}\n", w);
  }
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out + '"';
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{:.9g}", v) : "null"; }

void print_json(const std::vector<GroupFit>& fits) {
  fmt::print("{{\"fits\": [");
  for (std::size_t i = 0; i < fits.size(); ++i) {
    const FitGroup& g = fits[i].group;
    const AlphaBetaFit& f = fits[i].fit;
    std::vector<std::string> warnings, residuals;
    for (const auto& w : f.warnings) warnings.push_back(json_string(w));
    for (const auto& n : g.notes) warnings.push_back(json_string(n));
    for (double r : f.residuals) residuals.push_back(json_number(r));
    fmt::print("{}\n  {{\"group\": {}, \"kind\": {}, \"tier\": {}, \"ranks\": {}, \"bus_factor\": {}, "
               "\"source\": {}, \"points\": {}, \"alpha_us\": {}, \"alpha_ci_us\": [{}, {}], "
               "\"beta_GBps\": {}, \"beta_ci_GBps\": [{}, {}], \"confidence\": {}, "
               "\"alpha_identifiable\": {}, \"beta_identifiable\": {}, \"rms_residual\": {}, "
               "\"outliers\": {}, \"held_out_error_pct\": {}, \"held_out_points\": {}, \"residuals\": [{}], "
               "\"warnings\": [{}]}}",
               i ? "," : "", json_string(g.label), json_string(g.kind), json_string(g.tier), g.ranks,
               json_number(g.bus_factor), json_string(g.source), g.points.size(), json_number(f.alpha.us()),
               json_number(f.alpha_ci.low.us()), json_number(f.alpha_ci.high.us()), json_number(f.beta.gbps()),
               json_number(f.beta_ci.low.gbps()), json_number(f.beta_ci.high.gbps()), f.confidence,
               f.alpha_identifiable, f.beta_identifiable, json_number(f.rms_residual), f.outliers,
               json_number(fits[i].held_out_pct), fits[i].held_out_points, fmt::join(residuals, ", "),
               fmt::join(warnings, ", "));
  }
  fmt::print("\n]}}\n");
}

std::string value_text(const accuracy::FittedParameter& p, double v) {
  return p.unit.empty() ? fmt::format("{:.3f}", v) : fmt::format("{:.1f}{}", v, p.unit);
}

// calibrate fit LOGS --topo T: the model's own parameters fitted to the logs (model_fit.h).
int run_model_fit(const FitArgs& args) {
  for (const std::string& file : args.files)
    if (looks_like_probe_csv(input::read_file(file)))
      throw input::InputError(file, 1, 1, "--topo fits the model to nccl-tests logs; fit probe CSVs without --topo");
  if (args.model != "simulate" && args.model != "analytic")
    throw input::InputError(fmt::format("--model: expected simulate or analytic, got '{}'", args.model));
  accuracy::ModelFitOptions o;
  o.topology = args.topo;
  o.settings = topo::parse_overrides(args.settings);
  o.gpus_per_node = args.gpus_per_node;
  o.hold_out = args.hold_out;
  o.method = args.model == "analytic" ? models::Method::analytic : models::Method::simulate;
  const accuracy::ModelFit f = accuracy::fit_model(args.files, o, models::default_params());
  if (args.format == "json") {
    nlohmann::ordered_json out;
    out["architecture"] = f.architecture;
    auto& ps = out["parameters"] = nlohmann::ordered_json::array();
    for (const auto& p : f.parameters)
      ps.push_back({{"name", p.name}, {"unit", p.unit}, {"built_in", p.before}, {"fitted", p.fitted},
                    {"value", p.value}, {"interval", {p.low, p.high}}, {"note", p.note}});
    out["held_out_sizes"] = f.held_out_sizes;
    out["held_out_error_before_pct"] = f.held_out_before_pct;
    out["held_out_error_after_pct"] = f.held_out_after_pct;
    out["fitted_error_before_pct"] = f.fitted_before_pct;
    out["fitted_error_after_pct"] = f.fitted_after_pct;
    auto& loo = out["leave_one_log_out"] = nlohmann::ordered_json::array();
    for (const auto& l : f.leave_one_out)
      loo.push_back({{"log", l.log}, {"error_before_pct", l.before_pct}, {"error_after_pct", l.after_pct}});
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("# wiresim calibrate fit: the model's parameters for {} fitted to {} log(s) on {} (model {})\n",
               f.architecture, args.files.size(), args.topo, args.model);
    fmt::print("{:<28} {:>10} {:>10} {:>22}  {}\n", "parameter", "built-in", "fitted", "interval", "note");
    for (const auto& p : f.parameters)
      fmt::print("{:<28} {:>10} {:>10} {:>22}  {}\n", p.name, value_text(p, p.before),
                 p.fitted ? value_text(p, p.value) : "-",
                 p.fitted ? fmt::format("[{}, {}]", value_text(p, p.low), value_text(p, p.high)) : "-", p.note);
    fmt::print("# median |busbw error| on the {} held-out sizes (one in {}): {:.1f}% built-in, {:.1f}% fitted\n",
               f.held_out_sizes, args.hold_out, f.held_out_before_pct, f.held_out_after_pct);
    fmt::print("# on the sizes fitted on: {:.1f}% built-in, {:.1f}% fitted\n", f.fitted_before_pct,
               f.fitted_after_pct);
    for (const auto& l : f.leave_one_out)
      fmt::print("# {} predicted from the other logs' fit: {:.1f}% built-in, {:.1f}% fitted\n", l.log, l.before_pct,
                 l.after_pct);
  }
  if (args.overlay.empty()) return 0;
  if (!f.improves() && !args.force) {
    fmt::print(stderr,
               "wiresim: calibrate fit: not writing {}: the fit makes the held-out sizes worse ({:.1f}% -> {:.1f}% "
               "median |busbw error|); --force writes it anyway\n",
               args.overlay, f.held_out_before_pct, f.held_out_after_pct);
    return 1;
  }
  std::ofstream out(args.overlay);
  if (!out) throw input::InputError(args.overlay, 0, 0, "cannot write the overlay");
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  write_overlay(out, f.overlay,
                fmt::format("wiresim calibration overlay, fitted by `wiresim calibrate fit --topo {}` on {}, {:%Y-%m-%d}",
                            args.topo, fmt::join(args.files, " "), fmt::localtime(now)));
  return 0;
}

int run_fit(const FitArgs& args) {
  if (!args.topo.empty()) return run_model_fit(args);
  const std::vector<GroupFit> fits = fit_groups(load_groups(args));
  if (args.format == "json") print_json(fits);
  else print_table(fits);
  if (!args.overlay.empty()) {
    std::ofstream out(args.overlay);
    if (!out) throw input::InputError(args.overlay, 0, 0, "cannot write the overlay");
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    write_overlay(out, overlay_from_fits(fits),
                  fmt::format("wiresim calibration overlay, fitted by `wiresim calibrate fit` on {}, {:%Y-%m-%d}",
                              fmt::join(args.files, " "), fmt::localtime(now)));
  }
  return 0;
}

int run_log(const std::string& file) {
  const NcclTestsLog log = read_nccl_tests_log(file);
  fmt::print("file:         {}\n", log.source);
  fmt::print("collective:   {} (from the {})\n", log.collective ? to_string(*log.collective) : "unknown",
             log.collective ? log.collective_from : "-");
  if (!log.command.empty()) fmt::print("command:      {}\n", log.command);
  if (log.nccl_version) fmt::print("nccl:         {}\n", *log.nccl_version);
  if (log.tests_version) fmt::print("nccl-tests:   {}\n", *log.tests_version);
  const auto ranks = log.rank_count();
  fmt::print("ranks:        {} on {} host(s)\n", ranks ? fmt::to_string(*ranks) : "unknown", log.host_count());
  for (const NcclTestsRank& r : log.ranks)
    fmt::print("  rank {:>3}  {} device {} [{}] {}\n", r.rank, r.host, r.device, r.bus_id, r.device_name);
  if (log.iters) fmt::print("iters:        {} (warm-up {})\n", *log.iters, log.warmup_iters.value_or(0));
  if (log.truncated) fmt::print("note:         the log says smaller sizes were cut out\n");
  fmt::print("{:>12} {:>11} {:>8} {:>6} {:>5} {:>10} {:>8} {:>8} {:>7} {:>10} {:>8} {:>8} {:>7}\n", "size_bytes",
             "count", "type", "redop", "root", "time_us", "algbw", "busbw", "wrong", "ip_time_us", "ip_algbw",
             "ip_busbw", "ip_wrng");
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : std::string("N/A"); };
  for (const NcclTestsRow& r : log.rows) {
    const NcclTestsSample& o = r.out_of_place;
    std::string ip = fmt::format("{:>10} {:>8} {:>8} {:>7}", "N/A", "N/A", "N/A", "N/A");
    if (r.in_place)
      ip = fmt::format("{:>10.2f} {:>8.2f} {:>8.2f} {:>7}", r.in_place->time.us(), r.in_place->algbw_gbps,
                       r.in_place->busbw_gbps, opt(r.in_place->wrong));
    fmt::print("{:>12} {:>11} {:>8} {:>6} {:>5} {:>10.2f} {:>8.2f} {:>8.2f} {:>7} {}\n", r.size.count(), r.count,
               r.type, r.redop, r.root ? fmt::to_string(*r.root) : "-", o.time.us(), o.algbw_gbps, o.busbw_gbps,
               opt(o.wrong), ip);
  }
  if (log.avg_busbw_gbps) fmt::print("avg busbw:    {} GB/s\n", *log.avg_busbw_gbps);
  return 0;
}

// wiresim-probe sits in the build tree next to tools/ (build/calibrate/wiresim-probe), or on PATH.
int run_probe(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(self.parent_path() / "wiresim-probe");
    candidates.push_back(self.parent_path().parent_path() / "calibrate" / "wiresim-probe");
  }
  for (const fs::path& p : candidates) {
    if (::access(p.c_str(), X_OK) != 0) continue;
    std::vector<char*> argv = {const_cast<char*>(p.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(p.c_str(), argv.data());
    fmt::print(stderr, "wiresim: calibrate probe: cannot run {}\n", p.string());
    return 2;
  }
  std::vector<char*> argv = {const_cast<char*>("wiresim-probe")};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp("wiresim-probe", argv.data());
  fmt::print(stderr,
             "wiresim: calibrate probe: wiresim-probe is not built (CMake found no CUDA toolkit) and is not on "
             "PATH; build on a machine with nvcc, or run tools/gpu-check.sh there\n");
  return 2;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("calibrate", "measure links, fit α–β, read nccl-tests logs, write overlays");
  cmd->require_subcommand(1);

  auto fit_args = std::make_shared<FitArgs>();
  auto* fit = cmd->add_subcommand("fit", "fit α and β per tier and per collective from probe CSVs and nccl-tests logs");
  fit->add_option("files", fit_args->files, "probe CSVs (wiresim-probe) and nccl-tests logs")->required();
  fit->add_option("-o,--overlay", fit_args->overlay, "write the fitted parameters as an overlay YAML");
  fit->add_option("--format", fit_args->format, "output format")->check(CLI::IsMember({"table", "json"}));
  fit->add_option("--topo", fit_args->topo,
                  "fit the model's own parameters to nccl-tests logs run on this topology (model-based calibration)");
  fit->add_option("--set", fit_args->settings, "with --topo: override a topology parameter, e.g. --set nodes=2");
  fit->add_option("--gpus-per-node", fit_args->gpus_per_node, "with --topo: the logs' ranks take this many GPUs per node");
  fit->add_option("--hold-out", fit_args->hold_out, "with --topo: hold out every Nth size of each log (default 3)");
  fit->add_option("--model", fit_args->model, "with --topo: simulate (default) or analytic");
  fit->add_flag("--force", fit_args->force, "with --topo: write the overlay even if the held-out error gets worse");
  fit->callback([fit_args, exit_code] { *exit_code = run_fit(*fit_args); });

  auto log_file = std::make_shared<std::string>();
  auto* log = cmd->add_subcommand("log", "print what an nccl-tests log holds, as read");
  log->add_option("file", *log_file, "an nccl-tests log")->required();
  log->callback([log_file, exit_code] { *exit_code = run_log(*log_file); });

  auto* probe = cmd->add_subcommand("probe", "run wiresim-probe (CUDA; built only where CMake finds nvcc)");
  probe->prefix_command();
  probe->allow_extras();
  probe->callback([probe, exit_code] { *exit_code = run_probe(probe->remaining()); });

  add_calibrate_compare(cmd, exit_code);
}

}  // namespace wiresim::tools
