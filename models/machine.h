// Machine: a topology as the collective models see it — routes between ranks, link
// capacities after the architecture's link efficiency (the payload rate a copy achieves),
// step latencies by tier class, and NVSwitch multicast where the hardware has it.
//
// With P2P off (NCCL_P2P_DISABLE=1), or between GPUs the driver gives no peer access (GeForce
// cards, `peer_to_peer: false` in the topology), GPUs of one node do not reach each other
// directly: NCCL's SHM transport stages every transfer through host memory. With P2P on, so does every pair
// whose PCIe path crosses a host bridge or the inter-socket link (PHB, NODE, SYS): NCCL's
// default P2P level is PXB (ncclTopoCheckP2p in NVIDIA/nccl src/graph/paths.cc; NCCL_P2P_LEVEL,
// Transports::p2p_level, moves it; AMD hosts with at most 2 GPUs allow SYS, which this model
// does not know). A pair within the level uses P2P over its PCIe path, through the host bridge
// or the inter-socket link where that is the path, without a host buffer. A staged
// route is the sender's PCIe (or C2C) path up to its CPU socket, then down to the receiver
// (across the inter-socket link when the receiver hangs off the other socket); the tier class is pcie (per-step latency of
// the PCIe/SHM class) and the transfer is capped at the architecture's shm_bandwidth.
//
//   Machine m(graph, default_params());
//   auto links = m.route(gpu_a, gpu_b);
//   sim::BytesPerSec r = m.rate(links);        // bottleneck, after efficiency
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/params.h"
#include "sim/executor.h"
#include "topologies/link_graph.h"
#include "topologies/routes.h"

namespace wiresim::models {

// GPUDirect RDMA between a GPU and its NIC (NCCL_NET_GDR_LEVEL): automatic is NCCL's rule —
// on while the GPU-NIC path is at most PXB, or P2C (the GPU reaches the CPU the NIC hangs off
// over C2C); off beyond (PHB, NODE, SYS). Under PXN the proxy GPU's distance counts.
// (ncclTopoCheckGdr, NVIDIA/nccl src/graph/paths.cc: netGdrLevel = PATH_P2C with
// NCCL_NET_GDR_C2C=1, the default, else PATH_PXB.) Without it, NET data is staged through a
// host buffer on the GPU's CPU socket: GPU -> CPU, then CPU -> NIC (and the reverse at the
// receiver), over the PCIe uplinks and any socket link between.
enum class Gdr { automatic, on, off };

// NCCL's network transport: NET/IB (verbs: InfiniBand or RoCE, with GPUDirect RDMA where Gdr
// allows) or NET/Socket (kernel TCP, NCCL_IB_DISABLE=1 or no RDMA NIC). Sockets move host
// memory only (NVIDIA/nccl src/transport/net_socket.cc: ptrSupport = NCCL_PTR_HOST), so every
// NET byte is staged through the GPU's CPU as with GDR off; each connection (a channel's send
// to a peer: one socket by default, the proxy thread driving it) moves at most
// Params::net_socket.stream_bandwidth, and each step pays net_socket.step_extra.
enum class Net { ib, socket };

// NCCL's path types, in its order (NVIDIA/nccl src/include/graph.h PATH_*): how far apart two
// devices are. NCCL_P2P_LEVEL names one; two GPUs of a node use P2P when their path is no
// farther. A GPU pair's path is NVL (NVLink, through NVSwitches too), else its PCIe label:
// PIX, PXB, PHB (a host bridge, or the CPU: nvidia-smi's PHB and NODE) or SYS.
enum class PathType { loc, nvl, nvb, c2c, pix, pxb, p2c, pxn, phb, sys };

// The transports as NCCL's environment sets them.
struct Transports {
  bool p2p = true;             // NCCL_P2P_DISABLE=0 (false: as p2p_level LOC)
  Gdr gdr = Gdr::automatic;    // NCCL_NET_GDR_LEVEL
  Net net = Net::ib;           // NET/IB, or NET/Socket
  std::optional<PathType> p2p_level = std::nullopt;   // NCCL_P2P_LEVEL; nullopt: NCCL's default, PXB
};

// The knobs as the command line (--p2p, --gdr, --net) and scenario files (`transport:`) spell
// them: on|off, auto|on|off, ib|socket; nullopt for anything else.
std::optional<bool> parse_p2p(std::string_view s);
std::optional<Gdr> parse_gdr(std::string_view s);
std::optional<Net> parse_net(std::string_view s);
// NCCL_P2P_LEVEL's names (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS; any case) and
// back, upper case.
std::optional<PathType> parse_path_type(std::string_view s);
std::string_view to_string(PathType t);

class Machine {
 public:
  Machine(const topo::LinkGraph& graph, const Params& params, Transports transports = {});
  // The machine keeps references to both: a temporary would dangle.
  Machine(topo::LinkGraph&&, const Params&, Transports = {}) = delete;
  Machine(const topo::LinkGraph&, Params&&, Transports = {}) = delete;

  const topo::LinkGraph& graph() const { return graph_; }
  const topo::Router& router() const { return router_; }
  const Params& params() const { return params_; }
  const std::vector<sim::LinkSpec>& links() const { return links_; }
  const std::string& arch_name() const { return arch_name_; }
  const ArchParams& arch() const { return params_.arch(arch_name_); }
  // The GPUs' vendor and NVIDIA compute capability (topo::kGpuArchs).
  const topo::GpuArch& gpu_arch() const { return topo::gpu_arch(arch_name_); }

