#include "models/params.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/input_error.h"

namespace wiresim::models {

extern const std::string_view kDefaultParamsYaml;

namespace {

using sim::InputError;

struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    const auto mark = node.Mark();
    throw InputError(file, mark.line + 1, mark.column + 1, what);
  }
  void only_keys(const YAML::Node& map, std::initializer_list<std::string_view> keys,
                 const std::string& where) const {
    if (!map.IsMap()) fail(map, fmt::format("{}: expected a mapping", where));
    for (const auto& kv : map) {
      const auto key = kv.first.as<std::string>();
      bool known = false;
      for (auto k : keys) known = known || k == key;
      if (!known)
        fail(kv.first, fmt::format("{}: unknown key '{}' (expected one of: {})", where, key,
                                   fmt::join(keys, ", ")));
    }
  }
  YAML::Node need(const YAML::Node& map, const char* key, const std::string& where) const {
    if (!map[key]) fail(map, fmt::format("{}: missing '{}'", where, key));
    return map[key];
  }
  template <typename T, typename Parse>
  T scalar(const YAML::Node& node, Parse parse, const std::string& where) const {
    if (!node.IsScalar()) fail(node, fmt::format("{}: expected a value with a unit", where));
    try {
      return parse(node.Scalar());
    } catch (const std::invalid_argument& e) {
      fail(node, fmt::format("{}: {}", where, e.what()));
    }
  }
  double number(const YAML::Node& node, const std::string& where) const {
    try {
      if (!node.IsScalar()) throw YAML::Exception(node.Mark(), "");
      return node.as<double>();
    } catch (const YAML::Exception&) {
      fail(node, fmt::format("{}: expected a number", where));
    }
  }
  // A whole number in [minimum, maximum]; a fraction or a huge value is bad input, never a cast.
  int count(const YAML::Node& node, const std::string& where, int minimum, int maximum) const {
    const double v = number(node, where);
    if (v != std::floor(v) || v < minimum || v > maximum)
      fail(node, fmt::format("{}: expected a whole number from {} to {}", where, minimum, maximum));
    return static_cast<int>(v);
  }
  template <typename T, typename Parse>
  std::array<T, 3> triple(const YAML::Node& node, Parse parse, const std::string& where) const {
    if (!node.IsSequence() || node.size() != 3)
      fail(node, fmt::format("{}: expected [LL, LL128, Simple]", where));
    std::array<T, 3> out{};
    for (std::size_t i = 0; i < 3; ++i) out[i] = scalar<T>(node[i], parse, where);
    return out;
  }
};

sim::Seconds time_of(const std::string& s) { return sim::parse_time(s); }
sim::BytesPerSec rate_of(const std::string& s) { return sim::parse_rate(s); }
sim::Bytes size_of(const std::string& s) { return sim::parse_size(s); }

