// Error bands (`--bands`): how far a prediction can be from the measurement, from what the
// validation data says about predictions on hardware the model was not fitted on.
//
// For each hardware class and size region, `validate --write-bands accuracy/bands.yaml` takes
// every size of the class's *checked* data sets (validation/map.yaml: used to judge, never
// fitted on) as the ratio measured time / predicted time under the committed parameters, and
// keeps its 10th and 90th percentiles. A predicted time t then carries the interval
// [t × low, t × high]: on the checked data, 8 in 10 measured times of that class and region
// fell inside it. The band is not symmetric and need not contain t: a class whose predictions
// are too fast has both ratios above 1. (The cross-validated points of `validate --cv` would
// answer for hardware of a class the fit never saw; they are much wider, because a class left
// out takes constants such as the host launch back to their priors: docs/accuracy.md.)
//
// With a calibration overlay fitted by `calibrate fit --topo`, its held-out median error e
// replaces the class's band: [t / (1 + e), t × (1 + e)] (a median: half the held-out sizes of
// the calibrated cluster fell inside).
//
//   const ErrorBands& b = shipped_bands();
//   const std::string cls = hardware_class(graph, ranks, /*p2p=*/true);   // "nvlink-node"
//   const Band band = b.at(cls, size);          // band.low, band.high: ratios to the prediction
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accuracy/runner.h"
#include "accuracy/stats.h"
#include "topologies/link_graph.h"

namespace wiresim::accuracy {

struct Band {
  double low = 1.0, high = 1.0;   // measured / predicted time: the interval is [t x low, t x high]
  int points = 0;                 // validation points it comes from (0: none; low = high = 1)
  std::string source;             // "class nvlink-node, ramp (83 sizes of checked data sets)"
};

// The regions a band is kept for: floor, ramp and plateau (accuracy/stats.h), in that order.
inline constexpr std::array<Region, 3> kBandRegions{Region::floor, Region::ramp, Region::plateau};

// The pooled band of every class's checked sizes, for a class with no checked data set.
inline constexpr std::string_view kAnyClass = "any";

struct ErrorBands {
  struct ClassBands {
    std::array<Band, 4> regions;  // by kBandRegions, then every size
  };
  std::map<std::string, ClassBands> classes;
  // The band for `size` bytes on hardware of class `hw_class` (the pooled "any" band where the
  // class has none; its source says so). Throws only when there is no band at all.
  Band at(const std::string& hw_class, double size_bytes) const;
};

// From the points of `results`, grouped by their class (Result::map.hw_class).
ErrorBands compute_bands(const std::vector<Result>& results, double low_quantile = 0.1, double high_quantile = 0.9);
std::string write_bands(const ErrorBands& bands, const std::string& header);
ErrorBands read_bands(const std::string& text, const std::string& origin);
// accuracy/bands.yaml, compiled in.
const ErrorBands& shipped_bands();

// The hardware class of validation/map.yaml that a run on `ranks` of `graph` belongs to:
// "amd" (CDNA GPUs), "nvl72" (Grace-Blackwell NVLink trays and racks), "nvidia-multinode"
// (ranks on several nodes joined by a network), "pcie-shm" (ranks joined by PCIe or host
// memory, or P2P off), otherwise "nvlink-node".
std::string hardware_class(const topo::LinkGraph& graph, const std::vector<topo::DeviceId>& ranks, bool p2p);

// The band of an overlay's held-out median |busbw error| (a fraction, 0.05 = 5 %).
Band overlay_band(double held_out_error, const std::string& overlay);

}  // namespace wiresim::accuracy
