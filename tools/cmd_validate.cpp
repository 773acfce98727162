// wiresim validate [FILES or FOLDERS...]: predictions against real nccl-tests measurements.
// The data sets, the runner, the statistics and the fit live in accuracy/; this file parses
// options and prints (table, csv, json, markdown; SVG plots).
//
//   wiresim validate                       every shipped data set but the holdouts
//   wiresim validate --role holdout        the holdouts (score them once, at the end of a change)
//   wiresim validate --fit [--write F]     refit the [F] constants of models/params.yaml
//   wiresim validate --cv                  leave-one-hardware-class-out cross-validation
//   wiresim validate --write-bands F       the error bands of `--bands`, from the checked sets (accuracy/bands.h)
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "accuracy/bands.h"
#include "accuracy/calibration.h"
#include "accuracy/fit.h"
#include "calibrate/overlay.h"
#include "accuracy/runner.h"
#include "accuracy/stats.h"
#include "input/input_error.h"
#include "tools/commands.h"
#include "tools/machine_input.h"

namespace wiresim::tools {
namespace {

namespace fs = std::filesystem;
using accuracy::Region;
using accuracy::Result;
using accuracy::Role;
using input::InputError;

struct ValidateOptions : MachineOptions {
  std::vector<std::string> paths;
  std::string map = "validation/map.yaml";
  std::string plot;
  std::string model = "simulate";
  std::string pick = "fastest";
  std::string role = "default";
  bool fit = false;
  bool cv = false;
  bool constants = false;
  std::string write;
  std::string write_bands;
};

// The calibration overlay this run is under (empty: none), named in every output.
std::string overlay_note;

std::string pct(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}", v); }
std::string signed_pct(double v) { return std::isnan(v) ? "-" : fmt::format("{:+.1f}", v); }

std::string algorithms(const Result& r) {
  std::vector<std::string> seen;
  for (const auto& p : r.points) {
    const auto a = p.algo + "/" + p.proto;
    if (seen.empty() || seen.back() != a) seen.push_back(a);
  }
  return fmt::format("{}", fmt::join(seen, ">"));
}

bool wanted(Role role, const std::string& which) {
  if (which == "all") return true;
  if (which == "default") return role != Role::holdout;
  return accuracy::to_string(role) == which;
}

// The groups a summary is printed for: each role present, then each class, then all.
struct Group {
  std::string name;
  std::function<bool(const Result&)> member;
};
std::vector<Group> groups(const std::vector<Result>& results) {
  std::vector<Group> out;
  for (Role role : {Role::fit, Role::checked, Role::holdout}) {
    const bool present = std::any_of(results.begin(), results.end(), [&](const Result& r) { return r.map.role == role; });
    if (present) out.push_back({"role " + std::string(accuracy::to_string(role)),
                                [role](const Result& r) { return r.map.role == role; }});
  }
  std::vector<std::string> classes;
  for (const auto& r : results)
    if (std::find(classes.begin(), classes.end(), r.map.hw_class) == classes.end()) classes.push_back(r.map.hw_class);
  std::sort(classes.begin(), classes.end());
  for (const auto& c : classes)
    out.push_back({"class " + (c.empty() ? std::string("(none)") : c), [c](const Result& r) { return r.map.hw_class == c; }});
  out.push_back({"all", [](const Result&) { return true; }});
  return out;
}

void print_table(const std::vector<Result>& results, const ValidateOptions& o) {
  fmt::print("# wiresim validate: busbw error = predicted / measured - 1 (model {}{}); |e| medians, signed biases "
             "(+ = too fast);\n# regions: floor < 64 KiB <= ramp < 256 MiB <= plateau; large >= 1 MiB\n", o.model,
             o.pick == "fastest" ? "" : ", algorithms as NCCL's own cost model picks them");
  if (!overlay_note.empty()) fmt::print("# overlay {}\n", overlay_note);
  fmt::print("{:<58} {:<7} {:<15} {:>4} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", "data set", "role", "class",
             "gpus", "sizes", "|e|%", "max%", "floor%", "ramp%", "plat%", "large%", "algorithms (by size)");
  for (const auto& r : results) {
    if (r.skipped) {
      fmt::print("{:<58} {:<7} skipped: {}\n", r.name, accuracy::to_string(r.map.role), *r.skipped);
      continue;
    }
    const auto all = accuracy::stats(r);
    fmt::print("{:<58} {:<7} {:<15} {:>4} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", r.name,
               accuracy::to_string(r.map.role), r.map.hw_class, r.gpus, all.count, pct(all.median_abs),
               pct(all.max_abs), signed_pct(accuracy::stats(r, Region::floor).bias),
               signed_pct(accuracy::stats(r, Region::ramp).bias), signed_pct(accuracy::stats(r, Region::plateau).bias),
               pct(accuracy::stats(r, Region::large).median_abs), algorithms(r));
  }
  fmt::print("#\n# {:<26} {:>4} {:>9} {:>9} {:>5}  {:>13} {:>13} {:>13}\n", "summary", "sets", "med.med%", "med.pts%",
             ">15%", "floor bias%", "ramp bias%", "plateau bias%");
  for (const auto& g : groups(results)) {
    const auto s = accuracy::summarise(results, g.member);
    fmt::print("# {:<26} {:>4} {:>9} {:>9} {:>5}  {:>13} {:>13} {:>13}\n", g.name, s.sets, pct(s.median_of_medians),
               pct(s.median_of_points), s.above15, signed_pct(s.regions[0].bias), signed_pct(s.regions[1].bias),
               signed_pct(s.regions[2].bias));
  }
}

// Markdown tables for docs/accuracy.md (tools/accuracy-doc pastes them between its markers).
void print_markdown(const std::vector<Result>& results) {
  fmt::print("| data set | role | class | GPUs | sizes | median \\|e\\| % | floor bias % | ramp bias % | plateau bias % | "
             "≥ 1 MiB \\|e\\| % |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : results) {
    if (r.skipped) {
      fmt::print("| {} | {} | {} | skipped: {} | | | | | | |\n", r.name, accuracy::to_string(r.map.role), r.map.hw_class,
                 *r.skipped);
      continue;
    }
    const auto all = accuracy::stats(r);
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.name, accuracy::to_string(r.map.role),
               r.map.hw_class, r.gpus, all.count, pct(all.median_abs), signed_pct(accuracy::stats(r, Region::floor).bias),
               signed_pct(accuracy::stats(r, Region::ramp).bias), signed_pct(accuracy::stats(r, Region::plateau).bias),
               pct(accuracy::stats(r, Region::large).median_abs));
  }
  fmt::print("\n| group | sets | median of medians % | median of points % | sets > 15 % | floor bias % | ramp bias % | "
             "plateau bias % |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& g : groups(results)) {
    const auto s = accuracy::summarise(results, g.member);
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} |\n", g.name, s.sets, pct(s.median_of_medians),
               pct(s.median_of_points), s.above15, signed_pct(s.regions[0].bias), signed_pct(s.regions[1].bias),
               signed_pct(s.regions[2].bias));
  }
}