ArchParams read_arch(const Reader& r, const YAML::Node& n, const std::string& where) {
  r.only_keys(n, {"channels", "nvls_channels", "nvls_efficiency", "ll_max", "ll128_per_channel",
                  "link_efficiency", "shm_bandwidth", "launch_overhead", "nvls_step_overhead", "channel_bw",
                  "p2p_channel_bw", "nvlink_step_extra"},
              where);
  ArchParams a;
  a.channels = r.count(r.need(n, "channels", where), where + ".channels", 1, 64);
  a.nvls_channels = r.count(r.need(n, "nvls_channels", where), where + ".nvls_channels", 1, 1024);
  a.nvls_efficiency = r.number(r.need(n, "nvls_efficiency", where), where + ".nvls_efficiency");
  a.ll_max = r.triple<sim::BytesPerSec>(r.need(n, "ll_max", where), rate_of, where + ".ll_max");
  a.ll128_per_channel = r.scalar<sim::BytesPerSec>(r.need(n, "ll128_per_channel", where), rate_of,
                                                   where + ".ll128_per_channel");
  if (n["shm_bandwidth"])
    a.shm_bandwidth = r.scalar<sim::BytesPerSec>(n["shm_bandwidth"], rate_of, where + ".shm_bandwidth");
  if (n["channel_bw"])
    a.channel_bw = r.scalar<sim::BytesPerSec>(n["channel_bw"], rate_of, where + ".channel_bw");
  if (n["p2p_channel_bw"])
    a.p2p_channel_bw = r.scalar<sim::BytesPerSec>(n["p2p_channel_bw"], rate_of, where + ".p2p_channel_bw");
  if (n["nvlink_step_extra"]) {
    a.nvlink_step_extra = r.scalar<sim::Seconds>(n["nvlink_step_extra"], time_of, where + ".nvlink_step_extra");
    if (a.nvlink_step_extra.count() < 0.0 || a.nvlink_step_extra.count() > 1e-3)
      r.fail(n["nvlink_step_extra"], where + ".nvlink_step_extra: expected 0 to 1ms");
  }
  if (n["nvls_step_overhead"]) {
    a.nvls_step_overhead = r.scalar<sim::Seconds>(n["nvls_step_overhead"], time_of, where + ".nvls_step_overhead");
    if (a.nvls_step_overhead.count() < 0.0 || a.nvls_step_overhead.count() > 1e-3)
      r.fail(n["nvls_step_overhead"], where + ".nvls_step_overhead: expected 0 to 1ms");
  }
  if (n["launch_overhead"]) {
    a.launch_overhead = r.scalar<sim::Seconds>(n["launch_overhead"], time_of, where + ".launch_overhead");
    if (a.launch_overhead.count() < 0.0 || a.launch_overhead.count() > 1e-2)
      r.fail(n["launch_overhead"], where + ".launch_overhead: expected 0 to 10ms");
  }
  const auto eff = r.need(n, "link_efficiency", where);
  if (!eff.IsMap()) r.fail(eff, where + ".link_efficiency: expected a mapping tier: fraction");
  for (const auto& kv : eff) {
    const auto tier = topo::tier_from_string(kv.first.as<std::string>());
    if (!tier) r.fail(kv.first, fmt::format("{}.link_efficiency: unknown tier '{}'", where, kv.first.as<std::string>()));
    const double e = r.number(kv.second, where + ".link_efficiency");
    if (!(e > 0.0 && e <= 1.0)) r.fail(kv.second, where + ".link_efficiency: expected a fraction in (0, 1]");
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

sim::Seconds Params::base_latency(Algorithm a, Protocol p) const {
  return latency.at(a).base[static_cast<int>(p)];
}

sim::Seconds Params::step_latency(Algorithm a, Protocol p, TierClass c) const {
  return latency.at(a).step[static_cast<int>(c)][static_cast<int>(p)];
}

Params parse_params(std::string_view yaml_text, const std::string& source) {
  const Reader r{source};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw InputError(source, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  r.only_keys(root, {"protocols", "ring_simple_chunk_steps", "nvls_chunk", "p2p_chunk", "latency",
                     "architectures", "host_launch"}, "parameters");
  Params p;
  p.source = source;
  const auto protos = r.need(root, "protocols", "parameters");
  r.only_keys(protos, {"ll", "ll128", "simple"}, "protocols");
  for (Protocol proto : all_protocols()) {
    const std::string where = fmt::format("protocols.{}", to_string(proto));
    const auto n = r.need(protos, std::string(to_string(proto)).c_str(), "protocols");
    r.only_keys(n, {"payload", "step", "slots", "overhead"}, where);
    ProtocolParams& pp = p.protocols[static_cast<int>(proto)];
    pp.payload = r.number(r.need(n, "payload", where), where + ".payload");
    pp.step = r.scalar<sim::Bytes>(r.need(n, "step", where), size_of, where + ".step");
    pp.slots = r.count(r.need(n, "slots", where), where + ".slots", 1, 1024);
    if (!(pp.payload > 0.0 && pp.payload <= 1.0)) r.fail(n["payload"], where + ".payload: expected a fraction in (0, 1]");
    if (pp.step.count() < 1.0) r.fail(n["step"], where + ".step: expected at least 1B");
    if (n["overhead"]) {
      pp.overhead = r.scalar<sim::Seconds>(n["overhead"], time_of, where + ".overhead");
      if (pp.overhead.count() < 0.0 || pp.overhead.count() > 1e-3) r.fail(n["overhead"], where + ".overhead: expected 0 to 1ms");
    }
  }
  if (root["host_launch"]) {
    p.host_launch = r.scalar<sim::Seconds>(root["host_launch"], time_of, "host_launch");
    if (p.host_launch.count() < 0.0 || p.host_launch.count() > 1e-3) r.fail(root["host_launch"], "host_launch: expected 0 to 1ms");
  }
  p.ring_simple_chunk_steps =
      r.count(r.need(root, "ring_simple_chunk_steps", "parameters"), "ring_simple_chunk_steps", 1, 1024);
  p.nvls_chunk = r.scalar<sim::Bytes>(r.need(root, "nvls_chunk", "parameters"), size_of, "nvls_chunk");
  const auto p2p = r.need(root, "p2p_chunk", "parameters");
  r.only_keys(p2p, {"nvlink", "pcie", "net"}, "p2p_chunk");
  p.p2p_chunk[0] = r.scalar<sim::Bytes>(r.need(p2p, "nvlink", "p2p_chunk"), size_of, "p2p_chunk.nvlink");
  p.p2p_chunk[1] = r.scalar<sim::Bytes>(r.need(p2p, "pcie", "p2p_chunk"), size_of, "p2p_chunk.pcie");
  p.p2p_chunk[2] = r.scalar<sim::Bytes>(r.need(p2p, "net", "p2p_chunk"), size_of, "p2p_chunk.net");
  for (auto c : p.p2p_chunk)
    if (c.count() < 1.0) r.fail(p2p, "p2p_chunk: expected sizes of at least 1B");
  if (p.nvls_chunk.count() < 1.0) r.fail(root["nvls_chunk"], "nvls_chunk: expected at least 1B");
  const auto lat = r.need(root, "latency", "parameters");
  if (!lat.IsMap()) r.fail(lat, "latency: expected a mapping algorithm: {base, nvlink, pcie, net}");
  for (const auto& kv : lat) {
    const auto name = kv.first.as<std::string>();
    const auto algo = parse_algorithm(name);
    if (!algo) r.fail(kv.first, fmt::format("latency: unknown algorithm '{}'", name));
    const std::string where = "latency." + name;
    r.only_keys(kv.second, {"base", "nvlink", "pcie", "net"}, where);
    LatencyRow row;
    row.base = r.triple<sim::Seconds>(r.need(kv.second, "base", where), time_of, where + ".base");
    row.step[0] = r.triple<sim::Seconds>(r.need(kv.second, "nvlink", where), time_of, where + ".nvlink");
    row.step[1] = r.triple<sim::Seconds>(r.need(kv.second, "pcie", where), time_of, where + ".pcie");
    row.step[2] = r.triple<sim::Seconds>(r.need(kv.second, "net", where), time_of, where + ".net");
    p.latency[*algo] = row;
  }
  for (Algorithm a : all_algorithms())
    if (!p.latency.count(a)) r.fail(lat, fmt::format("latency: missing algorithm '{}'", to_string(a)));
  const auto archs = r.need(root, "architectures", "parameters");
  if (!archs.IsMap()) r.fail(archs, "architectures: expected a mapping name: {...}");
  for (const auto& kv : archs) {
    const auto name = kv.first.as<std::string>();
    p.architectures[name] = read_arch(r, kv.second, "architectures." + name);
  }
  if (!p.architectures.count("default")) r.fail(archs, "architectures: missing 'default'");
  return p;
}

const Params& default_params() {
  static const Params params = parse_params(kDefaultParamsYaml, "models/params.yaml");
  return params;
}

Params load_params(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, 0, "cannot open the parameter file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_params(text.str(), path);
}

}  // namespace wiresim::models
