#include "topologies/describe.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace wiresim::topo {
namespace {

constexpr DeviceKind kKinds[] = {DeviceKind::gpu, DeviceKind::nvswitch, DeviceKind::pcie_switch,
                                 DeviceKind::cpu, DeviceKind::nic, DeviceKind::network_switch,
                                 DeviceKind::nvme};
constexpr Tier kTiers[] = {Tier::nvlink, Tier::pcie, Tier::upi, Tier::xgmi,
                           Tier::c2c,    Tier::ib,   Tier::roce, Tier::eth};

// nvidia-smi's legend, plus the labels wiresim adds.
constexpr const char* kLegend =
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "  XGMI = Connection traversing an xGMI (Infinity Fabric) link (wiresim; rocm-smi's name)\n"
    "  NET  = Connection between nodes, through the network (wiresim)\n";

std::string gpu_bandwidth(const LinkGraph& g, DeviceId gpu) {
  std::map<Tier, std::pair<double, int>> per_tier;
  for (LinkId id : g.out_links(gpu)) {
    auto& [bw, count] = per_tier[g.link(id).tier];
    bw += g.link(id).bandwidth.count();
    count += g.link(id).count;
  }
  std::string out;
  for (const auto& [tier, v] : per_tier) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", to_string(tier), sim::format_rate(sim::BytesPerSec{v.first}));
    if (tier == Tier::nvlink || tier == Tier::xgmi) out += fmt::format(" ({} links)", v.second);
  }
  return out.empty() ? "no links" : out;
}

// Distinct values in first-seen order, with how often each occurs.
template <typename T>
std::vector<std::pair<T, int>> tally(const std::vector<T>& values) {
  std::vector<std::pair<T, int>> out;
  for (const auto& v : values) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == v; });
    if (it == out.end()) out.emplace_back(v, 1);
    else ++it->second;
  }
  return out;
}

std::string plural(int n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

std::string topo_summary(const LinkGraph& g, const Router& router) {
  std::string out = g.name + (g.description.empty() ? "" : ": " + g.description) + "\n";
  out += fmt::format("source: {}\n\ndevices ({})\n", g.source, g.device_count());
  std::map<DeviceKind, int> kinds;
  int nodes = 0;
  std::vector<std::string> gpu_kinds;
  for (DeviceId d = 0; d < g.device_count(); ++d) {
    const Device& dev = g.device(d);
    ++kinds[dev.kind];
    nodes = std::max(nodes, dev.node + 1);
    if (dev.kind == DeviceKind::gpu)
      gpu_kinds.push_back(fmt::format("{} ({}, memory {}{})", dev.model, dev.arch,
                                      dev.memory.count() > 0 ? fmt::format("{:.0f} GB at ", dev.memory.count() / 1e9) : "",
                                      sim::format_rate(dev.memory_bandwidth)));
  }
  for (DeviceKind k : kKinds) {
    if (!kinds.count(k)) continue;
    std::string note;
    if (k == DeviceKind::gpu)
      for (const auto& [what, n] : tally(gpu_kinds)) note += (note.empty() ? "" : "; ") + what;
    if (k == DeviceKind::nvswitch || k == DeviceKind::network_switch) {
      int multicast = 0;
      for (DeviceId d = 0; d < g.device_count(); ++d)
        multicast += g.device(d).kind == k && g.device(d).multicast;
      if (multicast == kinds[k])
        note = k == DeviceKind::nvswitch ? "in-switch reduction and multicast (NVLS)" : "in-network reduction (SHARP)";
      else if (multicast) note = fmt::format("{} with in-switch reduction and multicast", multicast);
    }
    if (k == DeviceKind::nvme) {
      std::vector<std::string> reads;
      for (DeviceId d = 0; d < g.device_count(); ++d)
        if (g.device(d).kind == k && g.device(d).read_bandwidth.count() > 0.0)
          reads.push_back("read " + sim::format_rate(g.device(d).read_bandwidth) + " per drive");
      for (const auto& [what, n] : tally(reads)) note += (note.empty() ? "" : "; ") + what;
    }
    out += fmt::format("  {:<13}{:>6}{}\n", to_string(k), kinds[k], note.empty() ? "" : "  " + note);
  }
  out += fmt::format("nodes {}\n\nlinks (directed: a full-duplex cable is two)\n", nodes);
  std::map<Tier, int> tiers;
  for (LinkId id = 0; id < g.link_count(); ++id) ++tiers[g.link(id).tier];
  for (Tier t : kTiers)
    if (tiers.count(t)) out += fmt::format("  {:<13}{:>6}\n", to_string(t), tiers[t]);

  out += "\nper-GPU bandwidth per direction, by tier\n";
  std::vector<std::string> signatures;
  for (DeviceId gpu : g.gpus()) signatures.push_back(gpu_bandwidth(g, gpu));
  for (const auto& [sig, n] : tally(signatures)) out += fmt::format("  {}: {}\n", plural(n, "GPU"), sig);

  std::vector<int> sizes;
  for (const auto& [domain, n] : tally(router.nvlink_domain())) sizes.push_back(n);
  out += "\nNVLink domains:";
  for (const auto& [size, n] : tally(sizes)) out += fmt::format(" {} of {};", n, plural(size, "GPU"));
  out.back() = '\n';

  out += "\nNICs per GPU (nearest NICs; node 0)\n";
  std::vector<std::string> lines;
  for (DeviceId gpu : g.gpus()) {
    if (g.device(gpu).node != 0) break;
    const auto nics = router.nearest_nics(gpu);
    std::string names;
    for (DeviceId nic : nics) names += (names.empty() ? "" : ", ") + g.device(nic).name;
    out += fmt::format("  {} -> {}\n", g.device(gpu).name, nics.empty() ? "none" : names);
  }
  return out;
}

std::string topo_matrix(const LinkGraph& g, const Router& router, const MatrixOptions& options) {
  std::vector<DeviceId> gpus, nics;
  int nodes = 0;
  for (DeviceId d = 0; d < g.device_count(); ++d) nodes = std::max(nodes, g.device(d).node + 1);
  const auto shown = [&](DeviceId d) { return g.device(d).node < options.max_nodes; };
  for (DeviceId gpu : g.gpus())
    if (shown(gpu)) gpus.push_back(gpu);
  for (DeviceId d = 0; d < g.device_count(); ++d)
    if (g.device(d).kind == DeviceKind::nic && g.device(d).node >= 0 && shown(d)) nics.push_back(d);
  std::vector<DeviceId> all = gpus;
  all.insert(all.end(), nics.begin(), nics.end());
  const auto column = [&](std::size_t i) {
    return i < gpus.size() ? fmt::format("GPU{}", i) : fmt::format("NIC{}", i - gpus.size());
  };
  std::string out;
  // (Appending piecewise: GCC 12 warns falsely about "\t" + std::string, -Wrestrict.)
  for (std::size_t i = 0; i < all.size(); ++i) out.append("\t").append(column(i));
  out += "\tNUMA Affinity\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    out += column(i);
    for (std::size_t j = 0; j < all.size(); ++j)
      out.append("\t").append(i == j ? " X " : router.matrix_label(all[i], all[j]));
    if (i < gpus.size()) {
      const int socket = g.device(all[i]).socket;
      out += socket >= 0 ? fmt::format("\t{}", socket) : std::string("\tN/A");
    }
    out += "\n";
  }
  out += "\n";
  out += kLegend;
  if (!nics.empty()) {
    out += "\nNIC Legend:\n\n";
    for (std::size_t j = 0; j < nics.size(); ++j)
      out += fmt::format("  NIC{}: {}\n", j, g.device(nics[j]).name);
  }
  if (nodes > options.max_nodes)
    out += fmt::format("\n(nodes 0-{} of {} shown)\n", options.max_nodes - 1, nodes);
  return out;
}

