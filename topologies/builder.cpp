#include "topologies/builder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <deque>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "input/document.h"
#include "input/input_error.h"
#include "input/keys.h"
#include "input/units.h"
#include "topologies/fabric.h"
#include "topologies/plausibility.h"

namespace wiresim::topo {
namespace {

using input::index_path;
using input::join_path;
using input::Position;
using input::suggest;
using input::Value;

constexpr std::array<std::string_view, 6> kTopKeys = {"name",  "description", "parameters",
                                                      "node",  "nodes",       "fabric"};
constexpr std::array<std::string_view, 3> kNodeKeys = {"devices", "links", "nic_binding"};
constexpr std::array<std::string_view, 2> kBindingKeys = {"gpu", "nic"};
constexpr std::array<std::string_view, 11> kDeviceKeys = {"kind",      "count",       "model",        "arch",
                                                          "memory_bandwidth", "memory", "multicast", "host_bridge",
                                                          "peer_to_peer", "read", "vendor"};
constexpr std::array<std::string_view, 3> kCpuVendors = {"intel", "amd", "arm"};
constexpr std::array<std::string_view, 8> kLinkKeys = {
    "from", "to", "tier", "count", "bandwidth", "link_bandwidth", "latency", "pattern"};
// The names of topo::kGpuArchs, for the suggestion in an error.
constexpr auto kArchs = [] {
  std::array<std::string_view, kGpuArchs.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = kGpuArchs[i].name;
  return names;
}();
constexpr std::array<std::string_view, 7> kKinds = {"gpu", "nvswitch", "pcie_switch",
                                                    "cpu", "nic",      "switch", "nvme"};
constexpr std::array<std::string_view, 8> kTiers = {"nvlink", "pcie", "upi", "xgmi",
                                                    "c2c",    "ib",   "roce", "eth"};

struct Group {
  std::string name;
  Device proto;
  long count = 1;
  long first = 0;  // local index of its first device within the node
  Position at;
};

// A reference to devices of one group: "gpu", "gpu[3]", "gpu[0:4]".
struct Ref {
  std::size_t group = 0;
  long begin = 0, end = 0;
  bool operator==(const Ref&) const = default;
};

struct LocalLink {
  long a = 0, b = 0;
  Link link;  // from/to unset
  Position at;
};

struct Template {
  std::vector<Group> groups;
  std::vector<LocalLink> links;
  std::map<long, long> nic_of;   // nic_binding: local GPU index -> local NIC index
  long device_count = 0;
  std::vector<std::string> warnings;   // plausibility.h
};

// A PCIe rate faster than its generation: a warning at the value that gave it.
void check_pcie_rate(const Value& rate, sim::BytesPerSec per_link, const Group& from, const Group& to,
                     const std::string& path, Template& t) {
  const std::string_view arch = from.proto.kind == DeviceKind::gpu ? std::string_view(from.proto.arch)
                                : to.proto.kind == DeviceKind::gpu ? std::string_view(to.proto.arch)
                                                                   : std::string_view();
  if (const auto w = pcie_rate_warning(per_link, arch))
    t.warnings.push_back(fmt::format("{}: warning: {}: {}", input::where(rate.at), path, *w));
}

Group parse_group(const Value::Entry& e, const std::string& path) {
  Group g;
  g.name = e.key;
  g.at = e.key_at;
  const bool ok_name = !e.key.empty() && std::isalpha(static_cast<unsigned char>(e.key[0])) &&
                       std::all_of(e.key.begin(), e.key.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       }) && !std::isdigit(static_cast<unsigned char>(e.key.back()));
  if (!ok_name)
    fail(e.key_at, fmt::format("{}: expected a device group name of letters, digits and _ that "
                               "does not end in a digit (instances are numbered: gpu0, gpu1, ...)",
                               path));
  const Value& v = e.value;
  if (v.kind == Value::Kind::scalar) {  // shorthand "cpu: 2": the name is the kind
    const auto kind = device_kind_from_string(e.key);
    if (!kind) fail(v, fmt::format("{}: the short form 'name: count' needs a name that is a kind "
                                   "({}); write {{kind: ..., count: ...}}", path, suggest(e.key, kKinds)));
    g.proto.kind = *kind;
    g.count = as_count(v, path, 0);
  } else {
    require_map(v, path);
    check_keys(v, kDeviceKeys, path);
    const Value* kind_value = find(v, "kind");
    const std::string kind_text = kind_value ? as_string(*kind_value, join_path(path, "kind")) : e.key;
    const auto kind = device_kind_from_string(kind_text);
    if (!kind) {
      if (!kind_value) fail(v, fmt::format("{}: missing 'kind' ({})", path, suggest(kind_text, kKinds)));
      fail(*kind_value, fmt::format("{}.kind: unknown kind '{}'; {}", path, kind_text,
                                    suggest(kind_text, kKinds)));
    }
    g.proto.kind = *kind;
    if (const Value* c = find(v, "count")) g.count = as_count(*c, join_path(path, "count"), 0);
    const bool gpu = *kind == DeviceKind::gpu;
    auto only_for = [&](std::string_view key, bool allowed, std::string_view what) {
      const Value* x = find(v, key);
      if (x && !allowed)
        fail(*x, fmt::format("{}.{}: applies to {} only, not to a {}", path, key, what, kind_text));
      return x;
    };
    only_for("model", gpu, "gpu devices");
    only_for("arch", gpu, "gpu devices");
    only_for("memory_bandwidth", gpu, "gpu devices");
    if (const Value* m = only_for("memory", gpu, "gpu devices"))
      g.proto.memory = as_size(*m, join_path(path, "memory"));
    if (const Value* p = only_for("peer_to_peer", gpu, "gpu devices"))
      g.proto.peer_to_peer = as_bool(*p, join_path(path, "peer_to_peer"));
    if (gpu) {
      g.proto.model = as_string(require(v, "model", path), join_path(path, "model"));
      const Value& arch = require(v, "arch", path);
      g.proto.arch = as_string(arch, join_path(path, "arch"));
      if (std::find(kArchs.begin(), kArchs.end(), g.proto.arch) == kArchs.end())
        fail(arch, fmt::format("{}.arch: unknown architecture '{}'; {}", path, g.proto.arch,
                               suggest(g.proto.arch, kArchs)));
      g.proto.memory_bandwidth = as_rate(require(v, "memory_bandwidth", path),
                                         join_path(path, "memory_bandwidth"));
    }
    if (const Value* m = only_for("multicast", *kind == DeviceKind::nvswitch ||
                                  *kind == DeviceKind::network_switch, "switches"))
      g.proto.multicast = as_bool(*m, join_path(path, "multicast"));
    if (const Value* h = only_for("host_bridge", *kind == DeviceKind::pcie_switch, "pcie_switch devices"))
      g.proto.host_bridge = as_bool(*h, join_path(path, "host_bridge"));
    if (const Value* r = only_for("read", *kind == DeviceKind::nvme, "nvme devices"))
      g.proto.read_bandwidth = as_rate(*r, join_path(path, "read"));
    if (const Value* m = only_for("vendor", *kind == DeviceKind::cpu, "cpu devices")) {
      g.proto.vendor = as_string(*m, join_path(path, "vendor"));
      if (std::find(kCpuVendors.begin(), kCpuVendors.end(), g.proto.vendor) == kCpuVendors.end())
        fail(*m, fmt::format("{}.vendor: unknown CPU vendor '{}'; {}", path, g.proto.vendor,
                             suggest(g.proto.vendor, kCpuVendors)));
    }
  }
  return g;
}

Ref parse_ref(const Value& v, const std::string& path, const std::vector<Group>& groups) {
  const std::string text = as_string(v, path);
  const auto open = text.find('[');
  const std::string name = text.substr(0, open);
  auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.name == name; });
  if (it == groups.end()) {
    std::vector<std::string_view> known;
    for (const auto& g : groups) known.push_back(g.name);
    fail(v, fmt::format("{}: no device group '{}'; {}", path, name, suggest(name, known)));
  }
  Ref r{static_cast<std::size_t>(it - groups.begin()), 0, it->count};
  if (open == std::string::npos) return r;
  const auto bad = [&]() {
    fail(v, fmt::format("{}: expected '{}', '{}[i]' or '{}[first:end]' with 0 <= i < {}, got '{}'",
                        path, name, name, name, it->count, text));
  };
  if (text.back() != ']') bad();
  const std::string inside = text.substr(open + 1, text.size() - open - 2);
  const auto colon = inside.find(':');
  auto number = [&](const std::string& s) {
    Value tmp = v;
    tmp.text = s;
    if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit)) bad();
    return as_count(tmp, path, 0);
  };
  if (colon == std::string::npos) {
    r.begin = number(inside);
    r.end = r.begin + 1;
  } else {
    r.begin = number(inside.substr(0, colon));
    r.end = number(inside.substr(colon + 1));
  }
  if (r.begin >= r.end || r.end > it->count) bad();
  return r;
}

