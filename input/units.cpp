#include "input/units.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace wiresim::input {
namespace {

// The scalar through a sim/units.h parser; its std::invalid_argument becomes an InputError here.
template <typename Parse>
auto parsed(const Value& v, const std::string& path, std::string_view expected, Parse parse) {
  if (v.kind != Value::Kind::scalar)
    fail(v, fmt::format("{}: expected {}, got {}", path, expected, kind_name(v.kind)));
  try {
    return parse(v.text);
  } catch (const std::invalid_argument& e) {
    fail(v, fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace

sim::Bytes as_size(const Value& v, const std::string& path) {
  return parsed(v, path, "a size with a unit (8B, 4KiB, 1GiB)", [](const std::string& s) { return sim::parse_size(s); });
}

sim::BytesPerSec as_rate(const Value& v, const std::string& path) {
  const auto r = parsed(v, path, "a rate with a unit (450GB/s, 400Gb/s)",
                        [](const std::string& s) { return sim::parse_rate(s); });
  if (!(r.count() > 0.0))
    fail(v, fmt::format("{}: expected a positive rate (450GB/s, 400Gb/s), got '{}'", path, v.text));
  return r;
}

sim::Seconds as_duration(const Value& v, const std::string& path) {
  return parsed(v, path, "a time with a unit (300ns, 1.5us)", [](const std::string& s) { return sim::parse_time(s); });
}

sim::Seconds as_time(const Value& v, const std::string& path) {
  const auto t = as_duration(v, path);
  if (!(t.count() > 0.0))
    fail(v, fmt::format("{}: expected a positive time (300ns, 1.5us), got '{}'", path, v.text));
  return t;
}

double parse_flops(std::string_view text) {
  const auto bad = [&] {
    return std::invalid_argument(fmt::format("expected a compute rate like 989TFLOP/s, got '{}'", text));
  };
  constexpr std::string_view kUnit = "FLOP/s";
  if (!text.ends_with(kUnit)) throw bad();
  std::string_view number = text.substr(0, text.size() - kUnit.size());
  double scale = 1.0;
  static constexpr std::string_view kPrefixes = "KMGTPE";
  static constexpr double kScales[] = {1e3, 1e6, 1e9, 1e12, 1e15, 1e18};
  if (!number.empty())
    if (const auto p = kPrefixes.find(number.back()); p != std::string_view::npos) {
      scale = kScales[p];
      number.remove_suffix(1);
    }
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc{} || ptr != number.data() + number.size() || !std::isfinite(value))
    throw bad();
  if (!(value > 0.0)) throw std::invalid_argument(fmt::format("expected a positive rate, got '{}'", text));
  return value * scale;
}

double as_flops(const Value& v, const std::string& path) {
  return parsed(v, path, "a compute rate like 989TFLOP/s", [](const std::string& s) { return parse_flops(s); });
}

}  // namespace wiresim::input
