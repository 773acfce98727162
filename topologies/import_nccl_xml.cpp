// import_nccl_xml: NCCL's topology dump -> topology YAML (see topologies/import_nccl_xml.h).
#include "topologies/import_nccl_xml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "input/input_error.h"
#include "sim/units.h"
#include "topologies/import_xml_tree.h"

namespace wiresim::topo {
namespace {

using input::InputError;

// Per-link latencies: a PCIe switch hop ~115 ns (Broadcom PEX89000, shared/data/hardware.md
// §5); the root complex, NVLink and socket links are placeholders (U), as in import_tree.cpp.
constexpr const char* kSwitchHop = "115ns";
constexpr const char* kRootHop = "250ns";
constexpr const char* kNvlinkHop = "250ns";
constexpr const char* kSocketHop = "200ns";
constexpr const char* kNvSwitchClass = "0x068000";  // PCI_NVSWITCH_CLASS, NCCL src/graph/xml.h

struct Generation {
  const char* model;  // a name gpu_model() knows
  const char* arch;
  double nvlink_gbps;  // per NVLink per direction: NVLink 3/4 25 GB/s, NVLink 5 50 GB/s (§1);
                       // NVLink 2 (V100) 25 GB/s and NVLink on other parts are U
};

// The sm attribute is CUDA's compute capability x 10 (NCCL xml.cc: cudaMajor * 10 + cudaMinor).
Generation generation(int sm) {
  if (sm >= 100) return {sm == 100 ? "B200" : "unknown", "blackwell", 50};
  if (sm >= 90) return {"H100", "hopper", 25};
  if (sm == 89) return {"unknown", "ada", 25};
  if (sm >= 86) return {"unknown", "ampere", 25};
  if (sm >= 80) return {"A100", "ampere", 25};
  if (sm >= 75) return {"unknown", "turing", 25};
  if (sm >= 70) return {"V100", "volta", 25};
  return {"unknown", "unknown", 25};
}

std::string rate(double gbps) { return fmt::format("{:.6g}GB/s", gbps); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool holds_devices(const XmlElement& pci) {
  return std::any_of(pci.children.begin(), pci.children.end(), [](const XmlElement& c) {
    return c.name == "gpu" || c.name == "nic" || (c.name == "pci" && holds_devices(c));
  });
}

class XmlImporter {
 public:
  XmlImporter(const std::string& file, const ImportOptions& options) : file_(file), options_(options) {}
  std::string run(const XmlElement& system);

 private:
  struct Gpu {
    const XmlElement* element;
    std::string busid;
    int sm;
    int cpu;
  };
  [[noreturn]] void fail(const XmlElement& e, const std::string& message) const {
    throw InputError(file_, e.line, e.column, fmt::format("<{}>: {}", e.name, message));
  }
  std::optional<long> number(const XmlElement& e, const char* key, bool required) const;
  std::string attribute(const XmlElement& e, const char* key) const {
    const std::string* v = e.attribute(key);
    return v ? *v : "?";
  }
  double pcie_rate(const XmlElement& pci);
  void walk_cpu(const XmlElement& cpu, int index);
  void walk_pci(const XmlElement& pci, const std::string& parent, bool parent_is_cpu, int cpu);
  void add_gpu(const XmlElement& gpu, const XmlElement& pci, const std::string& parent, double gbps,
               const char* latency, int cpu);
  void add_nic(const XmlElement& net, const std::string& busid, const std::string& parent,
               std::optional<double> pcie_gbps, const char* latency);
  void add_nvlinks(double per_link_gbps);
  std::string socket_links(const XmlElement& cpu, int cpus);
  void link(const std::string& a, const std::string& b, const char* tier, double gbps,
            const char* latency, long count = 1) {
    links_ += fmt::format("    - {{from: \"{}\", to: \"{}\", tier: {}, ", a, b, tier);
    if (count > 1) links_ += fmt::format("count: {}, link_bandwidth: {}", count, rate(gbps));
    else links_ += fmt::format("bandwidth: {}", rate(gbps));
    links_ += fmt::format(", latency: {}}}\n", latency);
  }

  const std::string& file_;
  const ImportOptions& options_;
  std::vector<Gpu> gpus_;
  int switches_ = 0, nics_ = 0;
  bool nvswitch_ = false;
  double fastest_nic_gbps_ = 0;
  std::string links_;
  std::vector<std::string> devices_;  // one comment line per GPU and NIC
  std::set<std::string> notes_;       // what was read by a rule or left out
};

std::optional<long> XmlImporter::number(const XmlElement& e, const char* key, bool required) const {
  const std::string* v = e.attribute(key);
  if (!v || v->empty()) {
    if (required) fail(e, fmt::format("missing {}; expected an integer (NCCL writes it)", key));
    return std::nullopt;
  }
  long out = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || out < -1'000'000'000 || out > 1'000'000'000)
    fail(e, fmt::format("{}=\"{}\"; expected an integer", key, *v));
  return out;
}

// link_speed x link_width per direction after line encoding: 8b/10b at 2.5 and 5 GT/s,
// 128b/130b at 8 to 32 GT/s, PCIe 6's FLIT counted 1:1 (shared/data/hardware.md §5). As
// NCCL's ncclTopoAddPci reads them, width 0 means x16 and an unknown speed 8 GT/s.
double XmlImporter::pcie_rate(const XmlElement& pci) {
  double gts = 8;
  const std::string speed = pci.attribute("link_speed") ? *pci.attribute("link_speed") : "";
  if (speed.find_first_not_of(' ') == std::string::npos) {
    notes_.insert("an empty link_speed is read as 8 GT/s, NCCL's fallback (kvDictPciGen)");
  } else {
    static constexpr double kSpeeds[] = {2.5, 5, 8, 16, 32, 64};
    const auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), gts);
    const std::string_view rest = std::string_view(speed).substr(end - speed.data());
    if (ec != std::errc() || !(rest.starts_with(" GT/s") || rest.starts_with("GT/s")) ||
        std::find(std::begin(kSpeeds), std::end(kSpeeds), gts) == std::end(kSpeeds))
      fail(pci, fmt::format("link_speed=\"{}\"; expected a PCIe rate: 2.5, 5.0, 8.0, 16.0, 32.0 or "
                            "64.0 GT/s", speed));
  }
  long width = number(pci, "link_width", false).value_or(0);
  if (width == 0) {
    width = 16;
    notes_.insert("link_width 0 or missing is read as x16, as NCCL does");
  }
  if (width < 1 || width > 32) fail(pci, fmt::format("link_width={}; expected 1 to 32 lanes", width));
  const double encoding = gts < 8 ? 8.0 / 10 : gts < 64 ? 128.0 / 130 : 1.0;
  return gts * static_cast<double>(width) * encoding / 8;
}

