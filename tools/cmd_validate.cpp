// wiresim validate [FILES or FOLDERS...]: predictions against real nccl-tests measurements.
//
// Each data set is an nccl-tests CSV (`#` header lines, then size_bytes,time_us,algbw_GBps,
// busbw_GBps); validation/map.yaml says which shipped topology, GPU count, controls (P2P,
// NCCL_ALGO/NCCL_PROTO, channels) and role (fit or holdout) each file stands for. Every size
// is run with the tuner's choice (or the forced algorithm) and compared on busbw, taken from
// the measured time so that rounded small values keep their precision:
//   error % = 100 x (predicted busbw / measured busbw - 1) = 100 x (t_measured / t_predicted - 1).
// A file that cannot be read or mapped is reported in one line and skipped.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/file.h"
#include "input/keys.h"
#include "input/lines.h"
#include "models/machine.h"
#include "models/run.h"
#include "models/tuner.h"
#include "sim/input_error.h"
#include "tools/coll_common.h"
#include "tools/commands.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

namespace fs = std::filesystem;
using sim::InputError;

constexpr double kLargeFrom = 1024.0 * 1024.0;   // the bandwidth region starts at 1 MiB

struct ValidateOptions {
  std::vector<std::string> paths;
  std::string map = "validation/map.yaml";
  std::string format = "table";
  std::string plot;
  std::string model = "simulate";
  std::string params;
  std::string role = "all";
};

// One entry of validation/map.yaml.
struct Mapping {
  std::string topology;            // path, resolved against the map's folder
  topo::Overrides settings;
  int gpus = 0;                    // 0: every GPU of the topology
  int gpus_per_node = 0;           // take this many GPUs from each node
  std::vector<int> ranks;          // explicit GPU indices (graph.gpus() order)
  std::optional<std::string> collective;
  bool p2p = true;
  std::optional<std::string> algo, proto;
  std::optional<int> channels;
  std::string role = "fit";
  std::string note;
  std::optional<std::string> unmapped;   // why no topology stands for this hardware
};

struct Point {
  double size = 0.0;
  double measured_us = 0.0;
  double measured_busbw = 0.0;   // from the time (see above)
  double predicted_us = 0.0;
  double predicted_busbw = 0.0;
  std::string algo, proto;
  double error() const { return 100.0 * (measured_us / predicted_us - 1.0); }
};

struct Result {
  std::string file;
  std::string name;
  Mapping map;
  std::string collective;
  int gpus = 0;
  std::vector<Point> points;
  std::optional<std::string> skipped;
};

struct Stats {
  int count = 0;
  double median = NAN, max = NAN;
};

Stats abs_stats(std::vector<double> errors) {
  Stats s;
  s.count = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  for (auto& e : errors) e = std::abs(e);
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.median = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  s.max = errors.back();
  return s;
}

Stats region(const Result& r, int which) {   // 0 all, 1 small, 2 large
  std::vector<double> e;
  for (const auto& p : r.points)
    if (which == 0 || (which == 1) == (p.size < kLargeFrom)) e.push_back(p.error());
  return abs_stats(e);
}

// ---- the map ------------------------------------------------------------------------------

