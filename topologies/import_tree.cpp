// import_topology: rebuilds a machine from nvidia-smi's labels (see topologies/import.h).
#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "input/input_error.h"
#include "topologies/builder.h"
#include "topologies/import.h"
#include "topologies/routes.h"

namespace wiresim::topo {
namespace {

// V100 (HBM2 900 GB/s, NVLink 2 at 25 GB/s per link, PCIe Gen3) is not in hardware.md: U.
constexpr std::array<GpuModel, 7> kModels = {{
    {"V100", "volta", "900GB/s", "25GB/s", "15.75GB/s", false},
    {"A100", "ampere", "2.039TB/s", "25GB/s", "31.5GB/s", false},
    {"H100", "hopper", "3.35TB/s", "25GB/s", "63GB/s", true},
    {"H200", "hopper", "4.8TB/s", "25GB/s", "63GB/s", true},
    {"B200", "blackwell", "8TB/s", "50GB/s", "63GB/s", true},
    {"L40S", "ada", "864GB/s", "25GB/s", "31.5GB/s", false},
    {"unknown", "unknown", "1TB/s", "25GB/s", "31.5GB/s", false},
}};

// A GPU with more NVLinks than this in all cannot have NV# to every peer directly.
constexpr int kMaxNvlinksPerGpu = 18;  // NVLink 4 and 5, hardware.md §1

long find_root(std::vector<long>& parent, long x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Classes of `members` under "their label is one of `labels`", in order of first member.
std::vector<std::vector<int>> classes(const TopoMatrix& m, const std::vector<int>& members,
                                      std::initializer_list<std::string_view> labels) {
  std::vector<long> parent(m.columns.size());
  std::iota(parent.begin(), parent.end(), 0);
  for (int a : members)
    for (int b : members)
      if (std::find(labels.begin(), labels.end(), m.labels[a][b]) != labels.end())
        parent[find_root(parent, a)] = find_root(parent, b);
  std::vector<std::vector<int>> out;
  std::map<long, std::size_t> index;
  for (int a : members) {
    const auto [it, fresh] = index.emplace(find_root(parent, a), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(a);
  }
  return out;
}

// NUMA nodes: devices with a PCIe label short of SYS share one; NVLink-joined GPUs whose
// PCIe relation is hidden join the first NUMA node they have no SYS to.
std::vector<std::vector<int>> numa_nodes(const TopoMatrix& m) {
  std::vector<int> all(m.columns.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::vector<int>> groups;
  for (const auto& part : classes(m, all, {"PIX", "PXB", "PHB", "NODE"})) {
    int numa = -1;
    for (int d : part) numa = std::max(numa, m.numa[d]);
    bool placed = false;
    for (auto& g : groups) {
      int g_numa = -1;
      bool sys = false;
      for (int a : g) {
        g_numa = std::max(g_numa, m.numa[a]);
        for (int b : part) sys |= m.labels[a][b] == "SYS";
      }
      if (!sys && (numa < 0 || g_numa < 0 || numa == g_numa)) {
        g.insert(g.end(), part.begin(), part.end());
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back(part);
  }
  return groups;
}

class Emitter {
 public:
  Emitter(const TopoMatrix& m, const ImportOptions& o) : m_(m), options_(o) {
    for (std::size_t i = 0; i < m.columns.size(); ++i)
      ref_.push_back(m.is_gpu[i] ? fmt::format("gpu[{}]", gpus_++) : fmt::format("nic[{}]", nics_++));
  }

  std::string run();

 private:
  std::string pcie_tree(int cpu, const std::vector<int>& members);
  std::string add_switch(bool host_bridge) {
    return host_bridge ? fmt::format("host_bridge[{}]", host_bridges_++)
                       : fmt::format("pcie_switch[{}]", switches_++);
  }
  void link(const std::string& a, const std::string& b, const std::string& label,
            const std::string& tier, int count = 1) {
    const auto& [rate, latency] = defaults_.at(label);
    links_ += fmt::format("    - {{from: \"{}\", to: \"{}\", tier: {}, ", a, b, tier);
    if (count > 1) links_ += fmt::format("count: {}, link_bandwidth: {}", count, rate);
    else links_ += fmt::format("bandwidth: {}", rate);
    links_ += fmt::format(", latency: {}}}\n", latency);
  }
  const GpuModel& pick_model(bool switched, int uniform_nv, int max_nv, std::string& why);

  const TopoMatrix& m_;
  const ImportOptions& options_;
  std::vector<std::string> ref_;  // per column: "gpu[3]" or "nic[0]"
  int gpus_ = 0, nics_ = 0, switches_ = 0, host_bridges_ = 0;
  std::map<std::string, std::pair<std::string, std::string>> defaults_;  // label -> rate, latency
  std::string links_;
};

const GpuModel& Emitter::pick_model(bool switched, int uniform_nv, int max_nv, std::string& why) {
  std::string name = "unknown";
  if (options_.gpu_model) {
    name = *options_.gpu_model;
    why = "given with --gpu-model";
  } else if (switched && uniform_nv == 18) {
    name = "H100", why = "guessed from NV18 on every pair through an NVSwitch (H200, B200 read the same)";
  } else if (switched && uniform_nv == 12) {
    name = "A100", why = "guessed from NV12 on every pair through an NVSwitch";
  } else if (!switched && max_nv >= 1 && max_nv <= 2) {
    name = "V100", why = "guessed from direct NV1/NV2 links (NVLink 2 meshes)";
  } else {
    why = "nothing in the matrix tells; give --gpu-model";
  }
  return gpu_model(name);
}

std::string Emitter::pcie_tree(int cpu, const std::vector<int>& members) {
  const std::string cpu_ref = fmt::format("cpu[{}]", cpu);
  for (const auto& hb : classes(m_, members, {"PIX", "PXB", "PHB"})) {
    const auto trees = classes(m_, hb, {"PIX", "PXB"});
    std::string parent = cpu_ref, up_label = "NODE";
    if (trees.size() > 1) {  // several switch trees under one host bridge: PHB between them
      parent = add_switch(true);
      link(parent, cpu_ref, "NODE", "pcie");
      up_label = "PHB";
    }
    for (const auto& tree : trees) {
      const auto leaves = classes(m_, tree, {"PIX"});
      if (leaves.size() == 1 && leaves[0].size() == 1) {
        link(ref_[leaves[0][0]], parent, up_label, "pcie");
        continue;
      }
      std::string top = parent;
      if (leaves.size() > 1) {  // PXB: leaf switches under a common upstream switch
        top = add_switch(false);
        link(top, parent, up_label, "pcie");
      }
      for (const auto& leaf : leaves) {
        const std::string sw = add_switch(false);
        link(sw, top, leaves.size() > 1 ? "PXB" : up_label, "pcie");
        for (int d : leaf) link(ref_[d], sw, "PIX", "pcie");
      }
    }
  }
  return cpu_ref;
}

std::string Emitter::run() {
  const std::size_t n = m_.columns.size();
  std::vector<int> gpu_cols;
  for (std::size_t i = 0; i < n; ++i)
    if (m_.is_gpu[i]) gpu_cols.push_back(static_cast<int>(i));
  if (gpu_cols.empty())
    throw input::InputError(m_.file, 1, 1, "the matrix has no GPU columns; expected GPU0, GPU1, ...");
  // NVLink: one NVSwitch when every pair reads the same NV# and direct links are impossible.
  const auto nv = [&](int a, int b) {
    const std::string& l = m_.labels[a][b];
    return l.starts_with("NV") ? std::stoi(l.substr(2)) : 0;
  };
  int uniform = -1, max_nv = 0;
  for (int a : gpu_cols)
    for (int b : gpu_cols)
      if (a != b) {
        uniform = uniform == -1 || uniform == nv(a, b) ? nv(a, b) : 0;
        max_nv = std::max(max_nv, nv(a, b));
      }
  const int peers = static_cast<int>(gpu_cols.size()) - 1;
  const bool switched = uniform > 0 && peers * uniform > kMaxNvlinksPerGpu;
  std::string why;
  const GpuModel& model = pick_model(switched, uniform, max_nv, why);

  defaults_ = {{"NV", {model.nvlink, "250ns"}}, {"PIX", {model.pcie, "115ns"}},
               {"PXB", {model.pcie, "115ns"}},  {"PHB", {model.pcie, "250ns"}},
               {"NODE", {model.pcie, "250ns"}}, {"SYS", {"32GB/s", "200ns"}}};
  for (const auto& [label, o] : options_.links) {
    if (o.bandwidth) defaults_[label].first = *o.bandwidth;
    if (o.latency) defaults_[label].second = *o.latency;
  }
  if (switched)
    for (int g : gpu_cols) link(ref_[g], "nvswitch", "NV", "nvlink", uniform);
  else
    for (int a : gpu_cols)
      for (int b : gpu_cols)
        if (a < b && nv(a, b) > 0) link(ref_[a], ref_[b], "NV", "nvlink", nv(a, b));

  const auto numa = numa_nodes(m_);
  for (std::size_t s = 0; s < numa.size(); ++s) pcie_tree(static_cast<int>(s), numa[s]);
  for (std::size_t s = 0; s < numa.size(); ++s)
    for (std::size_t t = s + 1; t < numa.size(); ++t)
      link(fmt::format("cpu[{}]", s), fmt::format("cpu[{}]", t), "SYS", "upi");

  std::string out = fmt::format(
      "# Imported by `wiresim topo import` from {} (an `nvidia-smi topo -m` matrix):\n"
      "# {} GPUs, {} NICs, {} NUMA nodes.\n"
      "# GPU model {}: {}.\n"
      "# Rates per direction, raw (shared/data/hardware.md: NVLink per link §1, PCIe x16 §5,\n"
      "# UPI ~32 GB/s §5); latencies per link: switch hop ~115 ns (§5), others placeholders (U).\n"
      "# Each link is priced by the label it stands for (override: --link LABEL=RATE,LATENCY):\n",
      m_.file, gpus_, nics_, numa.size(), model.name, why);
  for (const char* label : {"NV", "PIX", "PXB", "PHB", "NODE", "SYS"})
    out += fmt::format("#   {:<5}{} {}{}\n", label, defaults_[label].first, defaults_[label].second,
                       std::string_view(label) == "NV" ? " (per NVLink)" : "");
  out += fmt::format("name: {}\ndescription: imported from {}\n\nnode:\n  devices:\n", options_.name,
                     std::filesystem::path(m_.file).filename().string());
  out += fmt::format("    gpu: {{kind: gpu, count: {}, model: {}, arch: {}, memory_bandwidth: {}}}\n",
                     gpus_, model.name, model.arch, model.memory);
  if (switched) out += fmt::format("    nvswitch: {{kind: nvswitch, multicast: {}}}\n", model.multicast);
  if (switches_) out += fmt::format("    pcie_switch: {{kind: pcie_switch, count: {}}}\n", switches_);
  if (host_bridges_)
    out += fmt::format("    host_bridge: {{kind: pcie_switch, count: {}, host_bridge: true}}\n", host_bridges_);
  out += fmt::format("    cpu: {{kind: cpu, count: {}}}\n", numa.size());
  if (nics_) out += fmt::format("    nic: {{kind: nic, count: {}}}\n", nics_);
  return out + "  links:\n" + links_;
}

// The imported graph must print the input back, label for label.
void verify(const TopoMatrix& m, const std::string& yaml) {
  const LinkGraph g = load_topology_text(yaml, m.file + " (imported)");
  const Router router(g);
  std::vector<DeviceId> device;
  std::size_t gpu = 0;
  std::vector<DeviceId> nics;
  for (DeviceId d = 0; d < g.device_count(); ++d)
    if (g.device(d).kind == DeviceKind::nic) nics.push_back(d);
  std::size_t nic = 0;
  for (std::size_t i = 0; i < m.columns.size(); ++i)
    device.push_back(m.is_gpu[i] ? g.gpus()[gpu++] : nics[nic++]);
  for (std::size_t a = 0; a < m.columns.size(); ++a)
    for (std::size_t b = 0; b < m.columns.size(); ++b) {
      const std::string got = router.matrix_label(device[a], device[b]);
      if (got != m.labels[a][b])
        throw input::InputError(m.file, m.at[a][b].first, m.at[a][b].second, fmt::format(
            "{}/{} reads {}, but the PCIe tree that the other labels imply gives {}; expected "
            "labels that a tree of PCIe switches, host bridges and sockets can produce",
            m.columns[a], m.columns[b], m.labels[a][b], got));
    }
}

}  // namespace

const GpuModel& gpu_model(const std::string& name) {
  for (const auto& model : kModels)
    if (name == model.name) return model;
  std::string known;
  for (const auto& model : kModels) known += (known.empty() ? "" : ", ") + std::string(model.name);
  throw input::InputError(fmt::format("--gpu-model {}: unknown model; expected one of {}", name, known));
}

std::string import_topology(const TopoMatrix& matrix, const ImportOptions& options) {
  std::string yaml = Emitter(matrix, options).run();
  verify(matrix, yaml);
  return yaml;
}

}  // namespace wiresim::topo