void print_csv(const std::vector<Result>& results) {
  fmt::print("dataset,role,topology,collective,gpus,sizes,median_abs_err_pct,max_abs_err_pct,floor_bias_pct,"
             "ramp_bias_pct,plateau_bias_pct,large_median_abs_err_pct,class,algorithms,status\n");
  const auto num = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.2f}", v); };
  for (const auto& r : results) {
    if (r.skipped) {
      std::string why = *r.skipped;
      std::replace(why.begin(), why.end(), ',', ';');
      fmt::print("{},{},{},,,0,,,,,,,{},,skipped: {}\n", r.name, accuracy::to_string(r.map.role), r.map.topology,
                 r.map.hw_class, why);
      continue;
    }
    const auto all = accuracy::stats(r);
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},ok\n", r.name, accuracy::to_string(r.map.role),
               r.map.topology, r.collective, r.gpus, all.count, num(all.median_abs), num(all.max_abs),
               num(accuracy::stats(r, Region::floor).bias), num(accuracy::stats(r, Region::ramp).bias),
               num(accuracy::stats(r, Region::plateau).bias), num(accuracy::stats(r, Region::large).median_abs),
               r.map.hw_class, algorithms(r));
  }
}

nlohmann::ordered_json region_json(const accuracy::Stats& s) {
  const auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  return {{"sizes", s.count}, {"median_abs_err_pct", num(s.median_abs)}, {"bias_pct", num(s.bias)}};
}