std::map<std::string, Mapping> read_map(const std::string& path) {
  using input::find;
  const input::Value root = input::read_yaml_file(path);
  input::require_map(root, "validation map");
  const input::Value& sets = input::require(root, "datasets", "");
  input::require_map(sets, "datasets");
  const fs::path base = fs::path(path).parent_path();
  std::map<std::string, Mapping> out;
  static constexpr std::array<std::string_view, 13> kKeys{"topology", "set", "gpus", "gpus_per_node", "ranks",
                                                          "collective", "p2p", "algo", "proto", "channels", "role",
                                                          "note", "unmapped"};
  for (const auto& kv : sets.entries) {
    const std::string& file = kv.key;
    const input::Value& n = kv.value;
    input::require_map(n, file);
    input::check_keys(n, kKeys, file);
    const auto text = [&](const char* key) { return input::as_string(*find(n, key), file + "." + key); };
    const auto count = [&](const char* key, long most) {
      return static_cast<int>(input::as_count(*find(n, key), file + "." + key, 1, most));
    };
    Mapping m;
    if (find(n, "unmapped")) m.unmapped = text("unmapped");
    if (find(n, "topology")) m.topology = (base / text("topology")).lexically_normal().string();
    else if (!m.unmapped) input::fail(n, file + ": missing 'topology' (or 'unmapped: reason')");
    if (const input::Value* set = find(n, "set")) {
      input::require_map(*set, file + ".set");
      for (const auto& s : set->entries) m.settings[s.key] = input::as_string(s.value, file + ".set." + s.key);
    }
    if (find(n, "gpus")) m.gpus = count("gpus", 10'000'000);
    if (find(n, "gpus_per_node")) m.gpus_per_node = count("gpus_per_node", 100'000);
    if (const input::Value* ranks = find(n, "ranks")) {
      input::require_sequence(*ranks, file + ".ranks");
      for (std::size_t i = 0; i < ranks->items.size(); ++i)
        m.ranks.push_back(static_cast<int>(
            input::as_count(ranks->items[i], input::index_path(file + ".ranks", i), 0, 10'000'000)));
    }
    if (find(n, "collective")) m.collective = text("collective");
    if (const input::Value* p2p = find(n, "p2p")) m.p2p = input::as_bool(*p2p, file + ".p2p");
    if (find(n, "algo")) m.algo = text("algo");
    if (find(n, "proto")) m.proto = text("proto");
    if (find(n, "channels")) m.channels = count("channels", 64);
    if (find(n, "role")) m.role = text("role");
    if (find(n, "note")) m.note = text("note");
    if (m.role != "fit" && m.role != "holdout") input::fail(*find(n, "role"), file + ": role: expected fit or holdout");
    out[file] = m;
  }
  return out;
}

// ---- one data set -------------------------------------------------------------------------

struct DataFile {
  std::string collective;   // from the '# collective:' header line
  std::vector<Point> points;
};

DataFile read_csv(const std::string& path) {
  const std::string text = input::read_file(path);
  input::Lines lines(text, path);
  DataFile d;
  bool header = false;
  while (const auto next = lines.next()) {
    const std::string line(next->text);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# collective:", 0) == 0) {
        for (const input::Field& word : input::split_words(next->text.substr(13))) {
          if (!d.collective.empty()) break;
          std::string w(word.text);
          while (!w.empty() && (w.back() == ',' || w.back() == ';')) w.pop_back();
          // The MPI build of nccl-tests names its binaries all_reduce_perf_mpi.
          if (w.size() > 4 && w.compare(w.size() - 4, 4, "_mpi") == 0) w.resize(w.size() - 4);
          if (models::parse_collective(w)) d.collective = w;
        }
      }
      continue;
    }
    if (!header) {
      if (line.rfind("size_bytes,time_us", 0) != 0)
        next->fail(1, "expected the header 'size_bytes,time_us,algbw_GBps,busbw_GBps'");
      header = true;
      continue;
    }
    Point p;
    const auto fields = input::split_fields(next->text);
    if (fields.size() < 2) next->fail(1, fmt::format("expected size_bytes,time_us,..., got '{}'", line));
    p.size = next->as_number(fields[0], "size_bytes");
    p.measured_us = next->as_number(fields[1], "time_us");
    if (p.size <= 0 || p.measured_us <= 0)
      next->fail(1, fmt::format("expected a positive size_bytes and time_us, got '{}'", line));
    d.points.push_back(p);
  }
  if (!header) throw InputError(path, 0, 0, "no 'size_bytes,time_us,...' header: not an nccl-tests CSV");
  if (d.points.empty()) throw InputError(path, 0, 0, "no measurements");
  return d;
}

