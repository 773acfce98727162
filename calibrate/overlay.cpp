#include "calibrate/overlay.h"

#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "input/file.h"
#include "input/keys.h"
#include "input/units.h"

namespace wiresim::calibrate {
namespace {

using input::Value;

TierOverlay read_tier(const Value& n, const std::string& path) {
  input::require_map(n, path);
  static constexpr std::array<std::string_view, 3> kKeys{"bandwidth", "efficiency", "latency"};
  input::check_keys(n, kKeys, path);
  TierOverlay t;
  if (const Value* b = input::find(n, "bandwidth")) t.bandwidth = input::as_rate(*b, path + ".bandwidth");
  if (const Value* e = input::find(n, "efficiency")) {
    t.efficiency = input::as_number(*e, path + ".efficiency");
    if (!(*t.efficiency > 0.0 && *t.efficiency <= 10.0)) input::fail(*e, path + ".efficiency: expected a factor in (0, 10]");
    if (t.bandwidth) input::fail(*e, path + ": give 'bandwidth' or 'efficiency', not both");
  }
  if (const Value* l = input::find(n, "latency")) t.latency = input::as_duration(*l, path + ".latency");
  return t;
}

CollectiveOverlay read_collective(const Value& n, const std::string& path) {
  input::require_map(n, path);
  static constexpr std::array<std::string_view, 5> kKeys{"collective", "ranks", "latency", "busbw", "source"};
  input::check_keys(n, kKeys, path);
  CollectiveOverlay c;
  const Value& op = input::require(n, "collective", path);
  const auto collective = input::parse_collective(input::as_string(op, path + ".collective"));
  if (!collective) input::fail(op, fmt::format("{}.collective: unknown collective '{}'", path, op.text));
  c.collective = *collective;
  c.ranks = static_cast<int>(input::as_count(input::require(n, "ranks", path), path + ".ranks", 1, 1'000'000'000));
  c.latency = input::as_duration(input::require(n, "latency", path), path + ".latency");
  c.busbw = input::as_rate(input::require(n, "busbw", path), path + ".busbw");
  if (const Value* s = input::find(n, "source")) c.source = s->text;
  return c;
}

Overlay read(const Value& root) {
  Overlay o;
  if (root.kind == Value::Kind::null) return o;
  input::require_map(root, "overlay");
  static constexpr std::array<std::string_view, 2> kKeys{"tiers", "collectives"};
  input::check_keys(root, kKeys, "");
  if (const Value* tiers = input::find(root, "tiers")) {
    input::require_map(*tiers, "tiers");
    std::vector<std::string_view> names;
    for (int i = 0; i <= static_cast<int>(topo::Tier::eth); ++i) names.push_back(topo::to_string(topo::Tier(i)));
    for (const auto& entry : tiers->entries) {
      const auto t = topo::tier_from_string(entry.key);
      if (!t)
        input::fail(entry.key_at, fmt::format("tiers: unknown tier '{}'; {}", entry.key, input::suggest(entry.key, names)));
      o.tiers[*t] = read_tier(entry.value, "tiers." + entry.key);
    }
  }
  if (const Value* list = input::find(root, "collectives")) {
    input::require_sequence(*list, "collectives");
    for (std::size_t i = 0; i < list->items.size(); ++i)
      o.collectives.push_back(read_collective(list->items[i], input::index_path("collectives", i)));
  }
  return o;
}

// Compact forms that parse_rate and parse_time read back: "371.2GB/s", "2.1us".
std::string rate_text(sim::BytesPerSec r) { return fmt::format("{:.5g}GB/s", r.gbps()); }
std::string time_text(sim::Seconds t) { return fmt::format("{:.5g}us", t.us()); }
// A YAML double-quoted scalar: quotes and backslashes escaped, control characters as \xNN.
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) q += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else q += c;
  }
  return q + '"';
}

}  // namespace

Overlay parse_overlay(const std::string& text, const std::string& source) {
  return read(input::read_yaml_text(text, source));
}

Overlay read_overlay(const std::string& path) { return parse_overlay(input::read_file(path), path); }

void write_overlay(std::ostream& out, const Overlay& o, const std::string& comment) {
  fmt::print(out, "# {}\n", comment);
  if (!o.tiers.empty()) fmt::print(out, "tiers:\n");
  for (const auto& [tier, t] : o.tiers) {
    std::vector<std::string> fields;
    if (t.bandwidth) fields.push_back("bandwidth: " + rate_text(*t.bandwidth));
    if (t.efficiency) fields.push_back(fmt::format("efficiency: {:.4g}", *t.efficiency));
    if (t.latency) fields.push_back("latency: " + time_text(*t.latency));
    const std::string key = fmt::format("{}:", topo::to_string(tier));
    fmt::print(out, "  {:<8}{{{}}}{}\n", key, fmt::join(fields, ", "), t.note.empty() ? "" : "  # " + t.note);
  }
  if (!o.collectives.empty()) fmt::print(out, "collectives:\n");
  for (const CollectiveOverlay& c : o.collectives) {
    fmt::print(out, "  - {{collective: {}, ranks: {}, latency: {}, busbw: {}", to_string(c.collective), c.ranks,
               time_text(c.latency), rate_text(c.busbw));
    if (!c.source.empty()) fmt::print(out, ", source: {}", quoted(c.source));
    fmt::print(out, "}}\n");
  }
}

}  // namespace wiresim::calibrate
