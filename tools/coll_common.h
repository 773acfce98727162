// What `wiresim coll` and `wiresim validate` share: nccl-tests element types and how
// nccl-tests turns a requested size into the size it runs (whole elements, per rank for the
// collectives that split the buffer across ranks).
//
//   const int element = dtype_size("bf16");                         // 2
//   sim::Bytes s = nccl_tests_size(Collective::all_gather, sim::Bytes{1e6}, element, 8);
//   long long count = nccl_tests_count(Collective::all_gather, s, element, 8);
#pragma once

#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "models/collective.h"
#include "sim/input_error.h"
#include "sim/units.h"

namespace wiresim::tools {

// Bytes per element, as nccl-tests names its types.
inline int dtype_size(const std::string& dtype) {
  static const std::map<std::string, int> kSizes{
      {"int8", 1},    {"uint8", 1},   {"fp8", 1},     {"f8e4m3", 1}, {"f8e5m2", 1},
      {"half", 2},    {"fp16", 2},    {"float16", 2}, {"bf16", 2},   {"bfloat16", 2},
      {"float", 4},   {"fp32", 4},    {"float32", 4}, {"int32", 4},  {"uint32", 4},
      {"double", 8},  {"fp64", 8},    {"float64", 8}, {"int64", 8},  {"uint64", 8}};
  const auto it = kSizes.find(dtype);
  if (it == kSizes.end())
    throw sim::InputError(fmt::format(
        "--dtype: unknown type '{}' (expected float, half, bf16, fp8, double, int8, int32, int64)", dtype));
  return it->second;
}

using models::nccl_tests_count;
using models::nccl_tests_size;
using models::splits_per_rank;

// --p2p on|off: off is NCCL_P2P_DISABLE=1 (GPUs of a node exchange through host memory).
inline bool parse_p2p(const std::string& text) {
  if (text == "on") return true;
  if (text == "off") return false;
  throw sim::InputError(fmt::format("--p2p: expected on or off, got '{}'", text));
}

}  // namespace wiresim::tools