std::vector<topo::DeviceId> pick_ranks(const topo::LinkGraph& graph, const Mapping& m) {
  const auto& gpus = graph.gpus();
  std::vector<topo::DeviceId> ranks;
  if (!m.ranks.empty()) {
    for (int i : m.ranks) {
      if (i < 0 || i >= static_cast<int>(gpus.size()))
        throw InputError(fmt::format("ranks: GPU index {} is not in the topology ({} GPUs)", i, gpus.size()));
      ranks.push_back(gpus[i]);
    }
    return ranks;
  }
  if (m.gpus_per_node > 0) {
    std::map<int, int> taken;
    for (auto g : gpus)
      if (taken[graph.device(g).node]++ < m.gpus_per_node) ranks.push_back(g);
    if (m.gpus > 0 && static_cast<int>(ranks.size()) > m.gpus) ranks.resize(m.gpus);
  } else {
    const int n = m.gpus > 0 ? m.gpus : static_cast<int>(gpus.size());
    if (n > static_cast<int>(gpus.size()))
      throw InputError(fmt::format("gpus: {} but the topology has {} GPUs", n, gpus.size()));
    ranks.assign(gpus.begin(), gpus.begin() + n);
  }
  if (m.gpus > 0 && static_cast<int>(ranks.size()) != m.gpus)
    throw InputError(fmt::format("gpus: {} wanted, the topology gives {}", m.gpus, ranks.size()));
  return ranks;
}

void run_dataset(Result& r, const ValidateOptions& o, const models::Params& params) {
  DataFile data = read_csv(r.file);
  const auto& m = r.map;
  r.collective = m.collective.value_or(data.collective);
  const auto op = models::parse_collective(r.collective);
  if (!op) throw InputError(r.file, 0, 0, "no '# collective:' header naming the test and no 'collective:' in the map");
  r.collective = std::string(models::to_string(*op));
  const topo::LinkGraph graph = topo::load_topology(m.topology, m.settings);
  const models::Machine machine(graph, params, m.p2p);
  models::Problem problem;
  problem.op = *op;
  problem.ranks = pick_ranks(graph, m);
  r.gpus = static_cast<int>(problem.ranks.size());
  models::TunerOptions tuner;
  if (m.algo) {
    tuner.algorithm = models::parse_algorithm(*m.algo);
    if (!tuner.algorithm) throw InputError(fmt::format("algo: unknown algorithm '{}'", *m.algo));
  }
  if (m.proto) {
    tuner.protocol = models::parse_protocol(*m.proto);
    if (!tuner.protocol) throw InputError(fmt::format("proto: unknown protocol '{}'", *m.proto));
  }
  tuner.channels = m.channels;
  const auto method = o.model == "analytic" ? models::Method::analytic : models::Method::simulate;
  const double factor = models::bus_factor(*op, r.gpus);
  for (auto& p : data.points) {
    // Float elements, as every shipped data set ran (nccl-tests' default type).
    problem.size = nccl_tests_size(*op, sim::Bytes{p.size}, 4, r.gpus);
    if (problem.size.count() <= 0.0) problem.size = sim::Bytes{p.size};
    const auto decision = models::tune(machine, problem, tuner);
    const auto out = models::run_collective(machine, problem, decision.best, method);
    p.measured_busbw = p.size / (p.measured_us * 1e-6) / 1e9 * factor;
    p.predicted_us = out.time.us();
    p.predicted_busbw = out.busbw_GBps;
    p.algo = std::string(models::to_string(decision.best.algorithm));
    p.proto = std::string(models::to_string(decision.best.protocol));
    r.points.push_back(p);
  }
}

// ---- output -------------------------------------------------------------------------------

std::string fmt_pct(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}", v); }

std::string algorithms(const Result& r) {
  std::vector<std::string> seen;
  for (const auto& p : r.points) {
    const auto a = p.algo + "/" + p.proto;
    if (seen.empty() || seen.back() != a) seen.push_back(a);
  }
  return fmt::format("{}", fmt::join(seen, ">"));
}

struct Summary {
  std::string role;
  int sets = 0;
  Stats of_medians;   // median over data sets of their median error
  Stats points;       // over every compared size
  int above15 = 0;
};

Summary summarise(const std::vector<Result>& results, const std::string& role) {
  Summary s;
  s.role = role;
  std::vector<double> medians, all;
  for (const auto& r : results) {
    if (r.skipped || (role != "all" && r.map.role != role)) continue;
    ++s.sets;
    const Stats st = region(r, 0);
    medians.push_back(st.median);
    s.above15 += st.median > 15.0;
    for (const auto& p : r.points) all.push_back(p.error());
  }
  s.of_medians = abs_stats(medians);
  s.points = abs_stats(all);
  return s;
}

