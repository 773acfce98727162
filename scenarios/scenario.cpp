#include "scenarios/scenario.h"

#include <array>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "input/document.h"
#include "input/file.h"
#include "input/dtype.h"
#include "input/keys.h"
#include "input/units.h"
#include "models/tuner.h"

namespace wiresim::scenarios {
namespace {

using input::Value;

constexpr std::array<std::string_view, 13> kTopKeys{"name",      "description", "topology", "set",
                                                    "model",     "workload",    "layout",   "compute",
                                                    "algorithm", "protocol",    "pick",     "faults",
                                                    "transport"};
constexpr std::array<std::string_view, 2> kFaultKeys{"fail", "degrade"};
constexpr std::array<std::string_view, 4> kTransportKeys{"p2p", "p2p_level", "gdr", "net"};
constexpr std::array<std::string_view, 15> kModelKeys{
    "name",       "hidden",    "layers",       "heads",          "kv_heads",          "ffn",    "dtype",  "experts",
    "top_k",      "expert_ffn", "moe_every",   "dense_layers",   "shared_experts",    "kv_bytes_per_token", "routing"};
constexpr std::array<std::string_view, 11> kWorkloadKeys{"phase",          "tokens", "batch",        "context",
                                                         "micro_batches", "bytes",  "disaggregation", "host_numa",
                                                         "source",        "gds",    "offload"};
constexpr std::array<std::string_view, 3> kOffloadKeys{"kv", "weights", "host_numa"};
constexpr std::array<std::string_view, 3> kLoadOnlyKeys{"host_numa", "source", "gds"};
constexpr std::array<std::string_view, 2> kDisaggregationKeys{"decode_offset", "kv_transfer"};
constexpr std::array<std::string_view, 5> kLayoutKeys{"tp", "ep", "pp", "dp", "placement"};
constexpr std::array<std::string_view, 3> kComputeKeys{"layer_time", "peak_flops", "memory_bandwidth"};
constexpr std::array<std::string_view, 3> kRoutingKeys{"zipf", "loads", "uniform"};

int count_of(const Value& map, std::string_view key, const std::string& path, long min, long max, int fallback,
             bool required) {
  const Value* v = input::find(map, key);
  if (!v) {
    if (required) input::require(map, key, path);
    return fallback;
  }
  return static_cast<int>(input::as_count(*v, input::join_path(path, key), min, max));
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
      input::fail(v, fmt::format("{}: expected 'uniform', {{zipf: S}} or {{loads: [...]}}, got '{}'", path, v.text));
    return;
  }
  input::require_map(v, path);
  input::check_keys(v, kRoutingKeys, path);
  if (const Value* z = input::find(v, "zipf")) {
    const double s = input::as_number(*z, path + ".zipf");
    if (s < 0.0 || s > 10.0) input::fail(*z, path + ".zipf: expected an exponent in [0, 10]");
    m.expert_load = zipf_loads(m.experts, s);
    m.routing = fmt::format("zipf {}", z->text);
  } else if (const Value* l = input::find(v, "loads")) {
    input::require_sequence(*l, path + ".loads");
    if (static_cast<int>(l->items.size()) != m.experts)
      input::fail(*l, fmt::format("{}.loads: expected {} loads (one per expert), got {}", path, m.experts, l->items.size()));
    double total = 0.0;
    for (std::size_t i = 0; i < l->items.size(); ++i) {
      const double x = input::as_number(l->items[i], input::index_path(path + ".loads", i));
      if (x < 0.0) input::fail(l->items[i], path + ".loads: expected non-negative loads");
      m.expert_load.push_back(x);
      total += x;
    }
    if (total <= 0.0) input::fail(*l, path + ".loads: expected some expert to get tokens");
    for (auto& x : m.expert_load) x /= total;
    m.routing = "explicit";
  }
}

ModelShape read_model(const Value& v, const std::string& path) {
  input::require_map(v, path);
  input::check_keys(v, kModelKeys, path);
  ModelShape m;
  if (const Value* n = input::find(v, "name")) m.name = input::as_string(*n, path + ".name");
  m.hidden = count_of(v, "hidden", path, 1, 1'000'000, 0, true);
  m.layers = count_of(v, "layers", path, 1, 100'000, 0, true);
  m.heads = count_of(v, "heads", path, 1, 100'000, 0, true);
  m.kv_heads = count_of(v, "kv_heads", path, 1, 100'000, m.heads, false);
  m.ffn = count_of(v, "ffn", path, 1, 10'000'000, 4 * m.hidden, false);
  if (const Value* d = input::find(v, "dtype")) {
    m.dtype_bytes = input::as_dtype(*d, path + ".dtype");
    m.dtype = d->text;
  }
  m.experts = count_of(v, "experts", path, 0, 100'000, 0, false);
  m.top_k = count_of(v, "top_k", path, 0, 1'000, m.experts > 0 ? 1 : 0, false);
  m.expert_ffn = count_of(v, "expert_ffn", path, 1, 10'000'000, m.ffn, false);
  m.moe_every = count_of(v, "moe_every", path, 1, 1'000, 1, false);
  m.dense_layers = count_of(v, "dense_layers", path, 0, 100'000, 0, false);
  m.shared_experts = count_of(v, "shared_experts", path, 0, 1'000, 0, false);
  m.kv_bytes_per_token = count_of(v, "kv_bytes_per_token", path, 1, 100'000'000, 0, false);
  if ((m.dense_layers > 0 || m.shared_experts > 0) && m.experts == 0)
    input::fail(v, path + ": dense_layers and shared_experts describe a mixture-of-experts model (experts > 0)");
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    input::fail(*input::find(v, "kv_heads"), fmt::format("{}.kv_heads: expected a divisor of heads ({}), got {}", path,
                                                       m.heads, m.kv_heads));
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts))
    input::fail(v, fmt::format("{}.top_k: expected 1..experts ({}), got {}", path, m.experts, m.top_k));
  if (const Value* r = input::find(v, "routing")) {
    if (m.experts == 0) input::fail(*r, path + ".routing: only a mixture-of-experts model (experts > 0) routes");
    read_routing(*r, m, path + ".routing");
  }
  return m;
}

Layout read_layout(const Value& v, const std::string& path) {
  input::require_map(v, path);
  input::check_keys(v, kLayoutKeys, path);
  Layout l;
  l.tp = count_of(v, "tp", path, 1, 1'000'000, 1, false);
  l.ep = count_of(v, "ep", path, 1, 1'000'000, 1, false);
  l.pp = count_of(v, "pp", path, 1, 1'000'000, 1, false);
  l.dp = count_of(v, "dp", path, 1, 1'000'000, 1, false);
  if (const Value* p = input::find(v, "placement")) {
    if (p->kind == Value::Kind::sequence) {
      l.placement = Placement::explicit_map;
      for (std::size_t i = 0; i < p->items.size(); ++i)
        l.rank_map.push_back(static_cast<int>(input::as_count(p->items[i], input::index_path(path + ".placement", i), 0, 10'000'000)));
      if (static_cast<int>(l.rank_map.size()) != l.gpus())
        input::fail(*p, fmt::format("{}.placement: expected {} GPU indices (tp x pp x dp), got {}", path, l.gpus(),
                                   l.rank_map.size()));
    } else {
      const std::string s = input::as_string(*p, path + ".placement");
      if (s == "pack") l.placement = Placement::pack;
      else if (s == "spread") l.placement = Placement::spread;
      else input::fail(*p, fmt::format("{}.placement: expected pack, spread or a list of GPU indices, got '{}'", path, s));
    }
  }
  return l;
}

// A load's `host_numa:` (local, remote or a NUMA node number), `source:` (host or storage)
// and `gds:` (on or off; storage only).
void read_host_numa(const Value& h, const std::string& path, HostNuma& numa, int& node) {
  const std::string t = input::as_string(h, path);
  if (t == "local") numa = HostNuma::local;
  else if (t == "remote") numa = HostNuma::remote;
  else if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos) {
    numa = HostNuma::node;
    node = static_cast<int>(input::as_count(h, path, 0, 1023));
  } else {
    input::fail(h, fmt::format("{}: expected local, remote or a NUMA node number (0, 1, ...), got '{}'", path, t));
  }
}

void read_load_source(const Value& w, Workload& load) {
  if (const Value* h = input::find(w, "host_numa")) {
    load.host_numa_at = h->at;
    read_host_numa(*h, "workload.host_numa", load.host_numa, load.numa_node);
  }
  if (const Value* src = input::find(w, "source")) {
    load.source_at = src->at;
    const std::string t = input::as_string(*src, "workload.source");
    if (t == "host") load.source = LoadSource::host;
    else if (t == "storage") load.source = LoadSource::storage;
    else input::fail(*src, fmt::format("workload.source: expected host or storage, got '{}'", t));
  }
  if (const Value* g = input::find(w, "gds")) {
    if (load.source != LoadSource::storage)
      input::fail(*g, "workload.gds: GPUDirect Storage applies to a load from storage (source: storage)");
    const std::string t = input::as_string(*g, "workload.gds");
    if (t == "on" || t == "true") load.gds = true;
    else if (t == "off" || t == "false") load.gds = false;
    else input::fail(*g, fmt::format("workload.gds: expected on or off, got '{}'", t));
  }
  if (load.source == LoadSource::storage && load.gds && input::find(w, "host_numa"))
    input::fail(*input::find(w, "host_numa"),
                "workload.host_numa: a GPUDirect Storage read (gds: on) passes through no host buffer; "
                "drop host_numa or set gds: off");
}

// A share of what a GPU holds, 0..1: a number (0.25) or a percentage (25%).
double read_share(const Value& v, const std::string& path) {
  const bool percent = v.kind == Value::Kind::scalar && !v.text.empty() && v.text.back() == '%';
  double x = 0.0;
  if (percent) {
    Value number = v;
    number.text.pop_back();
    x = input::as_number(number, path) / 100.0;
  } else {
    x = input::as_number(v, path);
  }
  if (!(x >= 0.0 && x <= 1.0))
    input::fail(v, fmt::format("{}: expected a share from 0 to 1 (or 0% to 100%), got '{}'", path, v.text));
  return x;
}

// A decode's `offload: {kv: SHARE, weights: SHARE, host_numa: local|remote|N}`.
Offload read_offload(const Value& v) {
  const std::string path = "workload.offload";
  input::require_map(v, path);
  input::check_keys(v, kOffloadKeys, path);
  Offload o;
  o.at = v.at;
  if (const Value* k = input::find(v, "kv")) o.kv = read_share(*k, path + ".kv");
  if (const Value* w = input::find(v, "weights")) o.weights = read_share(*w, path + ".weights");
  if (const Value* h = input::find(v, "host_numa")) {
    o.host_numa_at = h->at;
    read_host_numa(*h, path + ".host_numa", o.host_numa, o.numa_node);
  }
  if (!o.any()) input::fail(v, path + ": offloads nothing; expected kv or weights above 0 (kv: 1.0 keeps the whole KV cache in host memory)");
  return o;
}

}  // namespace

std::string offload_place_text(const Offload& o) {
  return o.host_numa == HostNuma::remote ? "host memory on the far socket"
         : o.host_numa == HostNuma::node ? fmt::format("host memory on NUMA node {}", o.numa_node)
                                         : "host memory";
}

std::string load_source_text(const Workload& w) {
  const std::string numa = w.host_numa == HostNuma::remote ? " on the far socket"
                           : w.host_numa == HostNuma::node ? fmt::format(" on NUMA node {}", w.numa_node)
                                                           : "";
  if (w.source == LoadSource::host) return "host memory" + numa;
  if (w.gds) return "storage with GPUDirect Storage";
  return "storage through host memory" + numa + " (no GPUDirect Storage)";
}

std::optional<std::string> layout_problem(const ModelShape& m, const Layout& l, int gpus) {
  if (l.gpus() > gpus)
    return fmt::format("tp x pp x dp = {} x {} x {} = {} GPUs, but the topology has {}", l.tp, l.pp, l.dp, l.gpus(), gpus);
  if (m.heads % l.tp != 0) return fmt::format("tp = {} does not divide the {} attention heads", l.tp, m.heads);
  if (m.hidden % l.tp != 0) return fmt::format("tp = {} does not divide hidden = {}", l.tp, m.hidden);
  if (m.layers % l.pp != 0) return fmt::format("pp = {} does not divide the {} layers", l.pp, m.layers);
  if (l.ep > 1) {
    if (m.experts == 0) return fmt::format("ep = {} needs a mixture-of-experts model (experts > 0)", l.ep);
    if (l.ep > m.experts) return fmt::format("ep = {} is more ranks than the {} experts", l.ep, m.experts);
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
  const Value doc = input::read_document(path, {});
  input::require_map(doc, "model file");
  if (const Value* m = input::find(doc, "model")) return read_model(*m, "model");
  return read_model(doc, "model");
}

FileHead read_head(const Value& doc, const std::string& path) {
  FileHead h;
  h.name = std::filesystem::path(path).stem().string();
  if (const Value* n = input::find(doc, "name")) h.name = input::as_string(*n, "name");
  h.topology = input::beside(path, input::as_string(input::require(doc, "topology", ""), "topology"));
  if (const Value* set = input::find(doc, "set")) {
    input::require_map(*set, "set");
    for (const auto& e : set->entries) h.set[e.key] = input::as_string(e.value, "set." + e.key);
  }
  return h;
}

void read_faults(const Value& v, std::vector<std::string>& fail, std::vector<std::string>& degrade) {
  input::require_map(v, "faults");
  input::check_keys(v, kFaultKeys, "faults");
  const auto patterns = [](const Value& list, const std::string& path, std::vector<std::string>& out) {
    if (list.kind == Value::Kind::scalar) {
      out.push_back(input::as_string(list, path));
      return;
    }
    input::require_sequence(list, path);
    for (std::size_t i = 0; i < list.items.size(); ++i) out.push_back(input::as_string(list.items[i], input::index_path(path, i)));
  };
  if (const Value* f = input::find(v, "fail")) patterns(*f, "faults.fail", fail);
  if (const Value* d = input::find(v, "degrade")) patterns(*d, "faults.degrade", degrade);
}

void read_transports(const Value& v, models::Transports& out) {
  input::require_map(v, "transport");
  input::check_keys(v, kTransportKeys, "transport");
  const auto knob = [&](const char* key, const char* expected, auto parse, auto& field) {
    const Value* k = input::find(v, key);
    if (!k) return;
    const std::string text = input::as_string(*k, std::string("transport.") + key);
    const auto parsed = parse(text);
    if (!parsed) input::fail(*k, fmt::format("transport.{}: expected {}, got '{}'", key, expected, text));
    field = *parsed;
  };
  knob("p2p", "on or off", models::parse_p2p, out.p2p);
  knob("gdr", "auto, on or off", models::parse_gdr, out.gdr);
  knob("net", "ib or socket", models::parse_net, out.net);
  if (const Value* l = input::find(v, "p2p_level"); l && input::as_string(*l, "transport.p2p_level") == "auto")
    out.p2p_level.reset();
  else
    knob("p2p_level", "auto, LOC, NVL, PIX, PXB, PHB or SYS", models::parse_path_type, out.p2p_level);
}

Scenario load_scenario(const std::string& path, const std::map<std::string, std::string>& overrides) {
  const Value doc = input::read_document(path, overrides);
  input::require_map(doc, "scenario");
  input::check_keys(doc, kTopKeys, "");
  Scenario s;
  s.file = path;
  FileHead head = read_head(doc, path);
  s.name = std::move(head.name);
  s.topology = std::move(head.topology);
  s.set = std::move(head.set);
  s.model = read_model(input::require(doc, "model", ""), "model");
  const Value& w = input::require(doc, "workload", "");
  input::require_map(w, "workload");
  input::check_keys(w, kWorkloadKeys, "workload");
  const std::string phase = input::as_string(input::require(w, "phase", "workload"), "workload.phase");
  if (phase == "prefill") {
    s.workload.phase = Phase::prefill;
    s.workload.tokens = input::as_count(input::require(w, "tokens", "workload"), "workload.tokens", 1, 100'000'000);
  } else if (phase == "decode") {
    s.workload.phase = Phase::decode;
    s.workload.batch = input::as_count(input::require(w, "batch", "workload"), "workload.batch", 1, 100'000'000);
    if (const Value* c = input::find(w, "context")) s.workload.context = input::as_count(*c, "workload.context", 1, 100'000'000);
  } else if (phase == "load") {
    s.workload.phase = Phase::load;
    if (const Value* b = input::find(w, "bytes")) s.workload.bytes = input::as_size(*b, "workload.bytes");
    read_load_source(w, s.workload);
  } else {
    input::fail(*input::find(w, "phase"), fmt::format("workload.phase: expected prefill, decode or load, got '{}'", phase));
  }
  if (const Value* o = input::find(w, "offload")) {
    if (s.workload.phase != Phase::decode)
      input::fail(*o, fmt::format("workload.offload: applies to a decode (phase: decode), not a {}", phase));
    s.workload.offload = read_offload(*o);
    if (const Value* mb = input::find(w, "micro_batches"); mb && mb->text != "1")
      input::fail(*mb, "workload.micro_batches: an offloading decode runs its batch whole (micro_batches: 1)");
  }
  if (s.workload.phase != Phase::load)
    for (const auto key : kLoadOnlyKeys)
      if (const Value* v = input::find(w, key))
        input::fail(*v, fmt::format("workload.{}: applies to a load (phase: load), not a {}", key, phase));
  if (const Value* mb = input::find(w, "micro_batches")) {
    if (s.workload.phase == Phase::load) input::fail(*mb, "workload.micro_batches: applies to a prefill or a decode, not a load");
    const long most = s.workload.phase == Phase::prefill ? s.workload.tokens : s.workload.batch;
    s.workload.micro_batches = static_cast<int>(input::as_count(
        *mb, "workload.micro_batches", 1, std::min(most, 1024L)));
  }
  if (const Value* dis = input::find(w, "disaggregation")) {
    if (s.workload.phase != Phase::prefill)
      input::fail(*dis, "workload.disaggregation: applies to a prefill (which ships its KV cache to the decode GPUs)");
    input::require_map(*dis, "workload.disaggregation");
    input::check_keys(*dis, kDisaggregationKeys, "workload.disaggregation");
    s.workload.decode_offset = static_cast<int>(input::as_count(input::require(*dis, "decode_offset", "workload.disaggregation"),
                                                               "workload.disaggregation.decode_offset", 1, 10'000'000));
    if (const Value* kv = input::find(*dis, "kv_transfer")) {
      const std::string t = input::as_string(*kv, "workload.disaggregation.kv_transfer");
      if (t == "layer") s.workload.kv_layer_by_layer = true;
      else if (t == "all") s.workload.kv_layer_by_layer = false;
      else input::fail(*kv, fmt::format("workload.disaggregation.kv_transfer: expected layer or all, got '{}'", t));
    }
  }
  s.layout = read_layout(input::require(doc, "layout", ""), "layout");
  if (s.workload.decode_offset > 0 && s.workload.decode_offset < s.layout.gpus())
    input::fail(*input::find(*input::find(w, "disaggregation"), "decode_offset"),
               fmt::format("workload.disaggregation.decode_offset: the decode GPUs would overlap the {} prefill GPUs; "
                           "expected at least {}", s.layout.gpus(), s.layout.gpus()));
  if (const Value* c = input::find(doc, "compute")) {
    input::require_map(*c, "compute");
    input::check_keys(*c, kComputeKeys, "compute");
    if (const Value* t = input::find(*c, "layer_time")) s.compute.layer_time = input::as_time(*t, "compute.layer_time");
    if (const Value* f = input::find(*c, "peak_flops")) s.compute.peak_flops = input::as_flops(*f, "compute.peak_flops");
    if (const Value* b = input::find(*c, "memory_bandwidth")) s.compute.memory_bandwidth = input::as_rate(*b, "compute.memory_bandwidth");
    if (s.compute.layer_time && s.compute.peak_flops > 0.0)
      input::fail(*c, "compute: give either layer_time or peak_flops (a roofline), not both");
    if (s.compute.peak_flops > 0.0 && s.compute.memory_bandwidth.count() <= 0.0)
      input::fail(*c, "compute: a roofline needs memory_bandwidth beside peak_flops");
  }
  if (const Value* a = input::find(doc, "algorithm")) {
    const std::string t = input::as_string(*a, "algorithm");
    if (t != "auto") {
      s.tp_algorithm = models::parse_algorithm(t);
      if (!s.tp_algorithm) input::fail(*a, fmt::format("algorithm: unknown algorithm '{}' (expected auto, ring, tree, nvls, ...)", t));
    }
  }
  if (const Value* p = input::find(doc, "protocol")) {
    const std::string t = input::as_string(*p, "protocol");
    if (t != "auto") {
      s.tp_protocol = models::parse_protocol(t);
      if (!s.tp_protocol) input::fail(*p, fmt::format("protocol: unknown protocol '{}' (expected auto, ll, ll128, simple)", t));
    }
  }
  if (const Value* k = input::find(doc, "pick")) {
    s.pick = input::as_string(*k, "pick");
    if (!models::parse_ranking(s.pick)) input::fail(*k, fmt::format("pick: expected fastest or nccl, got '{}'", s.pick));
  }
  if (const Value* f = input::find(doc, "faults")) read_faults(*f, s.fail, s.degrade);
  if (const Value* t = input::find(doc, "transport")) read_transports(*t, s.transports);
  // What can be checked without the topology (the GPU count comes with it).
  if (auto why = layout_problem(s.model, s.layout, 1 << 30))
    input::fail(input::require(doc, "layout", ""), "layout: " + *why);
  return s;
}

}  // namespace wiresim::scenarios
