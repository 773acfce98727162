#include "calibrate/overlay.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <yaml-cpp/yaml.h>

#include "sim/input_error.h"

namespace wiresim::calibrate {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string suggest(std::string_view word, const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_distance = word.size() / 2 + 2;
  for (std::string_view k : known)
    if (const std::size_t d = edit_distance(word, k); d < best_distance) best = k, best_distance = d;
  if (!best.empty()) return fmt::format("did you mean `{}`?", best);
  return fmt::format("expected one of: {}", fmt::join(known, ", "));
}

class OverlayReader {
 public:
  explicit OverlayReader(std::string source) : source_(std::move(source)) {}
  Overlay read(const YAML::Node& root);

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    const YAML::Mark m = at.Mark();
    throw sim::InputError(source_, m.line + 1, m.column + 1, message);
  }
  void require_map(const YAML::Node& n, const std::string& path) const {
    if (!n.IsMap()) fail(n, fmt::format("{}: expected a map", path));
  }
  // Rejects keys not in `known`; returns nothing, callers look keys up themselves.
  void check_keys(const YAML::Node& map, const std::vector<std::string_view>& known, const std::string& path) const {
    for (const auto& entry : map) {
      const std::string key = entry.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(entry.first, fmt::format("{}: unknown key `{}`; {}", path, key, suggest(key, known)));
    }
  }
  template <typename Parse>
  auto value(const YAML::Node& n, const std::string& path, Parse parse, std::string_view expected) const {
    if (!n.IsScalar()) fail(n, fmt::format("{}: expected {}", path, expected));
    try {
      return parse(n.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(n, fmt::format("{}: {}", path, e.what()));
    }
  }
  TierOverlay tier(const YAML::Node& n, const std::string& path) const;
  CollectiveOverlay collective(const YAML::Node& n, const std::string& path) const;

  std::string source_;
};

double parse_number(const std::string& s) {
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size()) throw std::invalid_argument(fmt::format("expected a number, got '{}'", s));
  return v;
}

TierOverlay OverlayReader::tier(const YAML::Node& n, const std::string& path) const {
  require_map(n, path);
  check_keys(n, {"bandwidth", "efficiency", "latency"}, path);
  TierOverlay t;
  if (n["bandwidth"]) {
    t.bandwidth = value(n["bandwidth"], path + ".bandwidth", [](const std::string& s) { return sim::parse_rate(s); },
                        "a rate (371GB/s)");
    if (!(t.bandwidth->count() > 0)) fail(n["bandwidth"], path + ".bandwidth: must be positive");
  }
  if (n["efficiency"]) {
    const auto number = [](const std::string& s) {
      try {
        return parse_number(s);
      } catch (const std::logic_error&) {
        throw std::invalid_argument(fmt::format("expected a number (0.86), got '{}'", s));
      }
    };
    t.efficiency = value(n["efficiency"], path + ".efficiency", number, "a number (0.86)");
    if (!(*t.efficiency > 0.0 && *t.efficiency <= 10.0))
      fail(n["efficiency"], path + ".efficiency: expected a factor in (0, 10]");
  }
  if (t.bandwidth && t.efficiency)
    fail(n["efficiency"], path + ": give `bandwidth` or `efficiency`, not both");
  if (n["latency"])
    t.latency = value(n["latency"], path + ".latency", [](const std::string& s) { return sim::parse_time(s); },
                      "a time (2.1us)");
  return t;
}

CollectiveOverlay OverlayReader::collective(const YAML::Node& n, const std::string& path) const {
  require_map(n, path);
  check_keys(n, {"collective", "ranks", "latency", "busbw", "source"}, path);
  for (const char* key : {"collective", "ranks", "latency", "busbw"})
    if (!n[key]) fail(n, fmt::format("{}: missing `{}`", path, key));
  CollectiveOverlay c;
  const auto op = collective_from_string(n["collective"].Scalar());
  if (!op) fail(n["collective"], fmt::format("{}.collective: unknown collective '{}'", path, n["collective"].Scalar()));
  c.collective = *op;
  const auto ranks = [](const std::string& s) {
    try {
      const double v = parse_number(s);
      if (v >= 1 && v == static_cast<int>(v)) return static_cast<int>(v);
    } catch (const std::logic_error&) {
    }
    throw std::invalid_argument(fmt::format("expected a whole number of ranks, got '{}'", s));
  };
  c.ranks = value(n["ranks"], path + ".ranks", ranks, "a number of ranks");
  c.latency = value(n["latency"], path + ".latency", [](const std::string& s) { return sim::parse_time(s); },
                    "a time (49.7us)");
  c.busbw = value(n["busbw"], path + ".busbw", [](const std::string& s) { return sim::parse_rate(s); },
                  "a rate (119GB/s)");
  if (n["source"]) c.source = n["source"].Scalar();
  return c;
}

Overlay OverlayReader::read(const YAML::Node& root) {
  Overlay o;
  if (root.IsNull()) return o;
  require_map(root, "overlay");
  check_keys(root, {"tiers", "collectives"}, "overlay");
  if (const YAML::Node tiers = root["tiers"]) {
    require_map(tiers, "tiers");
    std::vector<std::string_view> names;
    for (int i = 0; i <= static_cast<int>(topo::Tier::eth); ++i) names.push_back(topo::to_string(topo::Tier(i)));
    for (const auto& entry : tiers) {
      const std::string name = entry.first.as<std::string>();
      const auto t = topo::tier_from_string(name);
      if (!t) fail(entry.first, fmt::format("tiers: unknown tier `{}`; {}", name, suggest(name, names)));
      o.tiers[*t] = tier(entry.second, "tiers." + name);
    }
  }
  if (const YAML::Node list = root["collectives"]) {
    if (!list.IsSequence()) fail(list, "collectives: expected a list");
    for (std::size_t i = 0; i < list.size(); ++i)
      o.collectives.push_back(collective(list[i], fmt::format("collectives[{}]", i)));
  }
  return o;
}

// Compact forms that parse_rate and parse_time read back: "371.2GB/s", "2.1us".
std::string rate_text(sim::BytesPerSec r) { return fmt::format("{:.5g}GB/s", r.gbps()); }
std::string time_text(sim::Seconds t) { return fmt::format("{:.5g}us", t.us()); }
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + '"';
}

}  // namespace

Overlay parse_overlay(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw sim::InputError(source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  return OverlayReader(source).read(root);
}

Overlay read_overlay(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw sim::InputError(path, 0, 0, "cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_overlay(text.str(), path);
}

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
