#include "sim/units.h"

#include <cctype>
#include <charconv>
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace wiresim::sim {
namespace {

// Splits "1.5GiB" into 1.5 and "GiB"; the number must be finite and non-negative.
struct NumberAndUnit {
  double value;
  std::string_view unit;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

NumberAndUnit split_number(std::string_view text, std::string_view what, std::string_view examples) {
  const std::string_view s = trim(text);
  std::size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.' ||
                            s[end] == 'e' || s[end] == 'E' || s[end] == '+' || s[end] == '-')) {
    // 'e' belongs to the number only when a digit or sign follows (so "8e9B" works but
    // the 'E' of a unit does not get eaten).
    if ((s[end] == 'e' || s[end] == 'E') &&
        !(end + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[end + 1])) ||
                                 s[end + 1] == '+' || s[end + 1] == '-')))
      break;
    ++end;
  }
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + end, value);
  if (end == 0 || ec != std::errc{} || ptr != s.data() + end)
    throw std::invalid_argument(
        fmt::format("expected {} with a unit ({}), got '{}'", what, examples, text));
  if (!std::isfinite(value) || value < 0.0)
    throw std::invalid_argument(fmt::format("expected {} that is not negative, got '{}'", what, text));
  std::string_view unit = trim(s.substr(end));
  if (unit.empty())
    throw std::invalid_argument(
        fmt::format("expected {} with a unit ({}), got '{}' with no unit", what, examples, text));
  return {value, unit};
}

// "", "K", "M", "G", "T", "P" (decimal) or "Ki", "Mi", "Gi", "Ti", "Pi" (binary).
std::optional<double> prefix_multiplier(std::string_view p) {
  if (p.empty()) return 1.0;
  static constexpr std::string_view kDecimal = "KMGTP";
  const char head = p[0] == 'k' ? 'K' : p[0];
  const auto pos = kDecimal.find(head);
  if (pos == std::string_view::npos) return std::nullopt;
  if (p.size() == 1) return std::pow(1e3, static_cast<double>(pos + 1));
  if (p.size() == 2 && p[1] == 'i' && p[0] != 'k')
    return std::pow(1024.0, static_cast<double>(pos + 1));
  return std::nullopt;
}

}  // namespace

SimTime to_sim_time(Seconds s) {
  const double ps = std::ceil(s.count() * static_cast<double>(kPicosPerSecond) - 1e-6);
  if (!(ps < 9.0e18))
    throw std::overflow_error(fmt::format("time {} s is beyond the simulator's range", s.count()));
  return static_cast<SimTime>(std::max(ps, 0.0));
}

Bytes parse_size(std::string_view text) {
  static constexpr std::string_view kExamples = "8B, 4KiB, 64MB, 1GiB";
  const auto [value, unit] = split_number(text, "a size", kExamples);
  if (unit.back() != 'B')
    throw std::invalid_argument(
        fmt::format("expected a size with a unit ({}), got '{}' (sizes end in B for bytes)",
                    kExamples, text));
  const auto mult = prefix_multiplier(unit.substr(0, unit.size() - 1));
  if (!mult)
    throw std::invalid_argument(
        fmt::format("unknown size unit '{}' in '{}' (expected B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
                    unit, text));
  return Bytes{value * *mult};
}

ParsedRate parse_rate_text(std::string_view text) {
  static constexpr std::string_view kExamples = "450GB/s, 400Gb/s, 900GB/s-bidir";
  auto [value, unit] = split_number(text, "a rate", kExamples);
  bool bidir = false;
  for (std::string_view suffix : {"-bidir", " bidir", "-bidirectional"}) {
    if (unit.size() > suffix.size() && unit.substr(unit.size() - suffix.size()) == suffix) {
      unit.remove_suffix(suffix.size());
      bidir = true;
      break;
    }
  }
  std::string_view base;
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "/s") base = unit.substr(0, unit.size() - 2);
  else if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "ps") base = unit.substr(0, unit.size() - 2);
  else
    throw std::invalid_argument(fmt::format(
        "expected a rate with a unit ({}), got '{}' (a rate ends in /s)", kExamples, text));
  if (base.empty() || (base.back() != 'B' && base.back() != 'b'))
    throw std::invalid_argument(fmt::format(
        "unknown rate unit '{}' in '{}' (expected B/s for bytes or b/s for bits, e.g. {})", unit,
        text, kExamples));
  const double bits_factor = base.back() == 'b' ? 1.0 / 8.0 : 1.0;
  const auto mult = prefix_multiplier(base.substr(0, base.size() - 1));
  if (!mult)
    throw std::invalid_argument(
        fmt::format("unknown rate prefix in '{}' (expected K, M, G, T, e.g. {})", text, kExamples));
  double per_second = value * *mult * bits_factor;
  if (bidir) per_second /= 2.0;
  return {BytesPerSec{per_second}, bidir};
}

BytesPerSec parse_rate(std::string_view text) { return parse_rate_text(text).per_direction; }

Seconds parse_time(std::string_view text) {
  static constexpr std::string_view kExamples = "500ns, 1.5us, 2ms";
  const auto [value, unit] = split_number(text, "a time", kExamples);
  double scale = 0.0;
  if (unit == "s") scale = 1.0;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") scale = 1e-6;
  else if (unit == "ns") scale = 1e-9;
  else if (unit == "ps") scale = 1e-12;
  else
    throw std::invalid_argument(fmt::format(
        "unknown time unit '{}' in '{}' (expected s, ms, us, ns or ps, e.g. {})", unit, text,
        kExamples));
  return Seconds{value * scale};
}

std::string format_size(Bytes b) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = b.count();
  int i = 0;
  while (std::fabs(v) >= 1024.0 && i < 5) {
    v /= 1024.0;
    ++i;
  }
  if (v == std::floor(v)) return fmt::format("{:.0f} {}", v, kUnits[i]);
  return fmt::format("{:.3g} {}", v, kUnits[i]);
}

std::string format_rate(BytesPerSec r) {
  if (r.is_unlimited()) return "unlimited";
  const double v = r.count();
  if (v >= 1e12) return fmt::format("{:.3g} TB/s", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.4g} GB/s", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.4g} MB/s", v / 1e6);
  return fmt::format("{:.4g} B/s", v);
}

std::string format_time(Seconds s) {
  const double v = s.count();
  const double a = std::fabs(v);
  if (a >= 1.0) return fmt::format("{:.3f} s", v);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", v * 1e3);
  if (a >= 1e-6) return fmt::format("{:.2f} us", v * 1e6);
  return fmt::format("{:.1f} ns", v * 1e9);
}

}  // namespace wiresim::sim