void print_json(const std::vector<Result>& results) {
  nlohmann::ordered_json out;
  out["error"] = "100 x (predicted busbw / measured busbw - 1): + is too fast; floor < 64 KiB <= ramp < 256 MiB <= plateau";
  if (!overlay_note.empty()) out["overlay"] = overlay_note;
  auto& sets = out["datasets"] = nlohmann::ordered_json::array();
  const auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  for (const auto& r : results) {
    nlohmann::ordered_json j{{"dataset", r.name}, {"role", accuracy::to_string(r.map.role)}, {"class", r.map.hw_class},
                             {"topology", r.map.topology}};
    if (r.skipped) {
      j["skipped"] = *r.skipped;
      sets.push_back(j);
      continue;
    }
    const auto all = accuracy::stats(r);
    j["collective"] = r.collective;
    j["gpus"] = r.gpus;
    j["gpus_per_thread"] = r.gpus_per_thread;
    j["p2p"] = r.map.p2p;
    j["sizes"] = all.count;
    j["median_abs_err_pct"] = num(all.median_abs);
    j["max_abs_err_pct"] = num(all.max_abs);
    j["bias_pct"] = num(all.bias);
    j["large_median_abs_err_pct"] = num(accuracy::stats(r, Region::large).median_abs);
    for (Region g : accuracy::kRegions) j["regions"][std::string(accuracy::to_string(g))] = region_json(accuracy::stats(r, g));
    auto& pts = j["points"] = nlohmann::ordered_json::array();
    for (const auto& p : r.points)
      pts.push_back({{"size_bytes", static_cast<long long>(p.size)}, {"measured_us", p.measured_us},
                     {"predicted_us", p.predicted_us}, {"measured_busbw_GBps", p.measured_busbw},
                     {"predicted_busbw_GBps", p.predicted_busbw}, {"err_pct", p.error()},
                     {"algo", p.algo}, {"proto", p.proto}});
    sets.push_back(j);
  }
  auto& sum = out["summary"] = nlohmann::ordered_json::object();
  for (const auto& g : groups(results)) {
    const auto s = accuracy::summarise(results, g.member);
    auto& j = sum[g.name] = {{"datasets", s.sets}, {"median_of_median_abs_err_pct", num(s.median_of_medians)},
                             {"median_abs_err_pct_all_points", num(s.median_of_points)}, {"datasets_above_15pct", s.above15}};
    for (std::size_t k = 0; k < accuracy::kRegions.size(); ++k)
      j["regions"][std::string(accuracy::to_string(accuracy::kRegions[k]))] = region_json(s.regions[k]);
  }
  fmt::print("{}\n", out.dump(2));
}

