#include "calibrate/overlay.h"

#include <algorithm>
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

std::optional<sim::Seconds> time_field(const Value& n, const char* key, const std::string& path) {
  const Value* v = input::find(n, key);
  if (!v) return std::nullopt;
  const sim::Seconds t = input::as_duration(*v, path + "." + key);
  if (t.count() < 0.0 || t.count() > 1e-2) input::fail(*v, path + "." + key + ": expected 0 to 10ms");
  return t;
}

FitScope read_scope(const Value& n) {
  input::require_map(n, "parameters.scope");
  static constexpr std::array<std::string_view, 2> kKeys{"collectives", "reach"};
  input::check_keys(n, kKeys, "parameters.scope");
  FitScope scope;
  const Value& list = input::require(n, "collectives", "parameters.scope");
  input::require_sequence(list, "parameters.scope.collectives");
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const std::string path = input::index_path("parameters.scope.collectives", i);
    const std::string name = input::as_string(list.items[i], path);
    const auto op = input::parse_collective(name);
    if (!op) input::fail(list.items[i], fmt::format("{}: unknown collective '{}'", path, name));
    scope.collectives.push_back(*op);
  }
  if (scope.collectives.empty()) input::fail(list, "parameters.scope.collectives: expected at least one collective");
  const Value& reach = input::require(n, "reach", "parameters.scope");
  const std::string r = input::as_string(reach, "parameters.scope.reach");
  if (r != "within_node" && r != "across_nodes" && r != "both")
    input::fail(reach, fmt::format("parameters.scope.reach: expected within_node, across_nodes or both, got '{}'", r));
  scope.within_node = r != "across_nodes";
  scope.across_nodes = r != "within_node";
  return scope;
}

ParameterOverlay read_parameters(const Value& n) {
  input::require_map(n, "parameters");
  static constexpr std::array<std::string_view, 6> kKeys{"architecture", "link_efficiency", "launch_overhead",
                                                         "host_launch", "protocol_overhead", "scope"};
  input::check_keys(n, kKeys, "parameters");
  ParameterOverlay p;
  p.architecture = input::as_string(input::require(n, "architecture", "parameters"), "parameters.architecture");
  if (const Value* eff = input::find(n, "link_efficiency")) {
    input::require_map(*eff, "parameters.link_efficiency");
    for (const auto& entry : eff->entries) {
      const auto t = topo::tier_from_string(entry.key);
      if (!t) input::fail(entry.key_at, fmt::format("parameters.link_efficiency: unknown tier '{}'", entry.key));
      const double e = input::as_number(entry.value, "parameters.link_efficiency." + entry.key);
      if (!(e > 0.0 && e <= 1.0)) input::fail(entry.value, "parameters.link_efficiency: expected a fraction in (0, 1]");
      p.link_efficiency[*t] = e;
    }
  }
  p.launch_overhead = time_field(n, "launch_overhead", "parameters");
  p.host_launch = time_field(n, "host_launch", "parameters");
  if (const Value* po = input::find(n, "protocol_overhead")) {
    input::require_map(*po, "parameters.protocol_overhead");
    static constexpr std::array<std::string_view, 2> kProtocols{"simple", "ll128"};
    input::check_keys(*po, kProtocols, "parameters.protocol_overhead");
    p.simple_overhead = time_field(*po, "simple", "parameters.protocol_overhead");
    p.ll128_overhead = time_field(*po, "ll128", "parameters.protocol_overhead");
  }
  if (const Value* sc = input::find(n, "scope")) p.scope = read_scope(*sc);
  return p;
}

double percent(const Value& v, const std::string& path) {
  std::string text = v.text;
  if (!text.empty() && text.back() == '%') text.pop_back();
  Value number = v;
  number.text = text;
  const double x = input::as_number(number, path);
  if (x < 0.0) input::fail(v, path + ": expected a percentage of at least 0");
  return x;
}

FitSummary read_fit(const Value& n) {
  input::require_map(n, "fit");
  static constexpr std::array<std::string_view, 5> kKeys{"logs", "topology", "held_out_sizes",
                                                         "held_out_error_before", "held_out_error_after"};
  input::check_keys(n, kKeys, "fit");
  FitSummary f;
  if (const Value* logs = input::find(n, "logs")) {
    input::require_sequence(*logs, "fit.logs");
    for (std::size_t i = 0; i < logs->items.size(); ++i)
      f.logs.push_back(input::as_string(logs->items[i], input::index_path("fit.logs", i)));
  }
  if (const Value* t = input::find(n, "topology")) f.topology = input::as_string(*t, "fit.topology");
  if (const Value* h = input::find(n, "held_out_sizes"))
    f.held_out_sizes = static_cast<int>(input::as_count(*h, "fit.held_out_sizes", 0, 1'000'000));
  if (const Value* b = input::find(n, "held_out_error_before")) f.held_out_error_before_pct = percent(*b, "fit.held_out_error_before");
  if (const Value* a = input::find(n, "held_out_error_after")) f.held_out_error_after_pct = percent(*a, "fit.held_out_error_after");
  return f;
}