std::string topo_dot(const LinkGraph& g) {
  static const std::map<DeviceKind, const char*> kFill = {
      {DeviceKind::gpu, "#b6e3a1"},         {DeviceKind::nvswitch, "#7fbf5f"},
      {DeviceKind::pcie_switch, "#d9d9d9"}, {DeviceKind::cpu, "#9ecae1"},
      {DeviceKind::nic, "#fdd49e"},         {DeviceKind::network_switch, "#fc8d59"},
      {DeviceKind::nvme, "#fee391"}};
  static const std::map<Tier, const char*> kColor = {
      {Tier::nvlink, "#4d9221"}, {Tier::pcie, "#636363"}, {Tier::upi, "#3182bd"},
      {Tier::xgmi, "#b2182b"},   {Tier::c2c, "#6a51a3"},  {Tier::ib, "#e6550d"},
      {Tier::roce, "#e6550d"},   {Tier::eth, "#e6550d"}};
  std::string out = fmt::format("graph \"{}\" {{\n  node [shape=box, style=filled];\n", g.name);
  const auto node_line = [&](DeviceId d) {
    const Device& dev = g.device(d);
    const std::string label = dev.kind == DeviceKind::gpu ? dev.name + "\\n" + dev.model : dev.name;
    return fmt::format("  \"{}\" [label=\"{}\", fillcolor=\"{}\"];\n", dev.name, label, kFill.at(dev.kind));
  };
  std::map<int, std::vector<DeviceId>> by_node;
  for (DeviceId d = 0; d < g.device_count(); ++d) by_node[g.device(d).node].push_back(d);
  const bool boxes = by_node.size() > 1;
  for (const auto& [node, devices] : by_node) {
    if (boxes && node >= 0) out += fmt::format("  subgraph \"cluster_node{0}\" {{\n  label=\"node{0}\";\n", node);
    for (DeviceId d : devices) out += node_line(d);
    if (boxes && node >= 0) out += "  }\n";
  }
  for (LinkId id = 0; id < g.link_count(); ++id) {
    const Link& l = g.link(id);
    const bool duplex = g.find_link(l.to, l.from).has_value();
    if (duplex && l.from > l.to) continue;
    out += fmt::format("  \"{}\" -- \"{}\" [label=\"{}{} {}\", color=\"{}\"{}];\n",
                       g.device(l.from).name, g.device(l.to).name, to_string(l.tier),
                       l.count > 1 ? fmt::format(" x{}", l.count) : "",
                       sim::format_rate(l.bandwidth), kColor.at(l.tier),
                       duplex ? "" : ", dir=forward");
  }
  return out + "}\n";
}

}  // namespace wiresim::topo