// Measured (dots) and predicted (line) busbw over size, log2 x axis.
void write_svg(const std::string& dir, const Result& r) {
  if (r.points.empty()) return;
  constexpr double W = 720, H = 420, L = 70, R = 20, T = 40, B = 50;
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0.0;
  for (const auto& p : r.points) {
    xmin = std::min(xmin, std::log2(p.size));
    xmax = std::max(xmax, std::log2(p.size));
    ymax = std::max({ymax, p.measured_busbw, p.predicted_busbw});
  }
  if (xmax <= xmin) xmax = xmin + 1;
  const double step = ymax > 0 ? std::pow(10.0, std::floor(std::log10(ymax / 4.0))) : 1.0;
  const double ytop = std::ceil(ymax / step) * step;
  const auto X = [&](double s) { return L + (std::log2(s) - xmin) / (xmax - xmin) * (W - L - R); };
  const auto Y = [&](double v) { return H - B - (ytop > 0 ? v / ytop : 0) * (H - T - B); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"13\">{} ({} GPUs, {}): busbw, measured vs wiresim</text>\n",
      W, H, L, r.name, r.gpus, r.collective);
  for (int i = 0; i <= 4; ++i) {
    const double v = ytop * i / 4;
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
                       L, W - R, Y(v), Y(v), L - 5, Y(v) + 4, v);
  }
  for (int e = static_cast<int>(std::ceil(xmin)); e <= static_cast<int>(xmax); e += 2) {
    const double x = X(std::pow(2.0, e));
    svg += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#eee\"/>"
                       "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       x, x, T, H - B, x, H - B + 15, sim::format_size(sim::Bytes{std::pow(2.0, e)}));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">size (log scale)</text>\n", (L + W - R) / 2, H - 12);
  svg += fmt::format("<text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\" text-anchor=\"middle\">busbw (GB/s)</text>\n",
                     (T + H - B) / 2, (T + H - B) / 2);
  std::string line;
  for (const auto& p : r.points) line += fmt::format("{:.1f},{:.1f} ", X(p.size), Y(p.predicted_busbw));
  svg += fmt::format("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{}\"/>\n", line);
  for (const auto& p : r.points)
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"black\"><title>{}: measured {:.2f}, "
                       "predicted {:.2f} GB/s ({}/{})</title></circle>\n",
                       X(p.size), Y(p.measured_busbw), sim::format_size(sim::Bytes{p.size}), p.measured_busbw,
                       p.predicted_busbw, p.algo, p.proto);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"black\">&#9679; measured</text>"
                     "<text x=\"{}\" y=\"{}\" fill=\"#1f77b4\">&#8212; wiresim (median |err| {}%)</text>\n</svg>\n",
                     L + 10, T + 12, L + 90, T + 12, pct(accuracy::stats(r).median_abs));
  const fs::path path = fs::path(dir) / (fs::path(r.name).stem().string() + ".svg");
  std::ofstream out(path);
  if (!out) throw InputError(path.string(), 0, 0, "cannot write the plot");
  out << svg;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot read the parameter file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int print_fit(const std::vector<accuracy::Prepared>& sets, const models::Params& params, const ValidateOptions& o,
              models::Method method) {
  accuracy::FitOptions fo;
  fo.method = method;
  fo.verbose = true;
  fo.max_sweeps = 16;
  const auto rep = accuracy::fit(sets, params, fo);
  fmt::print("# wiresim validate --fit: constants of models/params.yaml fitted on the 'fit' data sets (model {})\n"
             "# objective = sum over the fit sets of their median |busbw error| %: {:.2f} before, {:.2f} after\n"
             "# {} after {} coordinate sweep{}\n",
             o.model, rep.objective_before, rep.objective_after,
             rep.converged ? "converged (its last sweep moved no constant)" : "NOT converged", rep.sweeps, rep.sweeps > 1 ? "s" : "");
  fmt::print("{:<42} {:>12} {:>12}  {}\n", "constant", "before", "fitted", "data sets");
  for (std::size_t i = 0; i < rep.constants.size(); ++i) {
    const auto& c = accuracy::fitted_constants()[i];
    const auto& v = rep.constants[i];
    fmt::print("{:<42} {:>12} {:>12}  {}\n", c.name, accuracy::format_value(c, v.before),
               v.fitted ? accuracy::format_value(c, v.value) : "(prior)", fmt::join(c.datasets, ", "));
  }
  for (const auto& c : accuracy::fitted_constants())
    if (const auto idle = accuracy::idle_sets(c, sets, rep.params, method); !idle.empty())
      fmt::print("# warning: {} does not move the objective of {}: that set fits nothing of it\n", c.name,
                 fmt::join(idle, ", "));
  if (!o.write.empty()) {
    const std::string text = accuracy::write_fitted(slurp(o.write), rep);
    std::ofstream out(o.write);
    if (!out) throw InputError(o.write, 0, 0, "cannot write the parameter file");
    out << text;
    fmt::print("# written to {}\n", o.write);
  }
  return 0;
}