void XmlImporter::add_gpu(const XmlElement& gpu, const XmlElement& pci, const std::string& parent,
                          double gbps, const char* latency, int cpu) {
  const int sm = static_cast<int>(*number(gpu, "sm", true));
  if (!gpus_.empty() && generation(sm).arch != generation(gpus_.front().sm).arch)
    fail(gpu, fmt::format("sm={} next to sm={}; expected GPUs of one generation in a node", sm,
                          gpus_.front().sm));
  const std::string name = fmt::format("gpu[{}]", gpus_.size());
  link(name, parent, "pcie", gbps, latency);
  gpus_.push_back({&gpu, lower(attribute(pci, "busid")), sm, cpu});
  devices_.push_back(fmt::format("{}: dev {}, rank {}, busid {}, sm {}, gdr {}", name, attribute(gpu, "dev"),
                                 attribute(gpu, "rank"), attribute(pci, "busid"), sm, attribute(gpu, "gdr")));
}

void XmlImporter::add_nic(const XmlElement& net, const std::string& busid, const std::string& parent,
                          std::optional<double> pcie_gbps, const char* latency) {
  long mbps = number(net, "speed", false).value_or(0);
  if (mbps <= 0) {
    mbps = 10'000;
    notes_.insert("a <net> speed of 0, -1 or none is read as 10000 Mb/s, as NCCL does");
  }
  const double gbps = static_cast<double>(mbps) / 8000;  // Mb/s -> GB/s
  fastest_nic_gbps_ = std::max(fastest_nic_gbps_, gbps);
  const std::string name = fmt::format("nic[{}]", nics_++);
  if (!pcie_gbps) notes_.insert("a <nic> straight under <cpu> has no PCIe link in the dump: its speed stands for it");
  link(name, parent, "pcie", pcie_gbps.value_or(gbps), latency);
  devices_.push_back(fmt::format("{}: {}, busid {}, port {}, {} Gb/s = {}, gdr {}", name, attribute(net, "name"),
                                 busid, attribute(net, "port"), static_cast<double>(mbps) / 1000,
                                 rate(gbps), attribute(net, "gdr")));
}

