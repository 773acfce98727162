// Router: the links a transfer between two devices crosses, as a real system routes it.
//
// Inside an NVLink domain: GPU -> NVSwitch -> GPU (or the direct xGMI/NVLink link in a
// mesh). Without NVLink: PCIe up through switches, the root complex and, across sockets,
// the inter-socket link. Across nodes: GPU -> nearest NIC (the one under the same PCIe
// switch) -> rail leaf -> spine -> leaf -> NIC -> GPU, with ECMP over equal-cost spine paths
// chosen deterministically from `flow`. Routes are computed once per (src, dst, path choice)
// and cached.
//
// Inside a node the route is the cheapest path by tier (an NVLink-class hop costs 1, a
// PCIe hop 4, an inter-socket hop 16; ties go to fewer hops, then to lower link ids) that
// never passes *through* a GPU or a NIC: hardware does not forward between its ports.
// Across nodes, a GPU pinned to a NIC (the topology's nic_binding) uses that one, however
// far; otherwise a GPU with several equally near NICs uses NIC (its index in the node +
// flow) mod their number. With PXN on (set_pxn), a flow to another rail leaves through a NIC
// of that rail: directly when the GPU reaches one through PCIe switches alone (NCCL's PXB),
// else through the GPU of that rail over NVLink (PXN), as NCCL's paths.cc decides. At every
// switch with several equal-cost next hops the hop is (hash(src NIC, dst NIC, hop) + flow)
// mod their number: consecutive flows of one pair take different spines, and different pairs
// start at different spines, as ECMP hashing does.
//
//   Router router(graph);
//   auto links = router.route(graph.gpus()[0], graph.gpus()[9]);   // across two nodes
//   sim::Seconds alpha = router.latency(links);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "topologies/link_graph.h"

namespace wiresim::topo {

// How NCCL would move data between two GPUs (what NCCL_DEBUG=INFO prints).
enum class Transport { p2p_nvlink, p2p_pcie, shm, net };
std::string_view to_string(Transport t);  // "P2P/NVLink", "P2P/PCIe", "SHM", "NET"

class Router {
 public:
  explicit Router(const LinkGraph& graph);

  // Throws input::InputError naming both devices when dst cannot be reached from src.
  // Not thread-safe (the cache fills as routes are asked for).
  std::span<const LinkId> route(DeviceId src, DeviceId dst, std::uint32_t flow = 0) const;
  // PXN (NCCL's default since 2.12): a GPU-to-GPU route between nodes whose NICs sit on
  // different rails first crosses NVLink to the GPU of the source node whose NIC is on the
  // destination's rail, and leaves through that NIC — it stays on the rail instead of
  // crossing the spines. Off by default (a topology's own routes); models::Machine turns it
  // on. Set it before the first route is asked for.
  void set_pxn(bool on) { pxn_ = on; }
  // A route between GPUs of two nodes on one rail, as NCCL's ring channels keep one NIC at
  // both ends ("NET n -> GPU a -> .. -> GPU x -> NET n", src/graph/search.cc): out through
  // the NIC of src's node on `rail`, reached over PCIe (through the CPU where that is the
  // path), in through the NIC of dst's node on it. route() where there is no such NIC.
  std::span<const LinkId> route_on_rail(DeviceId src, DeviceId dst, int rail, std::uint32_t flow = 0) const;
  sim::Seconds latency(std::span<const LinkId> links) const;
  sim::BytesPerSec bottleneck(std::span<const LinkId> links) const;
  // NVLink-class route -> P2P/NVLink; PCIe route through switches only (PIX, PXB) ->
  // P2P/PCIe; through a host bridge or CPU (PHB, NODE, SYS) -> SHM, as NCCL's default
  // P2P level (PATH_PXB, NVIDIA/nccl src/graph/paths.cc ncclTopoCheckP2p); other node -> NET.
  Transport transport(DeviceId src_gpu, DeviceId dst_gpu) const;
  // nvidia-smi topo -m label for a GPU/NIC pair: "X", "NV18", "PIX", "PXB", "PHB", "NODE",
  // "SYS", or "NET" across nodes ("XGMI" for an xGMI route, as rocm-smi says).
  std::string matrix_label(DeviceId a, DeviceId b) const;
  // GPUs joined by NVLink-class links (nvlink, xgmi, c2c) with no network hop: one id per
  // domain, indexed like graph.gpus().
  const std::vector<int>& nvlink_domain() const { return domain_; }
  int domain_of(DeviceId gpu) const;

  // The NICs of the GPU's node nearest to it (the cheapest route), lowest id first; empty
  // when its node has none.
  std::span<const DeviceId> nearest_nics(DeviceId gpu) const;
  // The NIC a GPU's flow leaves its node through (see above); throws when there is none.
  DeviceId nic_for(DeviceId gpu, std::uint32_t flow = 0) const;
  // A NIC of src's node on `rail` that src reaches over PCIe switches alone, no CPU on the
  // way (NCCL's PXB or nearer); nullopt when there is none.
  std::optional<DeviceId> pxb_nic(DeviceId src, int rail) const;
  // The switch, one NVLink hop away, that does in-switch reduction and multicast (NVLS).
  std::optional<DeviceId> multicast_switch(DeviceId gpu) const;

  // A GPU's position among its node's GPUs (graph.gpus() order), and how many GPUs a node has.
  std::uint32_t index_in_node(DeviceId gpu) const { return index_in_node_[gpu]; }
  std::size_t gpus_in_node(int node) const;

  const LinkGraph& graph() const { return graph_; }

 private:
  enum class Mode { route, host };  // host: the PCIe/host path, ignoring GPU-GPU fabrics
  struct Best {
    int cost;
    int hops;
    LinkId via;  // the link that reached the device
  };
  std::unordered_map<DeviceId, Best> search(DeviceId src, std::optional<DeviceId> dst, Mode mode) const;
  std::vector<LinkId> cheapest(DeviceId src, DeviceId dst, Mode mode) const;
  std::vector<LinkId> network_route(DeviceId src_nic, DeviceId dst_nic, std::uint32_t flow) const;
  const std::vector<std::uint16_t>& hops_to_switch(std::size_t target) const;
  std::string host_label(DeviceId a, DeviceId b) const;

  std::optional<DeviceId> pxn_relay(DeviceId src, int rail, std::uint32_t flow) const;
  std::optional<DeviceId> nic_on_rail(int node, int rail) const;

  const LinkGraph& graph_;
  bool pxn_ = false;
  std::vector<int> domain_;
  std::vector<std::uint32_t> index_in_node_;     // per device: its position among its node's GPUs
  std::vector<std::int32_t> switch_index_;       // per device: index among network switches, or -1
  std::vector<DeviceId> switches_;
  mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> cache_;
  // Routes between two GPUs of one node (flow-independent), the most asked for:
  // gpu_routes_[src][index_in_node_[dst]], empty until found.
  mutable std::vector<std::vector<std::vector<LinkId>>> gpu_routes_;
  mutable std::unordered_map<DeviceId, std::vector<DeviceId>> nearest_nics_;
  mutable std::unordered_map<std::uint64_t, std::optional<DeviceId>> pxb_nics_;   // by (src, rail)
  mutable std::map<std::tuple<DeviceId, DeviceId, int, std::uint32_t>, std::vector<LinkId>> rail_routes_;
  std::unordered_map<int, std::vector<DeviceId>> gpus_by_node_;
  std::unordered_map<int, std::vector<DeviceId>> nics_by_node_;   // in device order
  mutable std::unordered_map<std::size_t, std::vector<std::uint16_t>> switch_hops_;
};

}  // namespace wiresim::topo