void parse_links(const Value& links, const std::string& path, Template& t) {
  require_sequence(links, path);
  for (std::size_t i = 0; i < links.items.size(); ++i) {
    const Value& l = links.items[i];
    const std::string p = index_path(path, i);
    require_map(l, p);
    check_keys(l, kLinkKeys, p);
    const Ref from = parse_ref(require(l, "from", p), join_path(p, "from"), t.groups);
    const Ref to = parse_ref(require(l, "to", p), join_path(p, "to"), t.groups);
    const Value& tier_value = require(l, "tier", p);
    const std::string tier_text = as_string(tier_value, join_path(p, "tier"));
    const auto tier = tier_from_string(tier_text);
    if (!tier) fail(tier_value, fmt::format("{}.tier: unknown tier '{}'; {}", p, tier_text,
                                            suggest(tier_text, kTiers)));
    if (is_network_tier(*tier))
      fail(tier_value, fmt::format("{}.tier: '{}' is a network tier; links between nodes come "
                                   "from 'fabric:', expected one of nvlink, pcie, upi, xgmi, c2c",
                                   p, tier_text));
    Link link;
    link.tier = *tier;
    if (const Value* c = find(l, "count")) link.count = static_cast<int>(as_count(*c, join_path(p, "count"), 1));
    const Value* bw = find(l, "bandwidth");
    const Value* per = find(l, "link_bandwidth");
    if (bw && per) fail(*per, fmt::format("{}: give 'bandwidth' (the bundle) or 'link_bandwidth' "
                                          "(each of its count links), not both", p));
    if (!bw && !per) fail(l, fmt::format("{}: missing 'bandwidth' (per direction, e.g. 450GB/s)", p));
    link.bandwidth = bw ? as_rate(*bw, join_path(p, "bandwidth"))
                        : as_rate(*per, join_path(p, "link_bandwidth")) * link.count;
    if (link.tier == Tier::pcie)
      check_pcie_rate(bw ? *bw : *per, link.bandwidth / link.count, t.groups[from.group], t.groups[to.group],
                      join_path(p, bw ? "bandwidth" : "link_bandwidth"), t);
    link.latency = as_time(require(l, "latency", p), join_path(p, "latency"));
    std::string pattern = "block";
    const Value* pattern_value = find(l, "pattern");
    if (pattern_value) pattern = as_string(*pattern_value, join_path(p, "pattern"));
    const long fa = t.groups[from.group].first, tb = t.groups[to.group].first;
    const long nf = from.end - from.begin, nt = to.end - to.begin;
    auto add = [&](long a, long b) {
      if (a == b) fail(l, fmt::format("{}: links a device to itself ({}{})", p,
                                      t.groups[from.group].name, a - fa));
      t.links.push_back({a, b, link, l.at});
    };
    if ((pattern == "all" || pattern == "mesh") && nf * nt > 10'000'000)
      fail(l, fmt::format("{}: pattern {} over {} x {} devices makes too many links; expected "
                          "fewer than 10 million per entry", p, pattern, nf, nt));
    if (pattern == "block") {
      // Equal sizes pair one to one; otherwise each device of the smaller side serves a
      // consecutive block of the larger (8 gpu to 4 pcie_switch: gpu0,1 -> pcie_switch0, ...).
      if (nf == 0 || nt == 0) continue;
      if (nf % nt != 0 && nt % nf != 0)
        fail(l, fmt::format("{}: cannot pair {} '{}' with {} '{}' in blocks; expected counts where "
                            "one divides the other, or pattern: all", p, nf,
                            t.groups[from.group].name, nt, t.groups[to.group].name));
      for (long k = 0; k < std::max(nf, nt); ++k)
        add(fa + from.begin + (nf >= nt ? k : k / (nt / nf)),
            tb + to.begin + (nt >= nf ? k : k / (nf / nt)));
    } else if (pattern == "all") {
      for (long a = from.begin; a < from.end; ++a)
        for (long b = to.begin; b < to.end; ++b) add(fa + a, tb + b);
    } else if (pattern == "mesh") {
      if (!(from == to))
        fail(l, fmt::format("{}: pattern mesh joins every pair of one set of devices; expected "
                            "'from' and 'to' to name the same devices", p));
      for (long a = from.begin; a < from.end; ++a)
        for (long b = a + 1; b < from.end; ++b) add(fa + a, fa + b);
    } else {
      static constexpr std::array<std::string_view, 3> kPatterns = {"block", "all", "mesh"};
      fail(*pattern_value, fmt::format("{}.pattern: unknown '{}'; {}", p, pattern,
                                       suggest(pattern, kPatterns)));
    }
  }
  // Two links between the same pair are almost always a copy-paste slip.
  std::map<std::pair<long, long>, const LocalLink*> seen;
  for (const auto& l : t.links) {
    const auto key = std::minmax(l.a, l.b);
    auto [it, fresh] = seen.emplace(key, &l);
    if (!fresh)
      fail(l.at, fmt::format("{}: a second link between the same two devices (the first is at "
                             "line {}); expected one link per pair, with count for bonded links",
                             path, it->second->at.line));
  }
}