void XmlImporter::walk_pci(const XmlElement& pci, const std::string& parent, bool parent_is_cpu, int cpu) {
  if (!holds_devices(pci)) return;  // a disk, an NVSwitch's own function, an empty bridge
  const double gbps = pcie_rate(pci);
  const char* latency = parent_is_cpu ? kRootHop : kSwitchHop;
  bool endpoint = false;
  for (const auto& c : pci.children) {
    if (c.name == "gpu") add_gpu(c, pci, parent, gbps, latency, cpu);
    if (c.name == "nic")
      for (const auto& net : c.children)
        if (net.name == "net") add_nic(net, attribute(pci, "busid"), parent, gbps, latency);
    endpoint |= c.name == "gpu" || c.name == "nic";
  }
  if (endpoint) return;
  const std::string sw = fmt::format("pcie_switch[{}]", switches_++);
  link(sw, parent, "pcie", gbps, latency);
  for (const auto& c : pci.children) {
    if (c.name == "pci") walk_pci(c, sw, false, cpu);
    else notes_.insert(fmt::format("<{}> under a bridge is not imported", c.name));
  }
}

void XmlImporter::walk_cpu(const XmlElement& cpu, int index) {
  number(cpu, "numaid", true);
  const std::string name = fmt::format("cpu[{}]", index);
  for (const auto& c : cpu.children) {
    if (c.name == "pci") walk_pci(c, name, true, index);
    else if (c.name == "nic")
      for (const auto& net : c.children)
        if (net.name == "net") add_nic(net, "none", name, std::nullopt, kRootHop);
  }
}

// NVLinks by target class: NVSwitch ones add up into one link to the logical nvswitch, GPU
// ones become a direct link per pair (both ends list it; the larger count is kept). Old dumps
// without tclass: a target that is no GPU of the dump is an NVSwitch (NCCL's reading).
void XmlImporter::add_nvlinks(double per_link_gbps) {
  std::map<std::string, std::size_t> by_busid;
  for (std::size_t i = 0; i < gpus_.size(); ++i) by_busid.emplace(gpus_[i].busid, i);
  std::map<std::pair<std::size_t, std::size_t>, long> pairs;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    long to_switch = 0;
    for (const auto& c : gpus_[i].element->children) {
      if (c.name == "c2c") {
        const long count = number(c, "count", false).value_or(1), mbps = *number(c, "bw", true);
        if (count < 1 || count > 1000 || mbps < 1)
          fail(c, fmt::format("count={} bw={}; expected 1 to 1000 links of a positive MB/s", count, mbps));
        const double gbps = static_cast<double>(mbps) / 1000;  // MB/s per link
        link(fmt::format("gpu[{}]", i), fmt::format("cpu[{}]", gpus_[i].cpu), "c2c", gbps, kNvlinkHop, count);
        continue;
      }
      if (c.name != "nvlink") continue;
      const long count = *number(c, "count", true);
      if (count < 1 || count > 1000) fail(c, fmt::format("count={}; expected 1 to 1000 NVLinks", count));
      const std::string target = lower(attribute(c, "target"));
      const std::string* tclass = c.attribute("tclass");
      const auto peer = by_busid.find(target);
      if (tclass ? *tclass == kNvSwitchClass : peer == by_busid.end()) {
        to_switch += count;
      } else if (tclass && !tclass->starts_with("0x03")) {
        notes_.insert(fmt::format("NVLinks to class {} (neither a GPU nor an NVSwitch) are not imported", *tclass));
      } else if (peer == by_busid.end() || peer->second == i) {
        notes_.insert(fmt::format("gpu[{}]: NVLinks to {}, which is no other GPU of the dump, are not imported", i, target));
      } else {
        long& n = pairs[std::minmax(i, peer->second)];
        n = std::max(n, count);
      }
    }
    if (to_switch > 0) {
      nvswitch_ = true;
      link(fmt::format("gpu[{}]", i), "nvswitch", "nvlink", per_link_gbps, kNvlinkHop, to_switch);
    }
  }
  for (const auto& [pair, count] : pairs)
    link(fmt::format("gpu[{}]", pair.first), fmt::format("gpu[{}]", pair.second), "nvlink",
         per_link_gbps, kNvlinkHop, count);
}

