// LinkGraph: the hardware as a directed graph. Vertices are devices (GPU, NVSwitch, PCIe
// switch, CPU socket, NIC, network switch, NVMe drive); edges are directed links, each with a bandwidth
// per direction, a latency and a tier. A full-duplex cable is two links, one each way.
// Link ids are dense (0..link_count()-1) and are the same ids the simulator's network uses.
//
// An NVLink domain's switch chips are modelled as one logical nvswitch device whose link to
// each GPU carries all of that GPU's NVLinks (count 18 on H100): for the uniform traffic of
// collectives this is equivalent to the per-chip wiring (shared/data/hardware.md §2), and a
// transfer then uses the GPU's full NVLink bandwidth as NCCL's channels do.
//
//   LinkGraph g = load_topology("topologies/hgx-h100.yaml");   // topologies/builder.h
//   for (DeviceId gpu : g.gpus()) fmt::print("{}\n", g.device(gpu).name);
//   const Link& l = g.link(g.out_links(g.gpus()[0])[0]);        // gpu0 -> nvswitch
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/transfer_dag.h"
#include "sim/units.h"

namespace wiresim::topo {

using sim::LinkId;
using DeviceId = std::uint32_t;

enum class DeviceKind { gpu, nvswitch, pcie_switch, cpu, nic, network_switch, nvme };
enum class Tier { nvlink, pcie, upi, xgmi, c2c, ib, roce, eth };

std::string_view to_string(DeviceKind kind);   // "gpu", "nvswitch", ..., "switch"
std::string_view to_string(Tier tier);         // "nvlink", "pcie", ...
std::optional<DeviceKind> device_kind_from_string(std::string_view s);
std::optional<Tier> tier_from_string(std::string_view s);
// Scale-out tiers (ib, roce, eth) cross between nodes; the rest stay inside one.
bool is_network_tier(Tier tier);
// NVLink-class tiers (nvlink, xgmi, c2c): GPU-to-GPU fabrics with no host in between.
bool is_nvlink_class(Tier tier);

// The GPU architectures a topology may name (a gpu device's `arch`). NVIDIA's carry the
// compute capability x 10 of their first part, which NCCL's tuning tables are indexed by
// (src/graph/tuning.cc: compCapIndex); AMD's carry 0 (RCCL tunes by gfx name, not modelled).
enum class GpuVendor { nvidia, amd, unknown };
struct GpuArch {
  std::string_view name;
  GpuVendor vendor;
  int compute_capability;  // x 10: hopper 90; 0 for AMD and unknown
};
inline constexpr std::array<GpuArch, 10> kGpuArchs = {{
    {"volta", GpuVendor::nvidia, 70},    {"turing", GpuVendor::nvidia, 75},
    {"ampere", GpuVendor::nvidia, 80},   {"ada", GpuVendor::nvidia, 89},
    {"hopper", GpuVendor::nvidia, 90},   {"blackwell", GpuVendor::nvidia, 100},
    {"cdna2", GpuVendor::amd, 0},        {"cdna3", GpuVendor::amd, 0},
    {"cdna4", GpuVendor::amd, 0},        {"unknown", GpuVendor::unknown, 0},
}};
// The entry of that name; the "unknown" entry for a name not in the table.
const GpuArch& gpu_arch(std::string_view name);

struct Device {
  std::string name;          // unique: "node3.gpu5", "leaf2", "spine0"
  DeviceKind kind = DeviceKind::gpu;
  int node = 0;              // index of the node (server, tray) it belongs to; -1 for fabric switches
  int socket = -1;           // CPU socket / NUMA node it hangs off, where known
  int rail = -1;             // NICs and leaf switches: the rail they serve, where rail-optimised
  // GPUs:
  std::string model;         // "H100", "B200", "MI300X"
  std::string arch;          // "volta", "ampere", "hopper", "blackwell", "ada", "cdna3"
  sim::BytesPerSec memory_bandwidth;  // HBM; reductions run at this speed
  sim::Bytes memory;         // HBM capacity (GB = 1e9 B); 0: not given, so memory is not checked
  // Whether the driver lets other GPUs read and write this one over PCIe (CUDA peer access).
  // GeForce cards from the RTX 4090 on report no peer access: NCCL stages every transfer
  // between them through host memory (SHM).
  bool peer_to_peer = true;
  // Switches: in-switch reduction and multicast (NVLink SHARP, used by NCCL's NVLS).
  bool multicast = false;
  // PCIe switches: this one is a host bridge (root complex port) rather than a discrete
  // switch, so paths through it read PHB in nvidia-smi's matrix instead of PIX/PXB.
  bool host_bridge = false;
  // CPUs: who made them, "intel", "amd" or "arm"; empty where the topology does not say.
  // NCCL reads it for its LL cap across nodes (models::Params::ll_max_net).
  std::string vendor;
  // NVMe drives: the sustained sequential read rate of the drive itself; its links away from
  // it carry no more than this (models::Machine). 0: the link's rate alone.
  sim::BytesPerSec read_bandwidth;
};

struct Link {
  DeviceId from = 0;
  DeviceId to = 0;
  Tier tier = Tier::nvlink;
  int count = 1;                // bonded lanes/links, for labels like NV18
  sim::BytesPerSec bandwidth;   // per direction, all `count` links together
  sim::Seconds latency;
};

class LinkGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                      Device, Link>;