int print_cv(const std::vector<accuracy::Prepared>& sets, const models::Params& params, const ValidateOptions& o,
             models::Method method) {
  accuracy::FitOptions fo;
  fo.method = method;
  const auto scores = accuracy::cross_validate(sets, params, fo);
  const bool md = o.format == "markdown";
  if (md) {
    fmt::print("| class | sets (fit + checked) | in sample: median of medians % | cross-validated: median of medians % | "
               "cv floor bias % | cv ramp bias % | cv plateau bias % | constants left at their prior |\n"
               "|---|---|---|---|---|---|---|---|\n");
  } else {
    fmt::print("# wiresim validate --cv: leave one hardware class out, refit every constant, score the class\n");
    fmt::print("{:<18} {:>4} {:>12} {:>12} {:>8} {:>8} {:>8}  {}\n", "class", "sets", "in-sample%", "cv%", "floor%",
               "ramp%", "plat%", "constants at their prior");
  }
  for (const auto& s : scores) {
    const auto& c = s.cross_validated;
    const std::string priors = s.priors.empty() ? "-" : fmt::format("{}", fmt::join(s.priors, ", "));
    if (md)
      fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} |\n", s.hw_class, s.sets, pct(s.in_sample.median_of_medians),
                 pct(c.median_of_medians), signed_pct(c.regions[0].bias), signed_pct(c.regions[1].bias),
                 signed_pct(c.regions[2].bias), priors);
    else
      fmt::print("{:<18} {:>4} {:>12} {:>12} {:>8} {:>8} {:>8}  {}\n", s.hw_class, s.sets,
                 pct(s.in_sample.median_of_medians), pct(c.median_of_medians), signed_pct(c.regions[0].bias),
                 signed_pct(c.regions[1].bias), signed_pct(c.regions[2].bias), priors);
  }
  return 0;
}

// The fitted constants as the parameters hold them, with what each is fitted on.
int print_constants(const models::Params& params, const ValidateOptions& o) {
  const bool md = o.format == "markdown";
  if (md) fmt::print("| constant | value | fitted on (region) | what it stands for |\n|---|---|---|---|\n");
  for (const auto& c : accuracy::fitted_constants()) {
    std::vector<std::string> sets;
    for (const auto& d : c.datasets) sets.push_back(fs::path(d).stem().string());
    const std::string on = fmt::format("{} ({})", fmt::join(sets, ", "), accuracy::to_string(c.region));
    if (md) fmt::print("| `{}` | {} | {} | {} |\n", c.name, accuracy::format_value(c, c.get(params)), on, c.why);
    else fmt::print("{:<42} {:>10}  {}  {}\n", c.name, accuracy::format_value(c, c.get(params)), on, c.why);
  }
  return 0;
}

