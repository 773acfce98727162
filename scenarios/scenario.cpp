#include "scenarios/scenario.h"

#include <array>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "sim/input_error.h"
#include "topologies/yaml_doc.h"

namespace wiresim::scenarios {
namespace {

using topo::Value;

constexpr std::array<std::string_view, 10> kTopKeys{"name", "description", "topology", "set", "model",
                                                    "workload", "layout", "compute", "algorithm", "protocol"};
constexpr std::array<std::string_view, 12> kModelKeys{"name",    "hidden",     "layers",    "heads",
                                                      "kv_heads", "ffn",       "dtype",     "experts",
                                                      "top_k",   "expert_ffn", "moe_every", "routing"};
constexpr std::array<std::string_view, 7> kWorkloadKeys{"phase",          "tokens", "batch",        "context",
                                                        "micro_batches", "bytes",  "disaggregation"};
constexpr std::array<std::string_view, 2> kDisaggregationKeys{"decode_offset", "kv_transfer"};
constexpr std::array<std::string_view, 5> kLayoutKeys{"tp", "ep", "pp", "dp", "placement"};
constexpr std::array<std::string_view, 3> kComputeKeys{"layer_time", "peak_flops", "memory_bandwidth"};
constexpr std::array<std::string_view, 3> kRoutingKeys{"zipf", "loads", "uniform"};

double as_number(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar) topo::fail(v, fmt::format("{}: expected a number", path));
  try {
    std::size_t used = 0;
    const double d = std::stod(v.text, &used);
    if (used != v.text.size() || !std::isfinite(d)) throw std::invalid_argument("");
    return d;
  } catch (const std::exception&) {
    topo::fail(v, fmt::format("{}: expected a number, got '{}'", path, v.text));
  }
}

int count_of(const Value& map, std::string_view key, const std::string& path, long min, long max, int fallback,
             bool required) {
  const Value* v = topo::find(map, key);
  if (!v) {
    if (required) topo::require(map, key, path);
    return fallback;
  }
  return static_cast<int>(topo::as_count(*v, topo::join_path(path, key), min, max));
}

// "989TFLOP/s", "2.25PFLOP/s", "312e12FLOP/s".
double as_flops(const Value& v, const std::string& path) {
  if (v.kind != Value::Kind::scalar) topo::fail(v, fmt::format("{}: expected a rate like 989TFLOP/s", path));
  const std::string& t = v.text;
  const auto pos = t.find("FLOP/s");
  if (pos == std::string::npos || pos + 6 != t.size() || pos == 0)
    topo::fail(v, fmt::format("{}: expected a compute rate like 989TFLOP/s, got '{}'", path, t));
  std::string number = t.substr(0, pos);
  double scale = 1.0;
  const char prefix = number.back();
  if (prefix == 'T') scale = 1e12;
  else if (prefix == 'P') scale = 1e15;
  else if (prefix == 'G') scale = 1e9;
  if (scale != 1.0) number.pop_back();
  Value n = v;
  n.text = number;
  const double d = as_number(n, path) * scale;
  if (d <= 0.0) topo::fail(v, fmt::format("{}: expected a positive rate, got '{}'", path, t));
  return d;
}

int dtype_bytes(const Value& v, const std::string& path) {
  const std::string t = topo::as_string(v, path);
  if (t == "bf16" || t == "fp16" || t == "half") return 2;
  if (t == "fp8" || t == "int8") return 1;
  if (t == "fp32" || t == "float") return 4;
  topo::fail(v, fmt::format("{}: unknown dtype '{}' (expected bf16, fp16, fp8, int8, fp32)", path, t));
}

std::vector<double> zipf_loads(int experts, double s) {
  std::vector<double> loads(experts);
  double total = 0.0;
  for (int e = 0; e < experts; ++e) total += loads[e] = 1.0 / std::pow(e + 1.0, s);
  for (auto& l : loads) l /= total;
  return loads;
}

void read_routing(const Value& v, ModelShape& m, const std::string& path) {
  if (v.kind == Value::Kind::scalar) {
    if (v.text != "uniform")
      topo::fail(v, fmt::format("{}: expected 'uniform', {{zipf: S}} or {{loads: [...]}}, got '{}'", path, v.text));
    return;
  }
  topo::require_map(v, path);
  topo::check_keys(v, kRoutingKeys, path);
  if (const Value* z = topo::find(v, "zipf")) {
    const double s = as_number(*z, path + ".zipf");
    if (s < 0.0 || s > 10.0) topo::fail(*z, path + ".zipf: expected an exponent in [0, 10]");
    m.expert_load = zipf_loads(m.experts, s);
    m.routing = fmt::format("zipf {}", z->text);
  } else if (const Value* l = topo::find(v, "loads")) {
    topo::require_sequence(*l, path + ".loads");
    if (static_cast<int>(l->items.size()) != m.experts)
      topo::fail(*l, fmt::format("{}.loads: expected {} loads (one per expert), got {}", path, m.experts, l->items.size()));
    double total = 0.0;
    for (std::size_t i = 0; i < l->items.size(); ++i) {
      const double x = as_number(l->items[i], topo::index_path(path + ".loads", i));
      if (x < 0.0) topo::fail(l->items[i], path + ".loads: expected non-negative loads");
      m.expert_load.push_back(x);
      total += x;
    }
    if (total <= 0.0) topo::fail(*l, path + ".loads: expected some expert to get tokens");
    for (auto& x : m.expert_load) x /= total;
    m.routing = "explicit";
  }
}

ModelShape read_model(const Value& v, const std::string& path) {
  topo::require_map(v, path);
  topo::check_keys(v, kModelKeys, path);
  ModelShape m;
  if (const Value* n = topo::find(v, "name")) m.name = topo::as_string(*n, path + ".name");
  m.hidden = count_of(v, "hidden", path, 1, 1'000'000, 0, true);
  m.layers = count_of(v, "layers", path, 1, 100'000, 0, true);
  m.heads = count_of(v, "heads", path, 1, 100'000, 0, true);
  m.kv_heads = count_of(v, "kv_heads", path, 1, 100'000, m.heads, false);
  m.ffn = count_of(v, "ffn", path, 1, 10'000'000, 4 * m.hidden, false);
  if (const Value* d = topo::find(v, "dtype")) {
    m.dtype_bytes = dtype_bytes(*d, path + ".dtype");
    m.dtype = d->text;
  }
  m.experts = count_of(v, "experts", path, 0, 100'000, 0, false);
  m.top_k = count_of(v, "top_k", path, 0, 1'000, m.experts > 0 ? 1 : 0, false);
  m.expert_ffn = count_of(v, "expert_ffn", path, 1, 10'000'000, m.ffn, false);
  m.moe_every = count_of(v, "moe_every", path, 1, 1'000, 1, false);
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    topo::fail(*topo::find(v, "kv_heads"), fmt::format("{}.kv_heads: expected a divisor of heads ({}), got {}", path,
                                                       m.heads, m.kv_heads));
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts))
    topo::fail(v, fmt::format("{}.top_k: expected 1..experts ({}), got {}", path, m.experts, m.top_k));
  if (const Value* r = topo::find(v, "routing")) {
    if (m.experts == 0) topo::fail(*r, path + ".routing: only a mixture-of-experts model (experts > 0) routes");
    read_routing(*r, m, path + ".routing");
  }
  return m;
}

Layout read_layout(const Value& v, const std::string& path) {
  topo::require_map(v, path);
  topo::check_keys(v, kLayoutKeys, path);
  Layout l;
  l.tp = count_of(v, "tp", path, 1, 1'000'000, 1, false);
  l.ep = count_of(v, "ep", path, 1, 1'000'000, 1, false);
  l.pp = count_of(v, "pp", path, 1, 1'000'000, 1, false);
  l.dp = count_of(v, "dp", path, 1, 1'000'000, 1, false);
  if (const Value* p = topo::find(v, "placement")) {
    if (p->kind == Value::Kind::sequence) {
      l.placement = Placement::explicit_map;
      for (std::size_t i = 0; i < p->items.size(); ++i)
        l.rank_map.push_back(static_cast<int>(topo::as_count(p->items[i], topo::index_path(path + ".placement", i), 0, 10'000'000)));
      if (static_cast<int>(l.rank_map.size()) != l.gpus())
        topo::fail(*p, fmt::format("{}.placement: expected {} GPU indices (tp x pp x dp), got {}", path, l.gpus(),
                                   l.rank_map.size()));
    } else {
      const std::string s = topo::as_string(*p, path + ".placement");
      if (s == "pack") l.placement = Placement::pack;
      else if (s == "spread") l.placement = Placement::spread;
      else topo::fail(*p, fmt::format("{}.placement: expected pack, spread or a list of GPU indices, got '{}'", path, s));
    }
  }
  return l;
}

}  // namespace

std::optional<std::string> layout_problem(const ModelShape& m, const Layout& l, int gpus) {
  if (l.gpus() > gpus)
    return fmt::format("tp x pp x dp = {} x {} x {} = {} GPUs, but the topology has {}", l.tp, l.pp, l.dp, l.gpus(), gpus);
  if (m.heads % l.tp != 0) return fmt::format("tp = {} does not divide the {} attention heads", l.tp, m.heads);
  if (m.hidden % l.tp != 0) return fmt::format("tp = {} does not divide hidden = {}", l.tp, m.hidden);
  if (m.layers % l.pp != 0) return fmt::format("pp = {} does not divide the {} layers", l.pp, m.layers);
  if (l.ep > 1) {
    if (m.experts == 0) return fmt::format("ep = {} needs a mixture-of-experts model (experts > 0)", l.ep);
    if (m.experts % l.ep != 0) return fmt::format("ep = {} does not divide the {} experts", l.ep, m.experts);
    if ((l.tp * l.dp) % l.ep != 0)
      return fmt::format("ep = {} does not divide tp x dp = {} (the GPUs of one pipeline stage)", l.ep, l.tp * l.dp);
  }
  if (l.placement == Placement::explicit_map) {
    std::vector<bool> used(gpus, false);
    for (int g : l.rank_map) {
      if (g >= gpus) return fmt::format("placement names GPU {}, but the topology has {} (0..{})", g, gpus, gpus - 1);
      if (used[g]) return fmt::format("placement uses GPU {} twice", g);
      used[g] = true;
    }
  }
  return std::nullopt;
}

ModelShape load_model(const std::string& path) {
  const Value doc = topo::read_document(path, {});
  topo::require_map(doc, "model file");
  if (const Value* m = topo::find(doc, "model")) return read_model(*m, "model");
  return read_model(doc, "model");
}

Scenario load_scenario(const std::string& path, const std::map<std::string, std::string>& overrides) {
  if (std::filesystem::is_directory(path)) throw sim::InputError(path, 0, 0, "is a directory, expected a scenario YAML file");
  const Value doc = topo::read_document(path, overrides);
  topo::require_map(doc, "scenario");
  topo::check_keys(doc, kTopKeys, "");
  Scenario s;
  s.file = path;
  s.name = std::filesystem::path(path).stem().string();
  if (const Value* n = topo::find(doc, "name")) s.name = topo::as_string(*n, "name");
  const Value& topo_v = topo::require(doc, "topology", "");
  s.topology = topo::as_string(topo_v, "topology");
  if (std::filesystem::path(s.topology).is_relative())
    s.topology = (std::filesystem::path(path).parent_path() / s.topology).lexically_normal().string();
  if (const Value* set = topo::find(doc, "set")) {
    topo::require_map(*set, "set");
    for (const auto& e : set->entries) s.set[e.key] = topo::as_string(e.value, "set." + e.key);
  }
  s.model = read_model(topo::require(doc, "model", ""), "model");
  const Value& w = topo::require(doc, "workload", "");
  topo::require_map(w, "workload");
  topo::check_keys(w, kWorkloadKeys, "workload");
  const std::string phase = topo::as_string(topo::require(w, "phase", "workload"), "workload.phase");
  if (phase == "prefill") {
    s.workload.phase = Phase::prefill;
    s.workload.tokens = topo::as_count(topo::require(w, "tokens", "workload"), "workload.tokens", 1, 100'000'000);
  } else if (phase == "decode") {
    s.workload.phase = Phase::decode;
    s.workload.batch = topo::as_count(topo::require(w, "batch", "workload"), "workload.batch", 1, 100'000'000);
    if (const Value* c = topo::find(w, "context")) s.workload.context = topo::as_count(*c, "workload.context", 1, 100'000'000);
  } else if (phase == "load") {
    s.workload.phase = Phase::load;
    if (const Value* b = topo::find(w, "bytes")) {
      try {
        s.workload.bytes = sim::parse_size(topo::as_string(*b, "workload.bytes"));
      } catch (const std::invalid_argument& e) {
        topo::fail(*b, fmt::format("workload.bytes: {}", e.what()));
      }
    }
  } else {
    topo::fail(*topo::find(w, "phase"), fmt::format("workload.phase: expected prefill, decode or load, got '{}'", phase));
  }
  if (const Value* mb = topo::find(w, "micro_batches")) {
    if (s.workload.phase == Phase::load) topo::fail(*mb, "workload.micro_batches: applies to a prefill or a decode, not a load");
    const long most = s.workload.phase == Phase::prefill ? s.workload.tokens : s.workload.batch;
    s.workload.micro_batches = static_cast<int>(topo::as_count(
        *mb, "workload.micro_batches", 1, std::min(most, 1024L)));
  }
  if (const Value* dis = topo::find(w, "disaggregation")) {
    if (s.workload.phase != Phase::prefill)
      topo::fail(*dis, "workload.disaggregation: applies to a prefill (which ships its KV cache to the decode GPUs)");
    topo::require_map(*dis, "workload.disaggregation");
    topo::check_keys(*dis, kDisaggregationKeys, "workload.disaggregation");
    s.workload.decode_offset = static_cast<int>(topo::as_count(topo::require(*dis, "decode_offset", "workload.disaggregation"),
                                                               "workload.disaggregation.decode_offset", 1, 10'000'000));
    if (const Value* kv = topo::find(*dis, "kv_transfer")) {
      const std::string t = topo::as_string(*kv, "workload.disaggregation.kv_transfer");
      if (t == "layer") s.workload.kv_layer_by_layer = true;
      else if (t == "all") s.workload.kv_layer_by_layer = false;
      else topo::fail(*kv, fmt::format("workload.disaggregation.kv_transfer: expected layer or all, got '{}'", t));
    }
  }
  s.layout = read_layout(topo::require(doc, "layout", ""), "layout");
  if (s.workload.decode_offset > 0 && s.workload.decode_offset < s.layout.gpus())
    topo::fail(*topo::find(*topo::find(w, "disaggregation"), "decode_offset"),
               fmt::format("workload.disaggregation.decode_offset: the decode GPUs would overlap the {} prefill GPUs; "
                           "expected at least {}", s.layout.gpus(), s.layout.gpus()));
  if (const Value* c = topo::find(doc, "compute")) {
    topo::require_map(*c, "compute");
    topo::check_keys(*c, kComputeKeys, "compute");
    if (const Value* t = topo::find(*c, "layer_time")) s.compute.layer_time = topo::as_time(*t, "compute.layer_time");
    if (const Value* f = topo::find(*c, "peak_flops")) s.compute.peak_flops = as_flops(*f, "compute.peak_flops");
    if (const Value* b = topo::find(*c, "memory_bandwidth")) s.compute.memory_bandwidth = topo::as_rate(*b, "compute.memory_bandwidth");
    if (s.compute.layer_time && s.compute.peak_flops > 0.0)
      topo::fail(*c, "compute: give either layer_time or peak_flops (a roofline), not both");
    if (s.compute.peak_flops > 0.0 && s.compute.memory_bandwidth.count() <= 0.0)
      topo::fail(*c, "compute: a roofline needs memory_bandwidth beside peak_flops");
  }
  if (const Value* a = topo::find(doc, "algorithm")) {
    const std::string t = topo::as_string(*a, "algorithm");
    if (t != "auto") {
      s.tp_algorithm = models::parse_algorithm(t);
      if (!s.tp_algorithm) topo::fail(*a, fmt::format("algorithm: unknown algorithm '{}' (expected auto, ring, tree, nvls, ...)", t));
    }
  }
  if (const Value* p = topo::find(doc, "protocol")) {
    const std::string t = topo::as_string(*p, "protocol");
    if (t != "auto") {
      s.tp_protocol = models::parse_protocol(t);
      if (!s.tp_protocol) topo::fail(*p, fmt::format("protocol: unknown protocol '{}' (expected auto, ll, ll128, simple)", t));
    }
  }
  // What can be checked without the topology (the GPU count comes with it).
  if (auto why = layout_problem(s.model, s.layout, 1 << 30))
    topo::fail(topo::require(doc, "layout", ""), "layout: " + *why);
  return s;
}

}  // namespace wiresim::scenarios
