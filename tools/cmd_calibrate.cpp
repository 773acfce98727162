// `wiresim calibrate fit|log|probe`: fit α–β per tier and per collective from probe CSVs and
// nccl-tests logs and write an overlay; show what a log holds; run the CUDA probe.
// (`calibrate compare` waits for the collectives model.)
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

#include "calibrate/fit_groups.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/overlay.h"
#include "calibrate/probe_csv.h"
#include "input/file.h"
#include "input/input_error.h"
#include "tools/commands.h"

namespace wiresim::tools {
namespace {

using namespace calibrate;

struct FitArgs {
  std::vector<std::string> files;
  std::string overlay;
  std::string format = "table";
  std::string tier;
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
    FitGroup g = group_from_log(parse_nccl_tests_log(text, file));
    g.tier = args.tier;
    groups.push_back(std::move(g));
  }
  return groups;
}

std::string rate(sim::BytesPerSec r) { return r.is_unlimited() ? "inf" : fmt::format("{:.4g}", r.gbps()); }

void print_table(const std::vector<GroupFit>& fits) {
  fmt::print("{:<26} {:>6} {:>10} {:>21} {:>10} {:>21} {:>7} {:>8}\n", "group", "points", "alpha_us",
             "alpha_95%_us", "beta_GBps", "beta_95%_GBps", "rms_%", "outliers");
  for (const GroupFit& g : fits) {
    const AlphaBetaFit& f = g.fit;
    fmt::print("{:<26} {:>6} {:>10.4g} {:>21} {:>10} {:>21} {:>7.2f} {:>8}\n", g.group.label, g.group.points.size(),
               f.alpha.us(), fmt::format("[{:.4g}, {:.4g}]", f.alpha_ci.low.us(), f.alpha_ci.high.us()),
               rate(f.beta), fmt::format("[{}, {}]", rate(f.beta_ci.low), rate(f.beta_ci.high)),
               100 * f.rms_residual, f.outliers);
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
               "\"outliers\": {}, \"residuals\": [{}], \"warnings\": [{}]}}",
               i ? "," : "", json_string(g.label), json_string(g.kind), json_string(g.tier), g.ranks,
               json_number(g.bus_factor), json_string(g.source), g.points.size(), json_number(f.alpha.us()),
               json_number(f.alpha_ci.low.us()), json_number(f.alpha_ci.high.us()), json_number(f.beta.gbps()),
               json_number(f.beta_ci.low.gbps()), json_number(f.beta_ci.high.gbps()), f.confidence,
               f.alpha_identifiable, f.beta_identifiable, json_number(f.rms_residual), f.outliers,
               fmt::join(residuals, ", "), fmt::join(warnings, ", "));
  }
  fmt::print("\n]}}\n");
}

int run_fit(const FitArgs& args) {
  if (!args.tier.empty() && !topo::tier_from_string(args.tier))
    throw input::InputError(fmt::format("--tier: unknown tier '{}'", args.tier));
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
  fit->add_option("--tier", fit_args->tier,
                  "the link tier nccl-tests logs exercise (nvlink, ib, ...): their bus bandwidth goes to the overlay");
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
