// The hardware catalogue: for each shipped system, its topology file and what one of its GPUs
// holds (memory), computes (dense peak FLOP/s per dtype), moves (memory bandwidth), draws
// (power) and costs (price per GPU-hour), every figure with the source it came from.
// topologies/catalog.yaml is compiled in; load_catalog reads an edited copy with the same
// schema (docs/catalog.md). Bad input throws InputError at file:line:column.
//
//   const Catalog& c = default_catalog();
//   const CatalogEntry& e = c.at("hgx-h100");
//   double tflops = e.peak_flops.at("bf16").value.value() / 1e12;      // 989.4
//   LinkGraph g = load_topology(e.topology_path);
//   Catalog mine = load_catalog("my-catalog.yaml",
//                               parse_overrides({"hgx-h100.price_per_gpu_hour_usd=2.5"}));
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "topologies/builder.h"

namespace wiresim::topo {

// One figure and where it comes from. `value` is empty only for a figure the file marks
// `unsourced:`; then `note` says why. A figure set with --set has the setting as its source.
template <typename T>
struct Sourced {
  std::optional<T> value;
  std::string source;
  std::string date;        // when the source was read, YYYY-MM-DD
  std::string published;   // when it was published, where known
  std::string note;
  bool estimate = false;   // a judgement, not a quoted figure
};

struct CatalogEntry {
  std::string name;            // the system: "hgx-h100"
  std::string topology;        // as written, relative to the folder of the file it is in
  std::string topology_path;   // that file, resolved: what load_topology takes
  std::string accelerator;     // the catalogue's accelerator key: "H100-SXM"
  std::string model;           // its description: "NVIDIA H100 SXM5 80GB"
  Sourced<sim::Bytes> memory;                       // per GPU, GB = 1e9 B
  Sourced<sim::BytesPerSec> memory_bandwidth;       // per GPU
  std::map<std::string, Sourced<double>> peak_flops;  // dtype -> dense FLOP/s per GPU
  Sourced<double> power_w;                          // per GPU, TDP
  Sourced<double> price_per_gpu_hour_usd;           // on-demand
};

struct Catalog {
  std::string source;                 // the file it was read from
  std::vector<CatalogEntry> entries;  // in file order
  // The entry of a system; throws InputError naming the nearest known system.
  const CatalogEntry& at(std::string_view system) const;
  const CatalogEntry* find(std::string_view system) const;
};

// Overrides (builder.h, parse_overrides) set one figure of one system:
// "<system>.<figure>" or "<system>.peak_flops.<dtype>" -> the value as the file would write it
// ("hgx-h100.memory" -> "80GB"). Other systems with the same accelerator keep theirs.
Catalog load_catalog(const std::string& path, const Overrides& overrides = {});
// The same for YAML text; topology paths resolve against `topology_dir`.
Catalog load_catalog_text(const std::string& yaml, const std::string& file_name,
                          const std::string& topology_dir, const Overrides& overrides = {});
// The compiled-in topologies/catalog.yaml; its topology paths point into the source tree's
// topologies/ folder, wherever the program runs from.
const Catalog& default_catalog();
// The same with overrides applied (a fresh copy).
Catalog default_catalog(const Overrides& overrides);

}  // namespace wiresim::topo
