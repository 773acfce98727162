// wiresim coll OP --topo T.yaml: one collective over a range of sizes, printed like
// nccl-tests (table), or as the CSV/JSON contract of shared/DESIGN.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "models/alpha_beta.h"
#include "models/fidelity.h"
#include "models/limits.h"
#include "models/machine.h"
#include "models/predict.h"
#include "input/collective.h"
#include "input/input_error.h"
#include "input/lines.h"
#include "input/traffic_matrix.h"
#include "sim/trace.h"
#include "sim/units.h"
#include "tools/coll_common.h"
#include "tools/commands.h"
#include "tools/machine_input.h"
#include "topologies/builder.h"

namespace wiresim::tools {
namespace {

using input::InputError;

struct CollOptions : MachineOptions {
  std::string op;
  std::optional<int> gpus;   // default: every GPU of the topology
  std::vector<int> ranks;    // --ranks: these GPUs (indices in topology order), in rank order
  std::optional<int> gpus_per_node;
  std::string sizes = "8B:8GiB:2";
  std::string algo = "auto";
  std::string proto = "auto";
  int channels = 0;
  std::string aggregate = "auto";
  int root = 0;
  std::string dtype = "float";
  std::string model = "simulate";
  std::string tuner = "nccl";
  std::string pick = "fastest";
  std::string trace;
  std::string matrix;
  bool explain = false;
  bool bands = false;
};

sim::Bytes size_arg(const std::string& text) {
  try {
    return sim::parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("--sizes: {}", e.what()));
  }
}

// A size --sizes may ask for (`text`, as the user wrote it): at most 1 PB.
sim::Bytes within_limit(const std::string& text) {
  const sim::Bytes size = size_arg(text);
  if (size.count() > 1e15) throw InputError(fmt::format("--sizes: {} is beyond 1 PB; refusing", text));
  return size;
}

// "8B:8GiB:2" (min, max, factor), "1MiB:1GiB" (factor 2), one size, or a list of sizes
// ("64KiB,16MiB,1GiB").
std::vector<sim::Bytes> parse_sizes(const std::string& text) {
  if (text.find(',') != std::string::npos) {
    if (text.find(':') != std::string::npos)
      throw InputError(fmt::format("--sizes: expected MIN:MAX[:FACTOR] or a list of sizes, not both, got '{}'", text));
    std::vector<sim::Bytes> sizes;
    for (const auto& field : input::split_fields(text)) sizes.push_back(within_limit(std::string(field.text)));
    return sizes;
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t pos; (pos = text.find(':', start)) != std::string::npos; start = pos + 1)
    parts.push_back(text.substr(start, pos - start));
  parts.push_back(text.substr(start));
  if (parts.size() > 3) throw InputError(fmt::format("--sizes: expected MIN:MAX[:FACTOR], got '{}'", text));
  const sim::Bytes lo = size_arg(parts[0]);
  const sim::Bytes hi = parts.size() > 1 ? size_arg(parts[1]) : lo;
  double factor = 2.0;
  if (parts.size() == 3) {
    try {
      std::size_t used = 0;
      factor = std::stod(parts[2], &used);
      if (used != parts[2].size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw InputError(fmt::format("--sizes: expected a number as the factor, got '{}'", parts[2]));
    }
    if (!(factor > 1.0)) throw InputError(fmt::format("--sizes: the factor must be above 1, got '{}'", parts[2]));
  }
  if (hi < lo) throw InputError(fmt::format("--sizes: the maximum {} is below the minimum {}", parts[1], parts[0]));
  within_limit(parts.size() > 1 ? parts[1] : parts[0]);
  if (parts.size() == 1) return {lo};
  if (lo.count() <= 0.0)
    throw InputError(fmt::format("--sizes: a range starts above 0 B (each size is the one before times the factor), "
                                 "got '{}'; start at one element, e.g. 4B:{}",
                                 text, parts[1]));
  std::vector<sim::Bytes> sizes;
  for (double s = lo.count(); s <= hi.count() * (1.0 + 1e-12); s *= factor) {
    sizes.push_back(sim::Bytes{std::floor(s)});
    if (sizes.size() > 4096) throw InputError("--sizes: more than 4096 sizes; use a larger factor");
  }
  return sizes;
}

struct Row {
  sim::Bytes size;
  long long count = 0;
  models::Outcome outcome;
  std::optional<models::Decision> decision;
  std::string fidelity;   // what auto fidelity chose, when it was not plain full detail
  double error = 0.0;     // its measured relative error
  bool measured = false;  // aggregation or extrapolation: the error was measured
};

// The GPUs the collective runs on, in rank order: --ranks, or the first --gpus-per-node of each
// node, or the first --gpus (default: every GPU).
std::vector<topo::DeviceId> pick_ranks(const topo::LinkGraph& graph, const CollOptions& o) {
  const auto& gpus = graph.gpus();
  const int total = static_cast<int>(gpus.size());
  if (!o.ranks.empty() + o.gpus_per_node.has_value() + o.gpus.has_value() > 1)
    throw InputError("--ranks, --gpus-per-node and --gpus: give one of them");
  std::vector<topo::DeviceId> out;
  if (!o.ranks.empty()) {
    std::vector<bool> used(total, false);
    for (int g : o.ranks) {
      if (g < 0 || g >= total) throw InputError(fmt::format("--ranks: GPU {} is not in {} (0..{})", g, o.topo, total - 1));
      if (used[g]) throw InputError(fmt::format("--ranks: GPU {} given twice", g));
      used[g] = true;
      out.push_back(gpus[g]);
    }
  } else if (o.gpus_per_node) {
    std::map<int, int> taken;   // node -> GPUs taken
    for (auto d : gpus)
      if (taken[graph.device(d).node]++ < *o.gpus_per_node) out.push_back(d);
    for (const auto& [node, count] : taken)
      if (count < *o.gpus_per_node)
        throw InputError(fmt::format("--gpus-per-node: node {} has {} GPUs, fewer than {}", node, count, *o.gpus_per_node));
  } else {
    const int n = o.gpus.value_or(total);
    if (n < 2 || n > total) throw InputError(fmt::format("--gpus: expected 2..{} (the GPUs in {}), got {}", total, o.topo, n));
    out.assign(gpus.begin(), gpus.begin() + n);
  }
  if (out.size() < 2) throw InputError(fmt::format("a collective needs 2 GPUs or more, got {}", out.size()));
  return out;
}

// --aggregate: "auto" (nullopt) or a factor K >= 1 (1 = full detail).
std::optional<int> parse_aggregate(const std::string& text) {
  if (text == "auto") return std::nullopt;
  int k = 0;
  std::size_t used = 0;
  try {
    k = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw InputError(fmt::format("--aggregate: expected auto or a whole number, got '{}'", text));
  if (k < 1) throw InputError(fmt::format("--aggregate: expected 1 or more, got {}", k));
  return k;
}

// A progress bar on stderr for simulations that take more than a second: redrawn in place
// on a terminal; elsewhere (a log) a line per tenth, and only once it has run 5 s.
class ProgressBar {
 public:
  explicit ProgressBar(std::string what) : what_(std::move(what)), terminal_(isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() {
    if (drawn_ && terminal_) fmt::print(stderr, "\r{:<70}\r", "");
  }
  void operator()(std::size_t done, std::size_t total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < (terminal_ ? 1.0 : 5.0) || total == 0) return;
    const int tenths = static_cast<int>(10 * done / total);
    if (!terminal_ && tenths == last_) return;
    last_ = tenths;
    const int width = 30, filled = static_cast<int>(width * done / total);
    fmt::print(stderr, "{}wiresim: simulating {} [{}{}] {:3.0f}%{}", terminal_ ? "\r" : "", what_,
               std::string(filled, '#'), std::string(width - filled, ' '), 100.0 * done / total, terminal_ ? "" : "\n");
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::string what_;
  bool terminal_;
  bool drawn_ = false;
  int last_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string link_name(const topo::LinkGraph& g, sim::LinkId l) { return g.link_label(l); }

// "auto, ring, tree, ...": --algo's values, from the algorithm table (models/algorithm.h).
std::string algo_names() {
  std::string names = "auto";
  for (models::Algorithm a : models::all_algorithms()) names += fmt::format(", {}", models::to_string(a));
  return names;
}

void print_explain(const models::Machine& machine, const models::Problem& problem, const Row& row) {
  fmt::print("#\n# {} at {} ({}): candidates by the closed-form model\n", models::to_string(problem.op),
             sim::format_size(row.size), row.size.count());
  for (const auto& c : row.decision->candidates) {
    const bool chosen = c.time && c.choice.algorithm == row.outcome.choice.algorithm &&
                        c.choice.protocol == row.outcome.choice.protocol;
    if (c.time && c.ranked)
      fmt::print("#   {} {:<12} {:<6} {:>12.2f} us   ranked {:.2f} us ({}); {}\n", chosen ? "*" : " ",
                 models::to_string(c.choice.algorithm), models::to_string(c.choice.protocol), c.time->us(),
                 c.ranked->time.us(), c.ranked->formula, c.note);
    else if (c.time)
      fmt::print("#   {} {:<12} {:<6} {:>12.2f} us   {}\n", chosen ? "*" : " ", models::to_string(c.choice.algorithm),
                 models::to_string(c.choice.protocol), c.time->us(), c.note);
    else
      fmt::print("#     {:<12} {:<6} {:>15}   {}\n", models::to_string(c.choice.algorithm),
                 models::to_string(c.choice.protocol), "refused", c.note);
  }
  (void)machine;
}

void print_transports(const models::Machine& machine, const models::Problem& problem) {
  const auto& g = machine.graph();
  // What the model uses: a staged pair (P2P off, or PHB/NODE/SYS) is SHM whatever the topology
  // offers; a NET pair without GPUDirect RDMA on a side goes through host memory.
  const auto transport = [&](topo::DeviceId a, topo::DeviceId b) { return machine.exchange(a, b).name(); };
  const int n = static_cast<int>(problem.ranks.size());
  fmt::print("# Transports between ranks (as NCCL_DEBUG=INFO would report them):\n");
  if (n <= 16) {
    std::vector<std::vector<std::string>> cell(n, std::vector<std::string>(n, "X"));
    std::size_t width = 6, column = 10;
    for (int i = 0; i < n; ++i) {
      width = std::max(width, g.device(problem.ranks[i]).name.size());
      column = std::max(column, g.device(problem.ranks[i]).name.size());
      for (int j = 0; j < n; ++j)
        if (i != j) column = std::max(column, (cell[i][j] = transport(problem.ranks[i], problem.ranks[j])).size());
    }
    fmt::print("#  {:>{}}", "", width);
    for (int j = 0; j < n; ++j) fmt::print(" {:>{}}", g.device(problem.ranks[j]).name, column);
    fmt::print("\n");
    for (int i = 0; i < n; ++i) {
      fmt::print("#  {:>{}}", g.device(problem.ranks[i]).name, width);
      for (int j = 0; j < n; ++j) fmt::print(" {:>{}}", cell[i][j], column);
      fmt::print("\n");
    }
  } else {
    std::map<std::string, long long> counts;
    for (int i = 0; i < n; ++i) {
      const int j = (i + 1) % n;
      ++counts[transport(problem.ranks[i], problem.ranks[j])];
    }
    for (const auto& [t, c] : counts) fmt::print("#   ring neighbours over {}: {}\n", t, c);
  }
}

// The calibration overlay this run is under (empty: none), named in every output; likewise
// the --fail/--degrade faults.
std::string overlay_note;
std::string faults_note;
// --bands: the interval of each predicted time (null: not asked for).
const PredictionBands* bands = nullptr;

// The band's times, in us, and the distinct sources of the rows' bands (for the table's notes).
std::pair<double, double> band_us(const Row& r) {
  const accuracy::Band b = bands->at(r.size.count());
  return {r.outcome.time.us() * b.low, r.outcome.time.us() * b.high};
}

void print_table(const CollOptions& o, const models::Machine& machine, const models::Problem& problem,
                 const std::vector<Row>& rows) {
  const auto& g = machine.graph();
  const auto& gpu0 = g.device(problem.ranks.front());
  fmt::print("# wiresim coll {} on {}: {} GPUs ({}, {}), model {}\n", models::to_string(problem.op), o.topo,
             problem.ranks.size(), gpu0.model.empty() ? "gpu" : gpu0.model, machine.arch_name(), o.model);
  fmt::print("# sizes are nccl-tests sizes; GB/s = 1e9 B/s; busbw = algbw x {}\n",
             input::bus_factor_formula(problem.op));
  if (!overlay_note.empty()) fmt::print("# overlay {}\n", overlay_note);
  if (const std::string note = transport_note(machine.transports()); !note.empty()) fmt::print("# {}\n", note);
  if (!faults_note.empty()) fmt::print("# faults: {}\n", faults_note);
  if (o.explain) print_transports(machine, problem);
  const bool rooted = input::rooted(problem.op);
  const std::string redop = models::reduces(problem.op) ? "sum" : "none";
  const std::string band_head = bands ? fmt::format(" {:>10} {:>10}", "time_lo", "time_hi") : "";
  const std::string band_unit = bands ? fmt::format(" {:>10} {:>10}", "(us)", "(us)") : "";
  fmt::print("#\n#{:>12} {:>12} {:>8} {:>6} {:>6} {:>10}{} {:>8} {:>8}  {}\n", "size", "count", "type", "redop", "root",
             "time", band_head, "algbw", "busbw", "algorithm");
  fmt::print("#{:>12} {:>12} {:>8} {:>6} {:>6} {:>10}{} {:>8} {:>8}\n", "(B)", "(elements)", "", "", "", "(us)", band_unit,
             "(GB/s)", "(GB/s)");
  std::vector<std::string> band_sources;
  double bus_sum = 0.0;
  for (const auto& r : rows) {
    if (o.explain && r.decision) print_explain(machine, problem, r);
    std::string band_cols;
    if (bands) {
      const auto [lo, hi] = band_us(r);
      band_cols = fmt::format(" {:>10.2f} {:>10.2f}", lo, hi);
      const std::string source = bands->at(r.size.count()).source;
      if (std::find(band_sources.begin(), band_sources.end(), source) == band_sources.end())
        band_sources.push_back(source);
    }
    fmt::print(" {:>12.0f} {:>12} {:>8} {:>6} {:>6} {:>10.2f}{} {:>8.2f} {:>8.2f}  {}/{}\n", r.size.count(), r.count,
               o.dtype, redop, rooted ? problem.root : -1, r.outcome.time.us(), band_cols, r.outcome.algbw_GBps,
               r.outcome.busbw_GBps, models::to_string(r.outcome.choice.algorithm),
               models::to_string(r.outcome.choice.protocol));
    if (!r.fidelity.empty() && r.measured)
      fmt::print("#   ^ a large run: {}; measured error {:.2g}%\n", r.fidelity, 100.0 * r.error);
    else if (!r.fidelity.empty())
      fmt::print("#   ^ a large run: {}\n", r.fidelity);
    bus_sum += r.outcome.busbw_GBps;
  }
  fmt::print("# Avg bus bandwidth    : {:.3f} GB/s\n", rows.empty() ? 0.0 : bus_sum / rows.size());
  if (bands) {
    fmt::print("# time_lo..time_hi: where 8 in 10 measured times fell, on validation data like this run (docs/accuracy.md):\n");
    for (const auto& s : band_sources) fmt::print("#   {}\n", s);
  }
  const Row& last = rows.back();
  fmt::print("# At {}: {} ({}).\n", sim::format_size(last.size), models::to_string(last.outcome.choice.algorithm),
             last.outcome.shape);
  if (!last.outcome.hottest.empty()) {
    fmt::print("# Busiest links at {} (bytes carried / (capacity x time)):\n", sim::format_size(last.size));
    for (const auto& h : last.outcome.hottest)
      fmt::print("#   {:<40} {:5.1f}%  {}\n", link_name(g, h.link), 100.0 * h.utilisation, sim::format_size(h.carried));
  }
}

void print_csv(const CollOptions& o, const std::vector<Row>& rows) {
  fmt::print("size_bytes,count,dtype,algo,proto,time_us,algbw_GBps,busbw_GBps{}\n", bands ? ",time_us_lo,time_us_hi" : "");
  for (const auto& r : rows) {
    fmt::print("{:.0f},{},{},{},{},{:.3f},{:.3f},{:.3f}", r.size.count(), r.count, o.dtype,
               models::to_string(r.outcome.choice.algorithm), models::to_string(r.outcome.choice.protocol),
               r.outcome.time.us(), r.outcome.algbw_GBps, r.outcome.busbw_GBps);
    if (bands) {
      const auto [lo, hi] = band_us(r);
      fmt::print(",{:.3f},{:.3f}", lo, hi);
    }
    fmt::print("\n");
  }
}

void print_json(const CollOptions& o, const models::Machine& machine, const models::Problem& problem,
                const std::vector<Row>& rows) {
  nlohmann::ordered_json out;
  out["collective"] = models::to_string(problem.op);
  out["topology"] = o.topo;
  out["gpus"] = problem.ranks.size();
  out["model"] = o.model;
  out["dtype"] = o.dtype;
  if (!overlay_note.empty()) out["overlay"] = overlay_note;
  if (!machine.p2p()) out["p2p"] = false;
  if (machine.gdr() != models::Gdr::automatic) out["gdr"] = machine.gdr() == models::Gdr::on ? "on" : "off";
  if (machine.net() == models::Net::socket) out["net"] = "socket";
  if (!faults_note.empty()) out["faults"] = faults_note;
  out["units"] = {{"time", "us"}, {"bandwidth", "GB/s (1e9 B/s)"}, {"size", "B"}};
  auto& results = out["results"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json row;
    row["size_bytes"] = static_cast<long long>(r.size.count());
    row["count"] = r.count;
    row["algo"] = models::to_string(r.outcome.choice.algorithm);
    row["proto"] = models::to_string(r.outcome.choice.protocol);
    row["channels"] = r.outcome.choice.channels;
    row["time_us"] = r.outcome.time.us();
    if (bands) {
      const auto [lo, hi] = band_us(r);
      row["time_us_lo"] = lo;
      row["time_us_hi"] = hi;
      row["band_source"] = bands->at(r.size.count()).source;
    }
    row["algbw_GBps"] = r.outcome.algbw_GBps;
    row["busbw_GBps"] = r.outcome.busbw_GBps;
    row["shape"] = r.outcome.shape;
    if (!r.fidelity.empty()) row["fidelity"] = r.fidelity;
    if (r.measured) row["error_estimate"] = r.error;
    auto& hot = row["busiest_links"] = nlohmann::ordered_json::array();
    for (const auto& h : r.outcome.hottest)
      hot.push_back({{"link", machine.graph().link_label(h.link)}, {"utilisation", h.utilisation},
                     {"bytes", h.carried.count()}});
    if (r.decision) {
      auto& cands = row["candidates"] = nlohmann::ordered_json::array();
      for (const auto& c : r.decision->candidates) {
        nlohmann::ordered_json cj{{"algo", models::to_string(c.choice.algorithm)},
                                  {"proto", models::to_string(c.choice.protocol)}};
        if (c.time) cj["time_us"] = c.time->us();
        else cj["refused"] = c.note;
        if (c.ranked) cj["ranked_us"] = c.ranked->time.us();
        cands.push_back(cj);
      }
    }
    results.push_back(row);
  }
  fmt::print("{}\n", out.dump(2));
}

void write_trace(const std::string& path, const models::Machine& machine, const models::Problem& problem,
                 const models::Detail& detail) {
  std::ofstream file(path);
  if (!file) throw InputError(path, 0, 0, "cannot write the trace file");
  sim::TraceOptions options;
  for (auto gpu : problem.ranks) options.track_names.push_back(machine.graph().device(gpu).name);
  options.links = machine.links();
  sim::write_chrome_trace(file, detail.plan.dag, detail.run, options);
}

int run_coll(const CollOptions& o) {
  const auto op = models::parse_collective(o.op);
  if (!op)
    throw InputError(fmt::format("unknown collective '{}' (expected all_reduce, all_gather, reduce_scatter, "
                                 "all_to_all, broadcast, reduce, send_recv)", o.op));
  if (o.format != "table" && o.format != "csv" && o.format != "json")
    throw InputError(fmt::format("--format: expected table, csv or json, got '{}'", o.format));
  if (o.model != "simulate" && o.model != "analytic")
    throw InputError(fmt::format("--model: expected simulate or analytic, got '{}'", o.model));
  if (o.tuner != "nccl" && o.tuner != "all")
    throw InputError(fmt::format("--tuner: expected nccl or all, got '{}'", o.tuner));
  models::TunerOptions tuner;
  tuner.all_algorithms = o.tuner == "all";
  tuner.rank = pick_option(o.pick);
  if (o.algo != "auto") {
    tuner.algorithm = models::parse_algorithm(o.algo);
    if (!tuner.algorithm)
      throw InputError(fmt::format("--algo: unknown algorithm '{}' (expected {})", o.algo, algo_names()));
  }
  if (o.proto != "auto") {
    tuner.protocol = models::parse_protocol(o.proto);
    if (!tuner.protocol) throw InputError(fmt::format("--proto: unknown protocol '{}' (expected auto, ll, ll128, simple)", o.proto));
  }
  if (o.channels != 0) {
    if (o.channels < 1 || o.channels > 64) throw InputError(fmt::format("--channels: expected 1..64, got {}", o.channels));
    tuner.channels = o.channels;
  }
  const std::optional<int> aggregate = parse_aggregate(o.aggregate);
  const int element = dtype_size(o.dtype);
  auto sizes = parse_sizes(o.sizes);
  MachineInput input = load_machine_input(o, o.topo, topo::parse_overrides(o.settings));
  const topo::LinkGraph& graph = input.graph;
  models::Problem problem;
  problem.op = *op;
  problem.root = o.root;
  problem.limits = input.limits;
  problem.ranks = pick_ranks(graph, o);
  input.scope_overlay(*op, problem.ranks);
  overlay_note = input.overlay;
  faults_note = input.faults;
  // CSV keeps its contract header; what the machine differs in goes to stderr there.
  if (o.format == "csv")
    for (const auto& line : input.conditions())
      fmt::print(stderr, "# {}\n", line);
  const models::Machine machine = input.machine();
  const int n = static_cast<int>(problem.ranks.size());
  std::optional<PredictionBands> band_table;
  if (o.bands) band_table.emplace(input, problem.ranks);
  bands = band_table ? &*band_table : nullptr;
  const double align = splits_per_rank(*op) ? static_cast<double>(element) * n : element;
  const auto method = o.model == "analytic" ? models::Method::analytic : models::Method::simulate;
  std::vector<Row> rows;
  models::Detail detail;
  if (!o.matrix.empty()) {
    if (*op != models::Collective::all_to_all) throw InputError("--matrix: a traffic matrix applies to all_to_all only");
    problem.matrix = input::read_traffic_matrix(o.matrix, n);
    // The nccl-tests size of a skewed exchange: the busiest rank's send buffer.
    double busiest = 0.0;
    for (int i = 0; i < n; ++i) {
      double row_bytes = 0.0;
      for (int j = 0; j < n; ++j) row_bytes += problem.matrix[static_cast<std::size_t>(i) * n + j];
      busiest = std::max(busiest, row_bytes);
    }
    sizes = {sim::Bytes{std::ceil(busiest / (static_cast<double>(element) * n)) * element * n}};
  }
  for (const auto& requested : sizes) {
    Row row;
    row.size = nccl_tests_size(*op, requested, element, n);
    if (row.size.count() <= 0.0) continue;
    row.count = nccl_tests_count(*op, row.size, element, n);
    problem.size = row.size;
    const bool last = &requested == &sizes.back();
    ProgressBar bar(fmt::format("{} {}", models::to_string(problem.op), sim::format_size(row.size)));
    models::PredictOptions predict;
    predict.tuner = tuner;
    predict.method = method;
    predict.aggregation = aggregate;
    predict.detail = last && !o.trace.empty() && method == models::Method::simulate ? &detail : nullptr;
    if (method == models::Method::simulate && !aggregate)
      predict.run.progress = [&bar](std::size_t done, std::size_t total) { bar(done, total); };
    models::Prediction p = models::predict(machine, problem, predict);
    row.decision = std::move(p.decision);
    row.outcome = std::move(p.outcome);
    row.fidelity = p.fidelity;
    row.error = p.error;
    row.measured = p.error_measured;
    if (!row.fidelity.empty() && o.format == "csv")
      fmt::print(stderr, "wiresim: {} at {}: {}{}\n", models::to_string(problem.op), sim::format_size(row.size),
                 row.fidelity, row.measured ? fmt::format("; measured error {:.2g}%", 100.0 * row.error) : "");
    if (!o.explain && o.format != "json") row.decision.reset();
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw InputError(fmt::format("--sizes: every size is below {} ({} B)",
                                 splits_per_rank(*op) ? "one element per rank" : "one element", align));
  if (o.format == "csv") print_csv(o, rows);
  else if (o.format == "json") print_json(o, machine, problem, rows);
  else print_table(o, machine, problem, rows);
  if (!o.trace.empty()) {
    if (method != models::Method::simulate) throw InputError("--trace needs --model simulate");
    write_trace(o.trace, machine, problem, detail);
  }
  return 0;
}

}  // namespace

void add_coll_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<CollOptions>();
  auto* cmd = app.add_subcommand("coll", "simulate one collective over a range of sizes (nccl-tests style)");
  cmd->add_option("op", o->op, "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv")
      ->required();
  add_machine_options(cmd, *o, {TopologyOption::required, "table (nccl-tests columns), csv or json"});
  cmd->add_option("--gpus", o->gpus, "use the first N GPUs in topology order (default: all)");
  cmd->add_option("--ranks", o->ranks, "use these GPUs (indices in topology order) as ranks 0, 1, ..., e.g. 0,1,6,7")
      ->delimiter(',');
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "use the first N GPUs of every node (a job with N GPUs per node)");
  cmd->add_option("--sizes", o->sizes, "MIN:MAX[:FACTOR], one size, or a list (64KiB,16MiB,1GiB); nccl-tests sizes (default 8B:8GiB:2)");
  cmd->add_option("--algo", o->algo, algo_names());
  cmd->add_option("--proto", o->proto, "auto, ll, ll128, simple");
  cmd->add_option("--channels", o->channels, "channels (default: the GPU architecture's)");
  cmd->add_option("--aggregate", o->aggregate,
                  "fidelity: auto (default: full detail unless the run would be large, then aggregation or "
                  "size extrapolation with its measured error), 1 = always full detail, or K: merge up to K "
                  "consecutive chunks, then ring/pairwise steps, into one transfer (docs/scale.md)");
  cmd->add_option("--root", o->root, "root rank for broadcast and reduce (default 0)");
  cmd->add_option("--dtype", o->dtype, "element type: float, half, bf16, fp8, double, int8, int32, int64");
  cmd->add_option("--model", o->model, "simulate (event-driven, default) or analytic (closed form)");
  cmd->add_option("--tuner", o->tuner, "candidate set for --algo auto: nccl (default) or all");
  cmd->add_option("--pick", o->pick,
                  "how --algo auto picks: fastest (default: the closed form's fastest) or nccl (what NCCL's own cost "
                  "model, src/graph/tuning.cc, ranks first: what NCCL runs by default; across NVIDIA nodes only, "
                  "docs/models.md)");
  cmd->add_option("--trace", o->trace, "write a Chrome/Perfetto trace of the largest size to this file");
  cmd->add_option("--matrix", o->matrix, "all_to_all traffic matrix: n lines of n sizes (bytes rank i sends rank j)");
  cmd->add_flag("--bands", o->bands,
                "give each time an interval (time_lo, time_hi): where 8 in 10 measured times fell on validation data of "
                "this hardware class and size region, or the overlay's held-out error (docs/accuracy.md)");
  cmd->add_flag("--explain", o->explain, "print the tuner's candidates per size and the transport per rank pair");
  cmd->callback([o, exit_code] { *exit_code = run_coll(*o); });
}

}  // namespace wiresim::tools
