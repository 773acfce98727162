#include "accuracy/runner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "models/machine.h"
#include "models/predict.h"
#include "input/input_error.h"

namespace wiresim::accuracy {
namespace {

namespace fs = std::filesystem;
using input::InputError;

// nccl-tests prints busbw = algbw x a factor of the collective and the rank count
// (2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and alltoall, 1 for the
// rest), so the file's own columns say how many ranks it ran. A mapping with a different
// count would score the file against another machine: refuse it at the first row that shows
// it (rows under 1 GB/s carry too few digits to tell).
void check_bus_factor(const Prepared& set, const std::string& collective, int gpus, double factor) {
  for (const Measurement& m : set.data.points) {
    if (m.algbw < 1.0 || m.busbw <= 0.0) continue;
    if (std::abs(m.busbw - m.algbw * factor) <= 0.02 + 0.003 * m.busbw) continue;
    const double ratio = m.busbw / m.algbw;
    std::string ranks;
    if (factor > 1.0 && ratio < 2.0) ranks = fmt::format(" (about {:.0f} ranks)", 2.0 / (2.0 - ratio));
    else if (factor < 1.0 && ratio < 1.0) ranks = fmt::format(" (about {:.0f} ranks)", 1.0 / (1.0 - ratio));
    throw InputError(set.file, m.line, 1,
                     fmt::format("busbw_GBps {} is {:.3f} x algbw_GBps {}{}, but {} on the {} GPUs the map "
                                 "gives is {:.3f} x: check gpus, gpus_per_node or ranks in the map",
                                 m.busbw, ratio, m.algbw, ranks, collective, gpus, factor));
  }
}

}  // namespace

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

std::vector<Prepared> prepare(const std::vector<std::string>& files, const std::map<std::string, Mapping>& map,
                              const std::string& map_path) {
  std::vector<Prepared> out;
  std::map<std::pair<std::string, topo::Overrides>, std::shared_ptr<const topo::LinkGraph>> graphs;
  for (const auto& file : files) {
    Prepared s;
    s.file = file;
    s.name = fs::path(file).filename().string();
    const auto it = map.find(s.name);
    if (it == map.end()) {
      s.skipped = fmt::format("not in {} (no topology is mapped to it)", map_path);
    } else if (it->second.unmapped) {
      s.map = it->second;
      s.skipped = "no shipped topology: " + *it->second.unmapped;
    } else {
      s.map = it->second;
      try {
        s.data = read_data(file);
        auto& g = graphs[{s.map.topology, s.map.settings}];
        if (!g) g = std::make_shared<const topo::LinkGraph>(topo::load_topology(s.map.topology, s.map.settings));
        s.graph = g;
      } catch (const std::exception& e) {   // InputError and anything else: one line, skip
        s.skipped = e.what();
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result run(const Prepared& set, const models::Params& params, models::Method method, const models::Limits& limits,
           const models::Ranking& rank) {
  Result r;
  r.name = set.name;
  r.map = set.map;
  r.skipped = set.skipped;
  if (r.skipped) return r;
  try {
    const auto& m = set.map;
    r.collective = m.collective.value_or(set.data.collective);
    const auto op = models::parse_collective(r.collective);
    if (!op) throw InputError(set.file, 0, 0, "no '# collective:' header naming the test and no 'collective:' in the map");
    r.collective = std::string(models::to_string(*op));
    const models::Machine machine(*set.graph, params, {.p2p = m.p2p});
    models::Problem problem;
    problem.op = *op;
    problem.limits = limits;
    problem.ranks = pick_ranks(*set.graph, m);
    problem.gpus_per_thread = m.gpus_per_thread.value_or(set.data.gpus_per_thread);
    r.gpus = static_cast<int>(problem.ranks.size());
    r.gpus_per_thread = problem.gpus_per_thread;
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
    tuner.rank = rank;
    const double factor = models::bus_factor(*op, r.gpus);
    check_bus_factor(set, r.collective, r.gpus, factor);
    for (const auto& measured : set.data.points) {
      Point p;
      p.size = measured.size;
      p.measured_us = measured.time_us;
      // Float elements, as every shipped data set ran (nccl-tests' default type).
      problem.size = models::nccl_tests_size(*op, sim::Bytes{p.size}, 4, r.gpus);
      if (problem.size.count() <= 0.0) problem.size = sim::Bytes{p.size};
      // Every point at full detail (aggregation 1): the error is the model's own.
      models::PredictOptions options;
      options.tuner = tuner;
      options.method = method;
      options.aggregation = 1;
      const models::Prediction prediction = models::predict(machine, problem, options);
      const models::Decision& decision = prediction.decision;
      const models::Outcome& out = prediction.outcome;
      p.measured_busbw = p.size / (p.measured_us * 1e-6) / 1e9 * factor;
      p.predicted_us = out.time.us();
      p.predicted_busbw = out.busbw_GBps;
      p.algo = std::string(models::to_string(decision.best.algorithm));
      p.proto = std::string(models::to_string(decision.best.protocol));
      r.points.push_back(p);
    }
  } catch (const std::exception& e) {
    r.skipped = e.what();
    r.points.clear();
  }
  return r;
}

}  // namespace wiresim::accuracy