// One link per pair of NUMA nodes (the dump gives no link count), priced by the first
// <cpu>'s type; the family/model thresholds are NCCL's (topo.cc ncclTopoAddCpu).
std::string XmlImporter::socket_links(const XmlElement& cpu, int cpus) {
  const std::string arch = attribute(cpu, "arch"), vendor = attribute(cpu, "vendor");
  const long family = number(cpu, "familyid", false).value_or(0);
  const long model = number(cpu, "modelid", false).value_or(0);
  const char* tier = "upi";
  double gbps = 32;
  std::string why = fmt::format("{} {}: no inter-socket rate known, 32 GB/s placeholder (U)", arch, vendor);
  if (arch == "x86_64" && vendor == "GenuineIntel") {
    if (family == 6 && model >= 0x8F) why = "Intel UPI 2.0, 16 GT/s: ~32 GB/s per link (Sapphire/Emerald Rapids; hardware.md §5, D)";
    else if (family == 6 && model >= 0x55) gbps = 20.8, why = "Intel UPI at 10.4 GT/s: 20.8 GB/s per link (Skylake to Ice Lake; hardware.md §5, D)";
    else gbps = 19.2, why = "Intel QPI at 9.6 GT/s: 19.2 GB/s per link (U)";
  } else if (arch == "x86_64" && vendor == "AuthenticAMD") {
    tier = "xgmi";
    // NCCL's familyid is CPUID's family 0xF plus its extended family << 4: 175 is AMD family
    // 0x19 (EPYC 7003 below model 0x10, 9004 from it), 191 family 0x1A.
    if ((family == 175 && model >= 0x10) || family > 175)
      gbps = 64, why = "AMD xGMI, 32 Gb/s x16: 64 GB/s per link (EPYC 9004; hardware.md §5, V; later EPYCs U)";
    else why = "AMD xGMI on EPYC 7002/7003: ~32 GB/s per link, as topologies/hgx-a100.yaml (U)";
  }
  for (int a = 0; a < cpus; ++a)
    for (int b = a + 1; b < cpus; ++b)
      link(fmt::format("cpu[{}]", a), fmt::format("cpu[{}]", b), tier, gbps, kSocketHop);
  return why;
}