void print_table(const std::vector<Result>& results, const ValidateOptions& o) {
  fmt::print("# wiresim validate: busbw error = predicted / measured - 1 (model {}); small < 1 MiB <= large\n", o.model);
  fmt::print("{:<58} {:<7} {:>5} {:>5} {:>8} {:>7} {:>8} {:>8}  {}\n", "data set", "role", "gpus", "sizes",
             "median%", "max%", "small%", "large%", "algorithms (by size)");
  for (const auto& r : results) {
    if (r.skipped) {
      fmt::print("{:<58} {:<7} skipped: {}\n", r.name, r.map.role, *r.skipped);
      continue;
    }
    const Stats all = region(r, 0), small = region(r, 1), large = region(r, 2);
    fmt::print("{:<58} {:<7} {:>5} {:>5} {:>8} {:>7} {:>8} {:>8}  {}\n", r.name, r.map.role, r.gpus, all.count,
               fmt_pct(all.median), fmt_pct(all.max), fmt_pct(small.median), fmt_pct(large.median), algorithms(r));
  }
  fmt::print("#\n# summary{:>14} {:>5} {:>18} {:>18} {:>8}\n", "", "sets", "median of medians%", "median of points%",
             ">15%");
  for (const auto& role : {"fit", "holdout", "all"}) {
    const Summary s = summarise(results, role);
    fmt::print("# {:<20} {:>5} {:>18} {:>18} {:>8}\n", role, s.sets, fmt_pct(s.of_medians.median),
               fmt_pct(s.points.median), s.above15);
  }
}

void print_csv(const std::vector<Result>& results) {
  fmt::print("dataset,role,topology,collective,gpus,sizes,median_abs_err_pct,max_abs_err_pct,"
             "small_median_abs_err_pct,large_median_abs_err_pct,algorithms,status\n");
  for (const auto& r : results) {
    if (r.skipped) {
      std::string why = *r.skipped;
      std::replace(why.begin(), why.end(), ',', ';');
      fmt::print("{},{},{},,,0,,,,,,skipped: {}\n", r.name, r.map.role, r.map.topology, why);
      continue;
    }
    const Stats all = region(r, 0), small = region(r, 1), large = region(r, 2);
    const auto num = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.2f}", v); };
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},ok\n", r.name, r.map.role, r.map.topology, r.collective, r.gpus,
               all.count, num(all.median), num(all.max), num(small.median), num(large.median), algorithms(r));
  }
}

void print_json(const std::vector<Result>& results) {
  nlohmann::ordered_json out;
  out["error"] = "100 x (predicted busbw / measured busbw - 1); small: size < 1 MiB";
  auto& sets = out["datasets"] = nlohmann::ordered_json::array();
  const auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  for (const auto& r : results) {
    nlohmann::ordered_json j{{"dataset", r.name}, {"role", r.map.role}, {"topology", r.map.topology}};
    if (r.skipped) {
      j["skipped"] = *r.skipped;
      sets.push_back(j);
      continue;
    }
    const Stats all = region(r, 0), small = region(r, 1), large = region(r, 2);
    j["collective"] = r.collective;
    j["gpus"] = r.gpus;
    j["p2p"] = r.map.p2p;
    j["sizes"] = all.count;
    j["median_abs_err_pct"] = num(all.median);
    j["max_abs_err_pct"] = num(all.max);
    j["small_median_abs_err_pct"] = num(small.median);
    j["large_median_abs_err_pct"] = num(large.median);
    auto& pts = j["points"] = nlohmann::ordered_json::array();
    for (const auto& p : r.points)
      pts.push_back({{"size_bytes", static_cast<long long>(p.size)}, {"measured_us", p.measured_us},
                     {"predicted_us", p.predicted_us}, {"measured_busbw_GBps", p.measured_busbw},
                     {"predicted_busbw_GBps", p.predicted_busbw}, {"err_pct", p.error()},
                     {"algo", p.algo}, {"proto", p.proto}});
    sets.push_back(j);
  }
  auto& sum = out["summary"] = nlohmann::ordered_json::object();
  for (const auto& role : {"fit", "holdout", "all"}) {
    const Summary s = summarise(results, role);
    sum[role] = {{"datasets", s.sets}, {"median_of_median_abs_err_pct", num(s.of_medians.median)},
                 {"median_abs_err_pct_all_points", num(s.points.median)}, {"datasets_above_15pct", s.above15}};
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
                     L + 10, T + 12, L + 90, T + 12, fmt_pct(region(r, 0).median));
  const fs::path path = fs::path(dir) / (fs::path(r.name).stem().string() + ".svg");
  std::ofstream out(path);
  if (!out) throw InputError(path.string(), 0, 0, "cannot write the plot");
  out << svg;
}

