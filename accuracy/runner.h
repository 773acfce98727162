// Rerunning a validation data set: every measured size through the tuner and the model, on
// the topology and controls its mapping names, compared on busbw. The measured busbw is taken
// from the measured time so that rounded small values keep their precision:
//   error % = 100 x (predicted busbw / measured busbw - 1) = 100 x (t_measured / t_predicted - 1),
// positive when the model is too fast.
//
//   auto sets = prepare(data_files({"validation/data"}), read_map("validation/map.yaml"));
//   for (const auto& s : sets) {
//     const Result r = run(s, models::default_params(), models::Method::simulate);
//   }
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/dataset.h"
#include "models/params.h"
#include "models/run.h"
#include "models/tuner.h"

namespace wiresim::accuracy {

struct Point {
  double size = 0.0;            // bytes
  double measured_us = 0.0;
  double predicted_us = 0.0;
  double measured_busbw = 0.0;  // GB/s, from the measured time
  double predicted_busbw = 0.0;
  std::string algo, proto;
  double error() const { return 100.0 * (measured_us / predicted_us - 1.0); }   // signed %
};

// A data set read and mapped once (its topology built), ready to run under any parameters.
struct Prepared {
  std::string file;
  std::string name;             // file name, the map's key
  Mapping map;
  DataFile data;
  std::shared_ptr<const topo::LinkGraph> graph;
  std::optional<std::string> skipped;   // why it cannot be run
};

struct Result {
  std::string name;
  Mapping map;
  std::string collective;
  int gpus = 0;
  int gpus_per_thread = 1;
  std::vector<Point> points;
  std::optional<std::string> skipped;
};

// CSV files and the CSVs of folders, sorted within each folder. Throws for a missing path.
std::vector<std::string> data_files(const std::vector<std::string>& paths);
// Reads each file and its topology; a file that cannot be read or mapped is kept, skipped,
// with a one-line reason.
std::vector<Prepared> prepare(const std::vector<std::string>& files, const std::map<std::string, Mapping>& map,
                              const std::string& map_path);
// `rank`: how the tuner picks where the map forces nothing (empty: the closed form's fastest;
// models::nccl_time: what NCCL's own cost model picks).
Result run(const Prepared& set, const models::Params& params, models::Method method, const models::Limits& limits = {},
           const models::Ranking& rank = {});

}  // namespace wiresim::accuracy