// --write-bands: the error bands of `coll/run/sweep --bands` from the checked data sets (never
// fitted on), scored with the committed parameters; the table (or markdown) shows them.
void write_bands(const std::vector<Result>& results, const ValidateOptions& o) {
  std::vector<Result> checked;
  for (const auto& r : results)
    if (!r.skipped && r.map.role == accuracy::Role::checked) checked.push_back(r);
  if (checked.empty()) throw InputError("--write-bands: no checked data set among those validated");
  const accuracy::ErrorBands bands = accuracy::compute_bands(checked);
  const std::string header = fmt::format(
      "# wiresim error bands: measured time / predicted time, its 10th (low) and 90th (high) percentile over the\n"
      "# sizes of each hardware class's checked data sets (validation/map.yaml: never fitted on), by size region:\n"
      "# floor < 64 KiB, ramp 64 KiB - 256 MiB, plateau >= 256 MiB, all. A prediction t carries [t x low, t x high].\n"
      "# Generated by `wiresim validate --write-bands` (model {}; ./tools/accuracy-doc); do not edit.\n",
      o.model);
  std::ofstream out(o.write_bands);
  if (!out) throw InputError(o.write_bands, 0, 0, "cannot write the error bands");
  out << accuracy::write_bands(bands, header);
  if (o.format == "csv" || o.format == "json") return;   // the file only: keep the output parseable
  const auto cell = [](const accuracy::Band& b) {
    return b.points == 0 ? std::string("-") : fmt::format("{:.2f}..{:.2f} ({})", b.low, b.high, b.points);
  };
  const bool md = o.format == "markdown";
  if (md)
    fmt::print("\nError bands of `--bands`: measured / predicted time over the checked data sets' sizes, 10th..90th "
               "percentile (number of sizes):\n\n"
               "| class | floor < 64 KiB | ramp | plateau >= 256 MiB | all sizes |\n|---|---|---|---|---|\n");
  else
    fmt::print("# error bands (measured / predicted time over the checked sets, 10th..90th percentile, sizes)\n"
               "{:<18} {:>22} {:>22} {:>22} {:>22}\n", "class", "floor", "ramp", "plateau", "all");
  for (const auto& [name, c] : bands.classes) {
    if (md)
      fmt::print("| {} | {} | {} | {} | {} |\n", name, cell(c.regions[0]), cell(c.regions[1]), cell(c.regions[2]),
                 cell(c.regions[3]));
    else
      fmt::print("{:<18} {:>22} {:>22} {:>22} {:>22}\n", name, cell(c.regions[0]), cell(c.regions[1]),
                 cell(c.regions[2]), cell(c.regions[3]));
  }
}