std::vector<std::string> data_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".csv") in_dir.push_back(e.path().string());
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      if (!fs::exists(p)) throw InputError(p, 0, 0, "no such file or folder");
      files.push_back(p);
    }
  }
  return files;
}

int run_validate(ValidateOptions o) {
  if (o.format != "table" && o.format != "csv" && o.format != "json")
    throw InputError(fmt::format("--format: expected table, csv or json, got '{}'", o.format));
  if (o.model != "simulate" && o.model != "analytic")
    throw InputError(fmt::format("--model: expected simulate or analytic, got '{}'", o.model));
  if (o.role != "all" && o.role != "fit" && o.role != "holdout")
    throw InputError(fmt::format("--role: expected all, fit or holdout, got '{}'", o.role));
  if (o.paths.empty()) o.paths.push_back((fs::path(o.map).parent_path() / "data").string());
  const auto map = read_map(o.map);
  const models::Params params = o.params.empty() ? models::default_params() : models::load_params(o.params);
  if (!o.plot.empty()) fs::create_directories(o.plot);
  std::vector<Result> results;
  for (const auto& file : data_files(o.paths)) {
    Result r;
    r.file = file;
    r.name = fs::path(file).filename().string();
    const auto it = map.find(r.name);
    if (it == map.end()) {
      r.skipped = fmt::format("not in {} (no topology is mapped to it)", o.map);
    } else {
      r.map = it->second;
      if (o.role != "all" && r.map.role != o.role) continue;
      if (r.map.unmapped) {
        r.skipped = "no shipped topology: " + *r.map.unmapped;
      } else {
        try {
          run_dataset(r, o, params);
        } catch (const std::exception& e) {   // InputError and anything else: one line, skip
          r.skipped = e.what();
          r.points.clear();
        }
      }
    }
    if (!r.skipped && !o.plot.empty()) write_svg(o.plot, r);
    results.push_back(std::move(r));
  }
  // Nothing validated at all: that is bad input, not a report (one line, exit 2).
  const bool any = std::any_of(results.begin(), results.end(), [](const Result& r) { return !r.skipped; });
  if (!any) {
    if (results.empty()) throw InputError(fmt::format("no data sets to validate in {}", fmt::join(o.paths, ", ")));
    throw InputError(results.front().file, 0, 0, *results.front().skipped);
  }
  if (o.format == "csv") print_csv(results);
  else if (o.format == "json") print_json(results);
  else print_table(results, o);
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "compare predictions with real nccl-tests measurements (accuracy report)");
  cmd->add_option("paths", o->paths, "data sets (CSV files or folders; default: the folder data/ next to --map)");
  cmd->add_option("--map", o->map, "which topology and controls each data set stands for (default validation/map.yaml)");
  cmd->add_option("--format", o->format, "table (default), csv or json (json adds every size)");
  cmd->add_option("--plot", o->plot, "write one SVG per data set into this folder: measured vs predicted busbw");
  cmd->add_option("--model", o->model, "simulate (event-driven, default) or analytic (closed form)");
  cmd->add_option("--params", o->params, "model parameter file replacing the built-in models/params.yaml");
  cmd->add_option("--role", o->role, "all (default), fit or holdout: which data sets to run");
  cmd->callback([o, exit_code] { *exit_code = run_validate(*o); });
}

}  // namespace wiresim::tools