// nic_binding: [{gpu: "gpu[0:4]", nic: "nic[4:8]"}, ...] pins each GPU to one NIC, in order
// (as a launcher pins each local rank with its own NCCL_IB_HCA); GPUs not named use the
// nearest NIC by path.
void parse_nic_binding(const Value& list, const std::string& path, Template& t) {
  require_sequence(list, path);
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const Value& b = list.items[i];
    const std::string p = index_path(path, i);
    require_map(b, p);
    check_keys(b, kBindingKeys, p);
    const Value& gpu_value = require(b, "gpu", p);
    const Value& nic_value = require(b, "nic", p);
    const Ref gpu = parse_ref(gpu_value, join_path(p, "gpu"), t.groups);
    const Ref nic = parse_ref(nic_value, join_path(p, "nic"), t.groups);
    const Group& gg = t.groups[gpu.group];
    const Group& ng = t.groups[nic.group];
    if (gg.proto.kind != DeviceKind::gpu)
      fail(gpu_value, fmt::format("{}.gpu: expected gpu devices, got the {} group '{}'", p,
                                  to_string(gg.proto.kind), gg.name));
    if (ng.proto.kind != DeviceKind::nic)
      fail(nic_value, fmt::format("{}.nic: expected nic devices, got the {} group '{}'", p,
                                  to_string(ng.proto.kind), ng.name));
    if (gpu.end - gpu.begin != nic.end - nic.begin)
      fail(b, fmt::format("{}: {} GPUs and {} NICs; expected as many NICs as GPUs, paired in order", p,
                          gpu.end - gpu.begin, nic.end - nic.begin));
    for (long k = 0; k < gpu.end - gpu.begin; ++k)
      if (!t.nic_of.emplace(gg.first + gpu.begin + k, ng.first + nic.begin + k).second)
        fail(gpu_value, fmt::format("{}.gpu: {}{} is bound to a NIC twice; expected one NIC per GPU", p,
                                    gg.name, gpu.begin + k));
  }
}

