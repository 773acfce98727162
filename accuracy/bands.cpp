#include "accuracy/bands.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "input/keys.h"
#include "input/yaml.h"
#include "input/input_error.h"
#include "topologies/routes.h"

namespace wiresim::accuracy {

extern const std::string_view kShippedBandsYaml;

namespace {

constexpr std::array<std::string_view, 4> kRegionKeys{"floor", "ramp", "plateau", "all"};

// Linear interpolation between order statistics of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted.front();
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

Band band_of(std::vector<double> ratios, double lo, double hi) {
  Band b;
  b.points = static_cast<int>(ratios.size());
  if (ratios.empty()) return b;
  std::sort(ratios.begin(), ratios.end());
  b.low = quantile(ratios, lo);
  b.high = quantile(ratios, hi);
  return b;
}

int region_index(double size_bytes) {
  for (std::size_t i = 0; i < kBandRegions.size(); ++i)
    if (in_region(size_bytes, kBandRegions[i])) return static_cast<int>(i);
  return 3;
}

}  // namespace

Band ErrorBands::at(const std::string& hw_class, double size_bytes) const {
  auto it = classes.find(hw_class);
  std::string name = hw_class;
  if (it == classes.end()) {   // no checked data of this class: every class's checked sizes
    it = classes.find(std::string(kAnyClass));
    name = fmt::format("{} (no checked data of class {})", kAnyClass, hw_class);
  }
  if (it == classes.end()) throw input::InputError(fmt::format("error bands: no band for hardware class '{}'", hw_class));
  const int i = region_index(size_bytes);
  Band b = it->second.regions[static_cast<std::size_t>(i)];
  std::string_view region = kRegionKeys[static_cast<std::size_t>(i)];
  if (b.points == 0) {   // no validation point in this region: the class's band over every size
    b = it->second.regions[3];
    region = "all sizes (none measured in this region)";
  }
  b.source = fmt::format("class {}, {} ({} sizes of checked data sets)", name, region, b.points);
  return b;
}

ErrorBands compute_bands(const std::vector<Result>& results, double low_quantile, double high_quantile) {
  std::map<std::string, std::array<std::vector<double>, 4>> ratios;
  for (const auto& r : results)
    for (const auto& p : r.points) {
      if (!(p.predicted_us > 0.0) || !(p.measured_us > 0.0)) continue;
      const double ratio = p.measured_us / p.predicted_us;
      for (const std::string& name : {r.map.hw_class, std::string(kAnyClass)}) {
        auto& by_region = ratios[name];
        by_region[static_cast<std::size_t>(region_index(p.size))].push_back(ratio);
        by_region[3].push_back(ratio);
      }
    }
  ErrorBands out;
  for (const auto& [name, by_region] : ratios) {
    ErrorBands::ClassBands& c = out.classes[name];
    for (std::size_t i = 0; i < by_region.size(); ++i) c.regions[i] = band_of(by_region[i], low_quantile, high_quantile);
  }
  return out;
}

std::string write_bands(const ErrorBands& bands, const std::string& header) {
  std::string out = header;
  out += "classes:\n";
  for (const auto& [name, c] : bands.classes) {
    out += fmt::format("  {}:\n", name);
    for (std::size_t i = 0; i < kRegionKeys.size(); ++i) {
      const Band& b = c.regions[i];
      if (b.points == 0)
        out += fmt::format("    {}: {{points: 0}}\n", kRegionKeys[i]);
      else
        out += fmt::format("    {}: {{low: {:.3f}, high: {:.3f}, points: {}}}\n", kRegionKeys[i], b.low, b.high, b.points);
    }
  }
  return out;
}

ErrorBands read_bands(const std::string& text, const std::string& origin) {
  using input::find;
  const input::Value root = input::read_yaml_text(text, origin);
  input::require_map(root, "error bands");
  static constexpr std::array<std::string_view, 1> kTop{"classes"};
  input::check_keys(root, kTop, "");
  const input::Value& classes = input::require(root, "classes", "");
  input::require_map(classes, "classes");
  ErrorBands out;
  for (const auto& entry : classes.entries) {
    const std::string path = "classes." + entry.key;
    input::require_map(entry.value, path);
    input::check_keys(entry.value, kRegionKeys, path);
    ErrorBands::ClassBands& c = out.classes[entry.key];
    for (std::size_t i = 0; i < kRegionKeys.size(); ++i) {
      const std::string rpath = input::join_path(path, kRegionKeys[i]);
      const input::Value& r = input::require(entry.value, kRegionKeys[i], path);
      input::require_map(r, rpath);
      static constexpr std::array<std::string_view, 3> kBandKeys{"low", "high", "points"};
      input::check_keys(r, kBandKeys, rpath);
      Band& b = c.regions[i];
      b.points = static_cast<int>(input::as_count(input::require(r, "points", rpath), rpath + ".points", 0, 1'000'000'000));
      if (b.points == 0) continue;
      b.low = input::as_number(input::require(r, "low", rpath), rpath + ".low");
      b.high = input::as_number(input::require(r, "high", rpath), rpath + ".high");
      if (!(b.low > 0.0) || !(b.high >= b.low))
        input::fail(r, rpath + ": expected 0 < low <= high (ratios of measured to predicted time)");
    }
  }
  return out;
}

const ErrorBands& shipped_bands() {
  static const ErrorBands bands = read_bands(std::string(kShippedBandsYaml), "accuracy/bands.yaml");
  return bands;
}

std::string hardware_class(const topo::LinkGraph& graph, const std::vector<topo::DeviceId>& ranks, bool p2p) {
  if (ranks.empty()) return "nvlink-node";
  const topo::Device& first = graph.device(ranks.front());
  if (first.arch.rfind("cdna", 0) == 0) return "amd";
  if (first.model.rfind("GB", 0) == 0) return "nvl72";
  // NVLink among the ranks (any pair): an NVLink node, even where a ring's neighbours are not
  // all joined by it (DGX-1's hybrid cube mesh); P2P off stages every exchange through host memory.
  for (const topo::DeviceId r : ranks)
    if (graph.device(r).node != first.node) return "nvidia-multinode";
  const topo::Router router(graph);
  for (std::size_t i = 0; p2p && i < ranks.size(); ++i)
    for (std::size_t j = i + 1; j < ranks.size(); ++j)
      if (router.transport(ranks[i], ranks[j]) == topo::Transport::p2p_nvlink) return "nvlink-node";
  return "pcie-shm";
}

Band overlay_band(double held_out_error, const std::string& overlay) {
  Band b;
  b.low = 1.0 / (1.0 + held_out_error);
  b.high = 1.0 + held_out_error;
  b.points = 0;
  b.source = fmt::format("overlay {}: its held-out median error {:.1f}%", overlay, 100.0 * held_out_error);
  return b;
}

}  // namespace wiresim::accuracy