  std::span<const sim::LinkId> route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow = 0) const;
  // Between GPUs of two nodes, the route on one rail (Router::route_on_rail); route() for
  // rail < 0. Not staged for GDR: the NIC is the channel's, whatever its distance.
  std::span<const sim::LinkId> route(topo::DeviceId a, topo::DeviceId b, std::uint32_t flow, int rail) const;
  bool p2p() const { return transports_.p2p; }
  Gdr gdr() const { return transports_.gdr; }
  Net net() const { return transports_.net; }
  const Transports& transports() const { return transports_; }
  // Whether `gpu` sends to or receives from `nic` with GPUDirect RDMA (see Gdr).
  bool gdr(topo::DeviceId gpu, topo::DeviceId nic) const;
  // How two GPUs exchange as the model runs them: the transport (SHM where the pair is staged,
  // whatever the topology offers) and whether the bytes pass through host memory (SHM, or NET
  // with a side without GPUDirect RDMA).
  struct Exchange {
    topo::Transport transport;
    bool via_host = false;
    bool socket = false;   // NET/Socket
    // "P2P/NVLink", "P2P/PCIe", "SHM", "NET", "NET via host memory" or "NET/Socket"
    std::string name() const;
  };
  Exchange exchange(topo::DeviceId a, topo::DeviceId b) const;
  // Whether a transfer between two GPUs of one node is staged through host memory (P2P off,
  // no peer access, or a pair farther apart than the P2P level: PHB/NODE/SYS by default).
  bool staged(topo::DeviceId a, topo::DeviceId b) const;
  // NCCL's path type between two devices of a node (PathType): NVL, else the PCIe label's.
  PathType path_type(topo::DeviceId a, topo::DeviceId b) const;
  // What one channel's connection between two GPUs may move per second (payload), whatever
  // the links allow: the socket's stream rate across nodes under NET/Socket, else unlimited.
  sim::BytesPerSec stream_cap(topo::DeviceId a, topo::DeviceId b) const;
  // What each step between them costs beyond the latency table: NET/Socket's extra.
  sim::Seconds step_extra(topo::DeviceId a, topo::DeviceId b) const;
  sim::BytesPerSec rate(std::span<const sim::LinkId> route) const;   // min capacity
  sim::Seconds wire_latency(std::span<const sim::LinkId> route) const;
  TierClass tier_class(std::span<const sim::LinkId> route) const;    // slowest class crossed
  int node_of(topo::DeviceId device) const { return graph_.device(device).node; }
  // Who made a node's CPUs ("intel", "amd", "arm"; its first CPU that says), empty where the
  // topology does not say.
  const std::string& cpu_vendor(int node) const;
  // The multicast-capable NVSwitch a GPU reaches over one NVLink, with the link each way.
  struct SwitchPort {
    topo::DeviceId nvswitch;
    sim::LinkId up;     // gpu -> switch
    sim::LinkId down;   // switch -> gpu
  };
  std::optional<SwitchPort> nvls_port(topo::DeviceId gpu) const;
  // Directed Hamiltonian cycles over direct NVLink-class links among `gpus` (one node), as
  // link-disjoint as the links allow, in local indices; empty where the GPUs are not joined
  // by such links (a switch, PCIe) or P2P is off. Searched once per GPU set (mesh_rings.cpp).
  const std::vector<std::vector<int>>& mesh_rings(const std::vector<topo::DeviceId>& gpus) const;

 private:
  const topo::LinkGraph& graph_;
  const Params& params_;
  topo::Router router_;
  std::string arch_name_;
  std::vector<sim::LinkSpec> links_;
  Transports transports_;
  std::vector<std::string> cpu_vendors_;   // by node
  std::optional<topo::DeviceId> cpu_of(topo::DeviceId gpu) const;
  // The route between nodes with each side without GDR detoured through its GPU's socket;
  // nullopt when both sides use GDR.
  std::optional<std::vector<sim::LinkId>> bounced_route(std::span<const sim::LinkId> direct) const;
  struct NetRoute {
    std::vector<sim::LinkId> links;
    bool via_host = false;   // a side without GDR stages through host memory
  };
  mutable std::map<std::tuple<topo::DeviceId, topo::DeviceId, std::uint32_t>, NetRoute> net_routes_;
  // Whether any GPU lacks GPUDirect RDMA to its nearest NIC (decided on first use): when none
  // does, routes between nodes are the router's own, with nothing cached.
  bool any_bounce() const;
  mutable std::optional<bool> any_bounce_;
  mutable std::unordered_map<std::uint64_t, std::vector<sim::LinkId>> staged_routes_;
  // staged(a, b) per same-node GPU pair, decided once:
  // staged_[a][router_.index_in_node(b)], -1 undecided.
  mutable std::vector<std::vector<std::int8_t>> staged_;
  struct MeshCache {
    std::mutex mutex;
    std::map<std::vector<topo::DeviceId>, std::vector<std::vector<int>>> rings;
  };
  std::shared_ptr<MeshCache> mesh_cache_ = std::make_shared<MeshCache>();
};

// The search behind Machine::mesh_rings, uncached (mesh_rings.cpp).
std::vector<std::vector<int>> search_mesh_rings(const Machine& machine, const std::vector<topo::DeviceId>& gpus);

}  // namespace wiresim::models