std::string XmlImporter::run(const XmlElement& system) {
  if (system.name != "system") fail(system, "expected <system> (an NCCL topology dump) as the document element");
  if (!options_.links.empty())
    throw InputError("--link applies to nvidia-smi matrices; an NCCL dump gives its own rates");
  std::vector<const XmlElement*> cpus;
  for (const auto& c : system.children)
    if (c.name == "cpu") {
      if (!cpus.empty() && attribute(*cpus[0], "host_hash") != attribute(c, "host_hash"))
        fail(c, fmt::format("host_hash {} after {}: the dump holds several hosts; expected one "
                            "node (a dump from one host)", attribute(c, "host_hash"), attribute(*cpus[0], "host_hash")));
      walk_cpu(c, static_cast<int>(cpus.size()));
      cpus.push_back(&c);
    }
  if (gpus_.empty()) fail(system, "no <gpu> under any <cpu>; expected the GPUs of the node");
  const Generation gen = generation(gpus_.front().sm);
  const GpuModel& model = gpu_model(options_.gpu_model.value_or(gen.model));
  add_nvlinks(options_.gpu_model ? sim::parse_rate(model.nvlink).count() / 1e9 : gen.nvlink_gbps);
  const std::string socket = socket_links(*cpus[0], static_cast<int>(cpus.size()));

  std::string out = fmt::format(
      "# Imported by `wiresim topo import` from {} (an NCCL topology dump, NCCL_TOPO_DUMP_FILE).\n"
      "# One node: {} GPUs, {} NICs, {} NUMA nodes, {} PCIe switches. A dump describes one host;\n"
      "# for a cluster add `nodes:` and a `fabric:` (as cluster-h100-ib.yaml does) with the\n"
      "# NICs' speed: nic_link: {{bandwidth: {:.6g}Gb/s}}.\n"
      "# What the attributes mean is NCCL's (src/graph/xml.cc, topo.cc); rates per direction:\n"
      "#   GPU     sm {}: {} ({}){}\n"
      "#   PCIe    <pci link_speed x link_width>, after line encoding (shared/data/hardware.md §5)\n"
      "#   NVLink  <nvlink count> x {} per link (hardware.md §1); NVSwitch targets ({}) as one nvswitch\n"
      "#   Sockets {}\n"
      "#   Latency switch hop 115 ns (§5); root complex, NVLink and socket links placeholders (U)\n",
      file_, gpus_.size(), nics_, cpus.size(), switches_, fastest_nic_gbps_ * 8, gpus_.front().sm,
      model.name, model.arch, options_.gpu_model ? ", given with --gpu-model" : ", from sm",
      options_.gpu_model ? model.nvlink : rate(gen.nvlink_gbps), kNvSwitchClass, socket);
  for (const auto& note : notes_) out += fmt::format("#   Note    {}\n", note);
  for (const auto& d : devices_) out += fmt::format("#   {}\n", d);
  out += fmt::format("name: {}\ndescription: imported from {} (NCCL topology dump)\n\nnode:\n  devices:\n",
                     options_.name, std::filesystem::path(file_).filename().string());
  out += fmt::format("    gpu: {{kind: gpu, count: {}, model: {}, arch: {}, memory_bandwidth: {}}}\n",
                     gpus_.size(), model.name, options_.gpu_model ? model.arch : gen.arch, model.memory);
  if (nvswitch_) out += fmt::format("    nvswitch: {{kind: nvswitch, multicast: {}}}\n", model.multicast);
  if (switches_) out += fmt::format("    pcie_switch: {{kind: pcie_switch, count: {}}}\n", switches_);
  // The CPU vendor as NCCL reads it (topo.cc kvDictCpuVendor, x86 only; Arm hosts by their arch).
  const std::string cpu_arch = attribute(*cpus[0], "arch"), cpu_vendor = attribute(*cpus[0], "vendor");
  const char* vendor = cpu_arch == "arm64" || cpu_arch == "aarch64" ? "arm"
                       : cpu_vendor == "GenuineIntel"               ? "intel"
                       : cpu_vendor == "AuthenticAMD"               ? "amd"
                                                                    : nullptr;
  if (vendor) out += fmt::format("    cpu: {{kind: cpu, count: {}, vendor: {}}}\n", cpus.size(), vendor);
  else out += fmt::format("    cpu: {{kind: cpu, count: {}}}\n", cpus.size());
  if (nics_) out += fmt::format("    nic: {{kind: nic, count: {}}}\n", nics_);
  return out + "  links:\n" + links_;
}

}  // namespace

bool looks_like_nccl_xml(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    i = text.find_first_not_of(" \t\r\n", i);
    if (i == std::string::npos || text[i] != '<') return false;
    std::string_view end;
    if (text.compare(i, 4, "<!--") == 0) end = "-->";
    else if (text.compare(i, 2, "<?") == 0) end = "?>";
    else return text.compare(i, 7, "<system") == 0;
    i = text.find(end, i);
    if (i == std::string::npos) return false;
    i += end.size();
  }
  return false;
}

std::string import_nccl_xml(const std::string& text, const std::string& file, const ImportOptions& options) {
  return XmlImporter(file, options).run(parse_xml(text, file));
}

}  // namespace wiresim::topo