Overlay read(const Value& root) {
  Overlay o;
  if (root.kind == Value::Kind::null) return o;
  input::require_map(root, "overlay");
  static constexpr std::array<std::string_view, 4> kKeys{"tiers", "collectives", "parameters", "fit"};
  input::check_keys(root, kKeys, "");
  if (const Value* p = input::find(root, "parameters")) o.parameters = read_parameters(*p);
  if (const Value* f = input::find(root, "fit")) o.fit = read_fit(*f);
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

namespace {
// NCCL runs all_reduce, all_gather, reduce_scatter, broadcast and reduce over the same ring,
// tree and NVLS channels (one model structure, src/device/*.h); all_to_all and send_recv are
// point-to-point exchanges (NCCL's P2P path), each modelled its own way.
int family(input::Collective op) {
  switch (op) {
    case input::Collective::all_to_all: return 1;
    case input::Collective::send_recv: return 2;
    default: return 0;
  }
}
}  // namespace

bool FitScope::covers(input::Collective op, bool spans_nodes) const {
  return (spans_nodes ? across_nodes : within_node) &&
         std::any_of(collectives.begin(), collectives.end(), [&](input::Collective c) { return family(c) == family(op); });
}

std::string FitScope::describe() const {
  std::vector<std::string_view> names;
  for (auto op : collectives) names.push_back(to_string(op));
  return fmt::format("{} {}", fmt::join(names, ", "),
                     within_node && across_nodes ? "within and across nodes" : across_nodes ? "across nodes" : "within one node");
}

std::string describe_overlay(const std::string& path, const Overlay& o) {
  std::vector<std::string> parts;
  if (o.parameters)
    parts.push_back(fmt::format("model parameters for {}{}", o.parameters->architecture,
                                o.parameters->scope ? " (fitted on " + o.parameters->scope->describe() + ")" : ""));
  if (!o.tiers.empty()) parts.push_back(fmt::format("{} measured tier(s)", o.tiers.size()));
  std::string text = fmt::format("{}: {}", path, parts.empty() ? "nothing to apply" : fmt::format("{}", fmt::join(parts, ", ")));
  if (o.fit)
    text += fmt::format("; fitted on {}, held-out busbw error {:.1f}% -> {:.1f}% ({} sizes)", fmt::join(o.fit->logs, " "),
                        o.fit->held_out_error_before_pct, o.fit->held_out_error_after_pct, o.fit->held_out_sizes);
  return text;
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
  if (o.parameters) {
    const ParameterOverlay& p = *o.parameters;
    fmt::print(out, "parameters:\n  architecture: {}\n", p.architecture);
    if (!p.link_efficiency.empty()) {
      std::vector<std::string> fields;
      for (const auto& [tier, e] : p.link_efficiency) fields.push_back(fmt::format("{}: {:.4g}", topo::to_string(tier), e));
      fmt::print(out, "  link_efficiency: {{{}}}\n", fmt::join(fields, ", "));
    }
    if (p.launch_overhead) fmt::print(out, "  launch_overhead: {}\n", time_text(*p.launch_overhead));
    if (p.host_launch) fmt::print(out, "  host_launch: {}\n", time_text(*p.host_launch));
    std::vector<std::string> proto;
    if (p.simple_overhead) proto.push_back("simple: " + time_text(*p.simple_overhead));
    if (p.ll128_overhead) proto.push_back("ll128: " + time_text(*p.ll128_overhead));
    if (!proto.empty()) fmt::print(out, "  protocol_overhead: {{{}}}\n", fmt::join(proto, ", "));
    if (p.scope) {
      std::vector<std::string_view> names;
      for (auto op : p.scope->collectives) names.push_back(to_string(op));
      fmt::print(out, "  scope: {{collectives: [{}], reach: {}}}   # the fitted values apply to these only\n",
                 fmt::join(names, ", "),
                 p.scope->within_node && p.scope->across_nodes ? "both"
                 : p.scope->across_nodes                        ? "across_nodes"
                                                                : "within_node");
    }
  }
  if (o.fit) {
    const FitSummary& f = *o.fit;
    std::vector<std::string> logs;
    for (const auto& l : f.logs) logs.push_back(quoted(l));
    fmt::print(out, "fit:\n  logs: [{}]\n", fmt::join(logs, ", "));
    if (!f.topology.empty()) fmt::print(out, "  topology: {}\n", quoted(f.topology));
    fmt::print(out, "  held_out_sizes: {}\n  held_out_error_before: {:.1f}%\n  held_out_error_after: {:.1f}%\n",
               f.held_out_sizes, f.held_out_error_before_pct, f.held_out_error_after_pct);
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
