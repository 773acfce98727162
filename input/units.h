// Units at the edge: the values of a file that carry a unit, read at their position. The text
// parsers for sizes, rates and times are sim/units.h's; this adds the checks a reader wants
// (positive, given as a value) and FLOP/s, which is a compute rate, not a sim unit.
//
//   sim::BytesPerSec nic = as_rate(*find(cable, "bandwidth"), "fabric.nic_link.bandwidth");
//   double peak = parse_flops("989TFLOP/s");            // 9.89e14
//   double p = as_flops(*find(compute, "peak_flops"), "compute.peak_flops");
#pragma once

#include <string>
#include <string_view>

#include "input/yaml.h"
#include "sim/units.h"

namespace wiresim::input {

sim::Bytes as_size(const Value& v, const std::string& path);         // >= 0, with a unit
sim::BytesPerSec as_rate(const Value& v, const std::string& path);   // > 0, with a unit
sim::Seconds as_time(const Value& v, const std::string& path);       // > 0, with a unit
// As as_time, but 0 is allowed (an overhead that may be absent).
sim::Seconds as_duration(const Value& v, const std::string& path);

// "989TFLOP/s", "2.25PFLOP/s", "312e12FLOP/s", "500GFLOP/s": floating-point operations per
// second, > 0 (prefixes K, M, G, T, P, E). Throws std::invalid_argument saying what was expected.
double parse_flops(std::string_view text);
double as_flops(const Value& v, const std::string& path);

}  // namespace wiresim::input