Template parse_node(const Value& node, const std::string& path) {
  require_map(node, path);
  check_keys(node, kNodeKeys, path);
  Template t;
  const Value& devices = require(node, "devices", path);
  require_map(devices, join_path(path, "devices"));
  for (const auto& e : devices.entries) {
    Group g = parse_group(e, join_path(join_path(path, "devices"), e.key));
    g.first = t.device_count;
    t.device_count += g.count;
    t.groups.push_back(std::move(g));
  }
  if (const Value* links = find(node, "links")) parse_links(*links, join_path(path, "links"), t);
  if (const Value* b = find(node, "nic_binding")) parse_nic_binding(*b, join_path(path, "nic_binding"), t);
  return t;
}

// Socket of each local device: the CPU it reaches first through PCIe / C2C links.
std::vector<int> derive_sockets(const Template& t) {
  std::vector<int> socket(t.device_count, -1), kind_of(t.device_count);
  std::vector<std::vector<long>> adj(t.device_count);
  std::deque<long> queue;
  int cpus = 0;
  for (const auto& g : t.groups)
    for (long i = 0; i < g.count; ++i) {
      kind_of[g.first + i] = static_cast<int>(g.proto.kind);
      if (g.proto.kind == DeviceKind::cpu) {
        socket[g.first + i] = cpus++;
        queue.push_back(g.first + i);
      }
    }
  for (const auto& l : t.links)
    if (l.link.tier == Tier::pcie || l.link.tier == Tier::c2c) {
      adj[l.a].push_back(l.b);
      adj[l.b].push_back(l.a);
    }
  while (!queue.empty()) {
    const long u = queue.front();
    queue.pop_front();
    const auto k = static_cast<DeviceKind>(kind_of[u]);
    if (socket[u] >= 0 && k != DeviceKind::cpu && k != DeviceKind::pcie_switch) continue;
    for (long v : adj[u])
      if (socket[v] < 0) {
        socket[v] = socket[u];
        queue.push_back(v);
      }
  }
  return socket;
}