  DeviceId add_device(Device device);
  // Adds one directed link; add_duplex adds both directions and returns the forward id.
  LinkId add_link(Link link);
  LinkId add_duplex(Link link);
  // Replaces a link's bandwidth and latency (a calibration overlay does this).
  void set_link_parameters(LinkId id, sim::BytesPerSec bandwidth, sim::Seconds latency);

  std::size_t device_count() const;
  std::size_t link_count() const { return links_.size(); }
  // Takes a link out of service (topologies/faults.h); scales one's bandwidth by `share`.
  void fail_link(LinkId id);
  bool link_failed(LinkId id) const { return id < failed_.size() && failed_[id]; }
  void degrade_link(LinkId id, double share);
  double link_share(LinkId id) const { return id < shares_.size() ? shares_[id] : 1.0; }   // degraded to
  // link_name with what a fault did to it: "node0.nic0->leaf0 [failed]", "spine0->leaf1 [50%]";
  // the name alone for a healthy link. Outputs that list links use it, so a fault shows.
  std::string link_label(LinkId id) const;
  const Device& device(DeviceId id) const;
  const Link& link(LinkId id) const { return links_[id]; }
  // A failed link keeps its id (the simulator's network still has it) but leaves these lists,
  // so no route uses it.
  std::span<const LinkId> out_links(DeviceId id) const { return out_[id]; }
  std::span<const LinkId> in_links(DeviceId id) const { return in_[id]; }
  std::optional<DeviceId> find(std::string_view name) const;
  // GPUs in topology order (node-major on clusters): the ranks of a collective.
  const std::vector<DeviceId>& gpus() const { return gpus_; }
  // Position of a GPU in gpus() (its rank); nullopt for other devices.
  std::optional<std::size_t> gpu_index(DeviceId id) const;
  // The first link from -> to, if any.
  std::optional<LinkId> find_link(DeviceId from, DeviceId to) const;
  // Boost.Graph view, for graph algorithms; edge properties are the Links.
  const Graph& graph() const { return graph_; }
  // "gpu0->nvswitch0"
  std::string link_name(LinkId id) const;
  // The NIC a GPU is pinned to (a topology's nic_binding, as a launcher pins a rank with its
  // own NCCL_IB_HCA); nullopt: the GPU uses the nearest NIC by path (topologies/routes.h).
  void bind_nic(DeviceId gpu, DeviceId nic) { bound_nic_[gpu] = nic; }
  std::optional<DeviceId> bound_nic(DeviceId gpu) const {
    const auto it = bound_nic_.find(gpu);
    return it == bound_nic_.end() ? std::nullopt : std::optional<DeviceId>(it->second);
  }

  std::string source;           // file it was read from, for messages
  std::string name;             // the topology's own name ("hgx-h100")
  std::string description;      // one line from the file, may be empty
  // The file's `parameters:` with the values it was built with (after --set): "nodes" -> "4".
  // A topology that declares `nodes` is a cluster whose size the caller chooses.
  std::map<std::string, std::string> parameters;
  // What the reader noticed but did not refuse (a rate that is probably a unit slip), one
  // line each, "file:line:column: warning: ..."; tools/ prints them to stderr.
  std::vector<std::string> warnings;

 private:
  Graph graph_;
  std::vector<Link> links_;
  std::vector<bool> failed_;   // by link id; empty until a link fails
  std::vector<double> shares_; // by link id, the share degrade_link left; empty until one is
  std::vector<std::vector<LinkId>> out_, in_;
  std::vector<DeviceId> gpus_;
  std::unordered_map<std::string, DeviceId> by_name_;
  std::unordered_map<DeviceId, DeviceId> bound_nic_;
  std::unordered_map<DeviceId, std::size_t> gpu_index_;
};

}  // namespace wiresim::topo
