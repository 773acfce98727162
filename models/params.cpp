#include "models/params.h"

#include <cmath>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "input/file.h"
#include "input/keys.h"
#include "input/yaml.h"
#include "models/algorithm.h"

namespace wiresim::models {

extern const std::string_view kDefaultParamsYaml;

namespace {

using input::Value;

// The checks of this file's schema, on the input module's positioned values.
struct Reader {
  [[noreturn]] void fail(const Value& node, const std::string& what) const { input::fail(node, what); }
  void only_keys(const Value& map, std::initializer_list<std::string_view> keys, const std::string& where) const {
    input::require_map(map, where);
    input::check_keys(map, std::span<const std::string_view>(keys.begin(), keys.size()), where);
  }
  const Value& need(const Value& map, const char* key, const std::string& where) const {
    return input::require(map, key, where);
  }
  template <typename T, typename Parse>
  T scalar(const Value& node, Parse parse, const std::string& where) const {
    if (node.kind != Value::Kind::scalar) fail(node, fmt::format("{}: expected a value with a unit", where));
    try {
      return parse(node.text);
    } catch (const std::invalid_argument& e) {
      fail(node, fmt::format("{}: {}", where, e.what()));
    }
  }
  double number(const Value& node, const std::string& where) const { return input::as_number(node, where); }
  // A whole number in [minimum, maximum]; a fraction or a huge value is bad input, never a cast.
  int count(const Value& node, const std::string& where, int minimum, int maximum) const {
    const double v = number(node, where);
    if (v != std::floor(v) || v < minimum || v > maximum)
      fail(node, fmt::format("{}: expected a whole number from {} to {}", where, minimum, maximum));
    return static_cast<int>(v);
  }
  template <typename T, typename Parse>
  std::array<T, 3> triple(const Value& node, Parse parse, const std::string& where) const {
    if (node.kind != Value::Kind::sequence || node.items.size() != 3)
      fail(node, fmt::format("{}: expected [LL, LL128, Simple]", where));
    std::array<T, 3> out{};
    for (std::size_t i = 0; i < 3; ++i) out[i] = scalar<T>(node.items[i], parse, where);
    return out;
  }
};

sim::Seconds time_of(const std::string& s) { return sim::parse_time(s); }
sim::BytesPerSec rate_of(const std::string& s) { return sim::parse_rate(s); }
sim::Bytes size_of(const std::string& s) { return sim::parse_size(s); }

ArchParams read_arch(const Reader& r, const Value& n, const std::string& where) {
  r.only_keys(n, {"channels", "nvls_channels", "nvls_efficiency", "ll_max", "ll128_per_channel",
                  "nvls_tree_per_channel", "link_efficiency", "shm_bandwidth", "launch_overhead",
                  "nvls_step_overhead", "nvls_start", "channel_bw", "p2p_channel_bw", "p2p_net_channel_bw", "nvlink_step_extra", "ll128_overhead", "simple_overhead", "pxn",
                  "msccl_all_reduce"},
              where);
  ArchParams a;
  a.channels = r.count(r.need(n, "channels", where), where + ".channels", 1, 64);
  a.nvls_channels = r.count(r.need(n, "nvls_channels", where), where + ".nvls_channels", 1, 1024);
  a.nvls_efficiency = r.number(r.need(n, "nvls_efficiency", where), where + ".nvls_efficiency");
  a.ll_max = r.scalar<sim::BytesPerSec>(r.need(n, "ll_max", where), rate_of, where + ".ll_max");
  a.ll128_per_channel = r.scalar<sim::BytesPerSec>(r.need(n, "ll128_per_channel", where), rate_of,
                                                   where + ".ll128_per_channel");
  if (const Value* v = input::find(n, "nvls_tree_per_channel")) {
    const std::string at = where + ".nvls_tree_per_channel";
    if (v->kind != Value::Kind::sequence || v->items.size() != 2)
      r.fail(*v, at + ": expected [on 2 nodes, on more than 2]");
    for (std::size_t i = 0; i < 2; ++i) {
      a.nvls_tree_per_channel[i] = r.scalar<sim::BytesPerSec>(v->items[i], rate_of, at);
      if (!(a.nvls_tree_per_channel[i].count() > 0.0)) r.fail(v->items[i], at + ": expected a rate above 0");
    }
  }
  if (const Value* v = input::find(n, "shm_bandwidth"))
    a.shm_bandwidth = r.scalar<sim::BytesPerSec>(*v, rate_of, where + ".shm_bandwidth");
  if (const Value* v = input::find(n, "channel_bw"))
    a.channel_bw = r.scalar<sim::BytesPerSec>(*v, rate_of, where + ".channel_bw");
  if (const Value* v = input::find(n, "p2p_channel_bw"))
    a.p2p_channel_bw = r.scalar<sim::BytesPerSec>(*v, rate_of, where + ".p2p_channel_bw");
  if (const Value* v = input::find(n, "p2p_net_channel_bw"))
    a.p2p_net_channel_bw = r.scalar<sim::BytesPerSec>(*v, rate_of, where + ".p2p_net_channel_bw");
  // A time under `key`, if given: from 0 to `most` (`most_text` in the error).
  const auto time_at = [&](const std::string& key, double most, const char* most_text) -> std::optional<sim::Seconds> {
    const Value* v = input::find(n, key);
    if (!v) return std::nullopt;
    const auto t = r.scalar<sim::Seconds>(*v, time_of, where + "." + key);
    if (t.count() < 0.0 || t.count() > most) r.fail(*v, where + "." + key + ": expected 0 to " + most_text);
    return t;
  };
  if (const auto t = time_at("nvlink_step_extra", 1e-3, "1ms")) a.nvlink_step_extra = *t;
  a.ll128_overhead = time_at("ll128_overhead", 1e-3, "1ms");
  a.simple_overhead = time_at("simple_overhead", 1e-3, "1ms");
  if (const Value* v = input::find(n, "pxn")) a.pxn = input::as_bool(*v, where + ".pxn");
  if (const Value* v = input::find(n, "msccl_all_reduce")) {
    a.msccl_all_reduce = r.scalar<sim::Bytes>(*v, size_of, where + ".msccl_all_reduce");
    if (a.msccl_all_reduce.count() < 0.0) r.fail(*v, where + ".msccl_all_reduce: expected a size >= 0");
  }
  if (const auto t = time_at("nvls_step_overhead", 1e-3, "1ms")) a.nvls_step_overhead = *t;
  if (const auto t = time_at("nvls_start", 1e-3, "1ms")) a.nvls_start = *t;
  if (const auto t = time_at("launch_overhead", 1e-2, "10ms")) a.launch_overhead = *t;
  const auto& eff = r.need(n, "link_efficiency", where);
  if (eff.kind != Value::Kind::map) r.fail(eff, where + ".link_efficiency: expected a mapping tier: fraction");
  for (const auto& kv : eff.entries) {
    const auto tier = topo::tier_from_string(kv.key);
    if (!tier) input::fail(kv.key_at, fmt::format("{}.link_efficiency: unknown tier '{}'", where, kv.key));
    const double e = r.number(kv.value, where + ".link_efficiency");
    if (!(e > 0.0 && e <= 1.0)) r.fail(kv.value, where + ".link_efficiency: expected a fraction in (0, 1]");
    a.link_efficiency[*tier] = e;
  }
  return a;
}

}  // namespace

std::string_view to_string(TierClass c) {
  switch (c) {
    case TierClass::nvlink: return "nvlink";
    case TierClass::pcie: return "pcie";
    case TierClass::net: return "net";
  }
  return "?";
}

TierClass tier_class(topo::Tier tier) {
  switch (tier) {
    case topo::Tier::nvlink:
    case topo::Tier::xgmi:
    case topo::Tier::c2c: return TierClass::nvlink;
    case topo::Tier::pcie:
    case topo::Tier::upi: return TierClass::pcie;
    default: return TierClass::net;
  }
}

double ArchParams::efficiency(topo::Tier tier) const {
  const auto it = link_efficiency.find(tier);
  return it == link_efficiency.end() ? 1.0 : it->second;
}

const ArchParams& Params::arch(std::string_view name) const {
  auto it = architectures.find(std::string(name));
  if (it == architectures.end()) it = architectures.find("default");
  if (it == architectures.end()) throw std::logic_error("parameters have no 'default' architecture");
  return it->second;
}

ProtocolParams Params::protocol_on(const ArchParams& arch, Protocol p) const {
  ProtocolParams out = protocol(p);
  if (p == Protocol::ll128 && arch.ll128_overhead) out.overhead = *arch.ll128_overhead;
  if (p == Protocol::simple && arch.simple_overhead) out.overhead = *arch.simple_overhead;
  return out;
}

sim::Seconds Params::base_latency(Algorithm a, Protocol p) const {
  return latency.at(a).base[static_cast<int>(p)];
}

sim::Seconds Params::step_latency(Algorithm a, Protocol p, TierClass c) const {
  return latency.at(a).step[static_cast<int>(c)][static_cast<int>(p)];
}

Params parse_params(std::string_view yaml_text, const std::string& source) {
  const Reader r;
  const Value root = input::read_yaml_text(std::string(yaml_text), source);
  r.only_keys(root, {"protocols", "ring_simple_chunk_steps", "nvls_chunk", "p2p_chunk", "latency",
                     "architectures", "host_launch", "net_socket", "p2p_net_ll", "ll_max_net"}, "parameters");
  Params p;
  p.source = source;
  const auto& protos = r.need(root, "protocols", "parameters");
  r.only_keys(protos, {"ll", "ll128", "simple"}, "protocols");
  for (Protocol proto : all_protocols()) {
    const std::string where = fmt::format("protocols.{}", to_string(proto));
    const auto& n = r.need(protos, std::string(to_string(proto)).c_str(), "protocols");
    r.only_keys(n, {"payload", "step", "slots", "overhead", "cut_through", "tree_cut_through"}, where);
    ProtocolParams& pp = p.protocols[static_cast<int>(proto)];
    pp.payload = r.number(r.need(n, "payload", where), where + ".payload");
    pp.step = r.scalar<sim::Bytes>(r.need(n, "step", where), size_of, where + ".step");
    pp.slots = r.count(r.need(n, "slots", where), where + ".slots", 1, 1024);
    if (!(pp.payload > 0.0 && pp.payload <= 1.0)) r.fail(r.need(n, "payload", where), where + ".payload: expected a fraction in (0, 1]");
    if (pp.step.count() < 1.0) r.fail(r.need(n, "step", where), where + ".step: expected at least 1B");
    if (const Value* v = input::find(n, "overhead")) {
      pp.overhead = r.scalar<sim::Seconds>(*v, time_of, where + ".overhead");
      if (pp.overhead.count() < 0.0 || pp.overhead.count() > 1e-3) r.fail(*v, where + ".overhead: expected 0 to 1ms");
    }
    if (const Value* v = input::find(n, "cut_through")) pp.cut_through = input::as_bool(*v, where + ".cut_through");
    if (const Value* v = input::find(n, "tree_cut_through"))
      pp.tree_cut_through = input::as_bool(*v, where + ".tree_cut_through");
  }
  if (const Value* v = input::find(root, "host_launch")) {
    p.host_launch = r.scalar<sim::Seconds>(*v, time_of, "host_launch");
    if (p.host_launch.count() < 0.0 || p.host_launch.count() > 1e-3) r.fail(*v, "host_launch: expected 0 to 1ms");
  }
  if (const Value* v = input::find(root, "net_socket")) {
    r.only_keys(*v, {"stream_bandwidth", "step_extra"}, "net_socket");
    p.net_socket.stream_bandwidth =
        r.scalar<sim::BytesPerSec>(r.need(*v, "stream_bandwidth", "net_socket"), rate_of, "net_socket.stream_bandwidth");
    if (p.net_socket.stream_bandwidth.count() <= 0.0)
      r.fail(r.need(*v, "stream_bandwidth", "net_socket"), "net_socket.stream_bandwidth: expected a positive rate");
    const Value& extra = r.need(*v, "step_extra", "net_socket");
    p.net_socket.step_extra = r.scalar<sim::Seconds>(extra, time_of, "net_socket.step_extra");
    if (p.net_socket.step_extra.count() < 0.0 || p.net_socket.step_extra.count() > 1e-2)
      r.fail(extra, "net_socket.step_extra: expected 0 to 10ms");
  }
  p.ring_simple_chunk_steps =
      r.count(r.need(root, "ring_simple_chunk_steps", "parameters"), "ring_simple_chunk_steps", 1, 1024);
  p.nvls_chunk = r.scalar<sim::Bytes>(r.need(root, "nvls_chunk", "parameters"), size_of, "nvls_chunk");
  const auto& p2p = r.need(root, "p2p_chunk", "parameters");
  r.only_keys(p2p, {"nvlink", "pcie", "net"}, "p2p_chunk");
  p.p2p_chunk[0] = r.scalar<sim::Bytes>(r.need(p2p, "nvlink", "p2p_chunk"), size_of, "p2p_chunk.nvlink");
  p.p2p_chunk[1] = r.scalar<sim::Bytes>(r.need(p2p, "pcie", "p2p_chunk"), size_of, "p2p_chunk.pcie");
  p.p2p_chunk[2] = r.scalar<sim::Bytes>(r.need(p2p, "net", "p2p_chunk"), size_of, "p2p_chunk.net");
  if (const Value* v = input::find(root, "p2p_net_ll")) p.p2p_net_ll = input::as_bool(*v, "p2p_net_ll");
  const auto& llnet = r.need(root, "ll_max_net", "parameters");
  r.only_keys(llnet, {"amd", "other"}, "ll_max_net");
  const auto pair = [&](const char* key, std::array<sim::BytesPerSec, 2>& out) {
    const std::string where = fmt::format("ll_max_net.{}", key);
    const Value& v = r.need(llnet, key, "ll_max_net");
    if (v.kind != Value::Kind::sequence || v.items.size() != 2)
      r.fail(v, where + ": expected [2 nodes, more than 2 nodes]");
    for (std::size_t i = 0; i < 2; ++i) {
      out[i] = r.scalar<sim::BytesPerSec>(v.items[i], rate_of, where);
      if (out[i].count() <= 0.0) r.fail(v.items[i], where + ": expected a positive rate");
    }
  };
  pair("amd", p.ll_max_net.amd);
  pair("other", p.ll_max_net.other);
  for (auto c : p.p2p_chunk)
    if (c.count() < 1.0) r.fail(p2p, "p2p_chunk: expected sizes of at least 1B");
  if (p.nvls_chunk.count() < 1.0) r.fail(r.need(root, "nvls_chunk", "parameters"), "nvls_chunk: expected at least 1B");
  const auto& lat = r.need(root, "latency", "parameters");
  if (lat.kind != Value::Kind::map) r.fail(lat, "latency: expected a mapping algorithm: {base, nvlink, pcie, net}");
  std::map<Algorithm, LatencyRow> rows;   // as the file gives them
  for (const auto& kv : lat.entries) {
    const auto& name = kv.key;
    const auto algo = parse_algorithm(name);
    if (!algo) input::fail(kv.key_at, fmt::format("latency: unknown algorithm '{}'", name));
    const std::string where = "latency." + name;
    r.only_keys(kv.value, {"base", "nvlink", "pcie", "net"}, where);
    LatencyRow row;
    row.base = r.triple<sim::Seconds>(r.need(kv.value, "base", where), time_of, where + ".base");
    row.step[0] = r.triple<sim::Seconds>(r.need(kv.value, "nvlink", where), time_of, where + ".nvlink");
    row.step[1] = r.triple<sim::Seconds>(r.need(kv.value, "pcie", where), time_of, where + ".pcie");
    row.step[2] = r.triple<sim::Seconds>(r.need(kv.value, "net", where), time_of, where + ".net");
    rows[*algo] = row;
  }
  // An algorithm without a row of its own uses the one its descriptor names.
  for (const AlgorithmDescriptor* d : algorithms()) {
    auto row = rows.find(d->id);
    if (row == rows.end()) row = rows.find(d->latency_row);
    if (row == rows.end())
      r.fail(lat, d->latency_row == d->id
                      ? fmt::format("latency: missing algorithm '{}'", d->name)
                      : fmt::format("latency: missing algorithm '{}' (whose row {} uses)", to_string(d->latency_row), d->name));
    p.latency[d->id] = row->second;
  }
  const auto& archs = r.need(root, "architectures", "parameters");
  if (archs.kind != Value::Kind::map) r.fail(archs, "architectures: expected a mapping name: {...}");
  for (const auto& kv : archs.entries) p.architectures[kv.key] = read_arch(r, kv.value, "architectures." + kv.key);
  if (!p.architectures.count("default")) r.fail(archs, "architectures: missing 'default'");
  return p;
}

const Params& default_params() {
  static const Params params = parse_params(kDefaultParamsYaml, "models/params.yaml");
  return params;
}

Params load_params(const std::string& path) { return parse_params(input::read_file(path), path); }

}  // namespace wiresim::models