long find_root(std::vector<long>& parent, long x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Every GPU must reach every other, or a collective over all of them cannot run.
void check_gpus_connected(const LinkGraph& g, const std::vector<Position>& declared_at) {
  std::vector<long> parent(g.device_count());
  std::iota(parent.begin(), parent.end(), 0);
  for (LinkId id = 0; id < g.link_count(); ++id)
    parent[find_root(parent, g.link(id).from)] = find_root(parent, g.link(id).to);
  const auto& gpus = g.gpus();
  for (DeviceId gpu : gpus)
    if (find_root(parent, gpu) != find_root(parent, gpus.front()))
      fail(declared_at[gpu], fmt::format("{} cannot reach {}: no chain of links joins them; "
                                         "expected every GPU to reach every other",
                                         g.device(gpu).name, g.device(gpus.front()).name));
}

LinkGraph build(const Value& doc, const std::string& path) {
  check_keys(doc, kTopKeys, "");
  LinkGraph graph;
  graph.source = path;
  if (const Value* n = find(doc, "name")) graph.name = as_string(*n, "name");
  else graph.name = std::filesystem::path(path).stem().string();
  if (const Value* d = find(doc, "description")) graph.description = as_string(*d, "description");
  if (const Value* p = find(doc, "parameters"))
    for (const auto& e : p->entries) graph.parameters[e.key] = e.value.text;

  const Template t = parse_node(require(doc, "node", ""), "node");
  graph.warnings = t.warnings;
  const long nodes = find(doc, "nodes") ? as_count(*find(doc, "nodes"), "nodes", 1, 100'000) : 1;
  const Value* fabric_value = find(doc, "fabric");
  std::optional<FabricSpec> fabric;
  std::optional<std::size_t> nic_group;
  if (fabric_value) {
    fabric = parse_fabric(*fabric_value, "fabric", graph.warnings);
    for (std::size_t i = 0; i < t.groups.size(); ++i)
      if (t.groups[i].name == fabric->nic_group) nic_group = i;
    if (!nic_group || t.groups[*nic_group].proto.kind != DeviceKind::nic || t.groups[*nic_group].count == 0)
      fail(fabric->nic_group_at, fmt::format("fabric.nic: expected the name of a nic device group "
                                             "of the node, got '{}'", fabric->nic_group));
  } else if (nodes > 1) {
    fail(*find(doc, "nodes"), "nodes: more than one node needs a 'fabric:' to join them");
  }
  const bool prefixed = nodes > 1 || fabric.has_value();
  const std::vector<int> sockets = derive_sockets(t);
  const long rails = fabric ? fabric_rails(*fabric, t.groups[*nic_group].count) : 0;
  const bool by_rail = fabric && fabric->layout == FabricSpec::Layout::rail_optimized;
  // Routes number devices in 24 bits; refuse sizes that would not fit rather than crash.
  if (nodes * t.device_count > 8'000'000 || nodes * static_cast<long>(t.links.size()) > 50'000'000)
    fail(find(doc, "nodes") ? *find(doc, "nodes") : doc,
         fmt::format("nodes: {} nodes of {} devices and {} links is beyond what wiresim builds "
                     "(8 million devices, 50 million links)", nodes, t.device_count, t.links.size()));

  std::vector<Position> declared_at;
  std::vector<std::vector<DeviceId>> nics(nodes);
  for (long n = 0; n < nodes; ++n) {
    const DeviceId base = static_cast<DeviceId>(graph.device_count());
    const std::string prefix = prefixed ? fmt::format("node{}.", n) : "";
    for (std::size_t gi = 0; gi < t.groups.size(); ++gi) {
      const Group& g = t.groups[gi];
      for (long i = 0; i < g.count; ++i) {
        Device d = g.proto;
        d.name = fmt::format("{}{}{}", prefix, g.name, i);
        d.node = static_cast<int>(n);
        d.socket = sockets[g.first + i];
        if (nic_group && gi == *nic_group) d.rail = by_rail ? static_cast<int>(i % rails) : -1;
        const DeviceId id = graph.add_device(std::move(d));
        if (nic_group && gi == *nic_group) nics[n].push_back(id);
        declared_at.push_back(g.at);
      }
    }
    for (const auto& [gpu, nic] : t.nic_of) graph.bind_nic(base + static_cast<DeviceId>(gpu), base + static_cast<DeviceId>(nic));
    for (const auto& l : t.links) {
      Link link = l.link;
      link.from = base + static_cast<DeviceId>(l.a);
      link.to = base + static_cast<DeviceId>(l.b);
      graph.add_duplex(link);
    }
  }
  if (graph.gpus().empty()) fail(doc.at, "node: expected at least one gpu device");
  if (fabric) build_fabric(*fabric, graph, nics);
  declared_at.resize(graph.device_count(), fabric_value ? fabric_value->at : doc.at);
  check_gpus_connected(graph, declared_at);
  return graph;
}

}  // namespace

LinkGraph load_topology(const std::string& path, const Overrides& overrides) {
  return build(input::read_document(path, overrides), path);
}

std::map<std::string, std::string> declared_parameters(const std::string& path) {
  std::map<std::string, std::string> out;
  const Value doc = input::read_document(path, {});
  if (const Value* p = find(doc, "parameters"))
    for (const auto& e : p->entries) out[e.key] = e.value.text;
  return out;
}

LinkGraph load_topology_text(const std::string& yaml, const std::string& file_name,
                             const Overrides& overrides) {
  return build(input::read_document_text(yaml, file_name, overrides), file_name);
}

Overrides parse_overrides(const std::vector<std::string>& settings) {
  Overrides out;
  for (const auto& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw input::InputError(fmt::format("--set {}: expected name=value, e.g. --set nodes=64", s));
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

std::vector<sim::LinkSpec> link_specs(const LinkGraph& graph) {
  std::vector<sim::LinkSpec> specs;
  specs.reserve(graph.link_count());
  for (LinkId id = 0; id < graph.link_count(); ++id) {
    const Link& l = graph.link(id);
    specs.push_back({l.bandwidth, l.latency, graph.link_label(id)});
  }
  return specs;
}

}  // namespace wiresim::topo
