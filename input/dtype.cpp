#include "input/dtype.h"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace wiresim::input {
namespace {

constexpr std::array<std::pair<std::string_view, int>, 22> kSizes{{
    {"int8", 1},    {"uint8", 1},   {"char", 1},    {"fp8", 1},      {"f8e4m3", 1}, {"f8e5m2", 1},
    {"half", 2},    {"fp16", 2},    {"float16", 2}, {"bf16", 2},     {"bfloat16", 2},
    {"float", 4},   {"fp32", 4},    {"float32", 4}, {"int", 4},      {"int32", 4},  {"uint32", 4},
    {"double", 8},  {"fp64", 8},    {"float64", 8}, {"int64", 8},    {"uint64", 8}}};

}  // namespace

std::optional<int> dtype_size(std::string_view name) {
  for (const auto& [n, size] : kSizes)
    if (n == name) return size;
  return std::nullopt;
}

std::string_view dtype_examples() { return "float, half, bf16, fp8, double, int8, int32, int64"; }

int as_dtype(const Value& v, const std::string& path) {
  const std::string name = as_string(v, path);
  if (const auto size = dtype_size(name)) return *size;
  fail(v, fmt::format("{}: unknown dtype '{}' (expected {})", path, name, dtype_examples()));
}

}  // namespace wiresim::input