int run_validate(ValidateOptions o) {
  if (o.format != "table" && o.format != "csv" && o.format != "json" && o.format != "markdown")
    throw InputError(fmt::format("--format: expected table, csv, json or markdown, got '{}'", o.format));
  if (o.model != "simulate" && o.model != "analytic")
    throw InputError(fmt::format("--model: expected simulate or analytic, got '{}'", o.model));
  if (o.role != "default" && o.role != "all" && !accuracy::parse_role(o.role))
    throw InputError(fmt::format("--role: expected all, fit, checked or holdout, got '{}'", o.role));
  if (!o.write.empty() && !o.fit) throw InputError("--write: only with --fit");
  if (!o.write_bands.empty() && (o.fit || o.cv || o.constants || !o.overlay.empty()))
    throw InputError("--write-bands: not with --fit, --cv, --constants or --overlay (bands are of the committed model)");
  if (!o.write_bands.empty() && o.role != "default" && o.role != "all" && o.role != "checked")
    throw InputError("--write-bands: the bands come from the checked data sets; use --role checked, all or the default");
  if (o.paths.empty()) o.paths.push_back((fs::path(o.map).parent_path() / "data").string());
  models::Params params = base_params(o);
  const models::Limits limits{models::parse_max_memory(o.max_memory), models::parse_max_events(o.max_events)};
  std::optional<calibrate::Overlay> overlay;
  if (!o.overlay.empty()) {
    if (o.fit || o.cv || o.constants) throw InputError("--overlay: not with --fit, --cv or --constants");
    overlay = calibrate::read_overlay(o.overlay);
    overlay_note = calibrate::describe_overlay(o.overlay, *overlay);
  }
  if (o.constants) return print_constants(params, o);
  const auto map = accuracy::read_map(o.map);
  const auto method = o.model == "analytic" ? models::Method::analytic : models::Method::simulate;
  const models::Ranking rank = pick_option(o.pick);
  // Files named one by one run whatever their role; a folder runs the roles --role asks for
  // (by default every one but the holdouts).
  std::vector<accuracy::Prepared> sets;
  for (const auto& path : o.paths) {
    const bool folder = fs::is_directory(path);
    for (auto& s : accuracy::prepare(accuracy::data_files({path}), map, o.map))
      if (!map.count(s.name) || (!folder && o.role == "default") || wanted(s.map.role, o.role))
        sets.push_back(std::move(s));
  }
  if (o.fit) return print_fit(sets, params, o, method);
  if (o.cv) return print_cv(sets, params, o, method);
  // A measured tier of the overlay replaces the links of that tier in every data set's machine.
  if (overlay && !overlay->tiers.empty())
    for (auto& s : sets)
      if (s.graph) {
        auto graph = std::make_shared<topo::LinkGraph>(*s.graph);
        calibrate::apply_overlay(*graph, *overlay);
        s.graph = graph;
      }
  if (!o.plot.empty()) fs::create_directories(o.plot);
  std::vector<Result> results;
  int in_scope = 0, runnable = 0;
  for (const auto& s : sets) {
    // The overlay's fitted parameters reach a data set only within their scope.
    models::Params scoped = params;
    if (overlay && !s.skipped) {
      try {
        const auto [op, spans] = accuracy::problem_scope(s);
        ++runnable;
        in_scope += accuracy::apply_parameters(scoped, *overlay, op, spans) ? 1 : 0;
      } catch (const InputError&) {
        // No collective named: accuracy::run reports the set as skipped, saying why.
      }
    }
    results.push_back(accuracy::run(s, scoped, method, limits, rank));
    if (!results.back().skipped && !o.plot.empty()) write_svg(o.plot, results.back());
  }
  // Nothing validated at all: that is bad input, not a report (one line, exit 2).
  const bool any = std::any_of(results.begin(), results.end(), [](const Result& r) { return !r.skipped; });
  if (!any) {
    if (results.empty()) throw InputError(fmt::format("no data sets to validate in {}", fmt::join(o.paths, ", ")));
    throw InputError(sets.front().file, 0, 0, *results.front().skipped);
  }
  if (overlay && overlay->parameters && overlay->parameters->scope && in_scope < runnable)
    overlay_note += fmt::format("; its fitted parameters apply to {} of {} data sets (the others are outside their "
                                "scope and run on built-in values)",
                                in_scope, runnable);
  if (overlay && o.format == "csv") fmt::print(stderr, "# overlay {}\n", overlay_note);
  if (o.format == "csv") print_csv(results);
  else if (o.format == "json") print_json(results);
  else if (o.format == "markdown") print_markdown(results);
  else print_table(results, o);
  if (!o.write_bands.empty()) write_bands(results, o);
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "compare predictions with real nccl-tests measurements (accuracy report)");
  cmd->add_option("paths", o->paths, "data sets (CSV files or folders; default: the folder data/ next to --map)");
  add_machine_options(cmd, *o, {TopologyOption::none, "table (default), csv, json (adds every size) or markdown", true, false});
  cmd->add_option("--map", o->map, "which topology, controls, role and class each data set has (default validation/map.yaml)");
  cmd->add_option("--plot", o->plot, "write one SVG per data set into this folder: measured vs predicted busbw");
  cmd->add_option("--model", o->model, "simulate (event-driven, default) or analytic (closed form)");
  cmd->add_option("--pick", o->pick,
                  "how the tuner picks where a data set forces no algorithm: fastest (default, the closed form's) or "
                  "nccl (NCCL's own cost model, src/graph/tuning.cc; across NVIDIA nodes only)");
  cmd->add_option("--role", o->role,
                  "which data sets: fit and checked (default), all, fit, checked or holdout (score holdouts once, "
                  "at the end of a change)");
  cmd->add_flag("--fit", o->fit, "refit the [F] constants of the parameters on the fit data sets and print them");
  cmd->add_option("--write", o->write, "with --fit: rewrite the fitted values in this params.yaml");
  cmd->add_flag("--cv", o->cv, "leave-one-hardware-class-out cross-validation of the fitted constants");
  cmd->add_option("--write-bands", o->write_bands, "write the error bands of --bands (accuracy/bands.yaml) from the checked data sets");
  cmd->add_flag("--constants", o->constants, "list the fitted constants, their values and what each is fitted on");
  cmd->callback([o, exit_code] { *exit_code = run_validate(*o); });
}

}  // namespace wiresim::tools
