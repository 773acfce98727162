// Router: the links a transfer between two devices crosses, as a real system routes it.
//
// Inside an NVLink domain: GPU -> NVSwitch -> GPU (or the direct xGMI/NVLink link in a
// mesh). Without NVLink: PCIe up through switches, the root complex and, across sockets,
// the inter-socket link. Across nodes: GPU -> nearest NIC (the one under the same PCIe
// switch) -> rail leaf -> spine -> leaf -> NIC -> GPU, with ECMP over equal-cost spine paths
// chosen deterministically from `flow`. Routes are computed once per (src, dst, path choice)
// and cached.
//
//   Router router(graph);
//   auto links = router.route(graph.gpus()[0], graph.gpus()[9]);   // across two nodes
//   sim::Seconds alpha = router.latency(links);
#pragma once

#include <cstdint>
#include <span>
#include <string>
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

  // Throws sim::InputError naming both devices when dst cannot be reached from src.
  std::span<const LinkId> route(DeviceId src, DeviceId dst, std::uint32_t flow = 0) const;
  sim::Seconds latency(std::span<const LinkId> links) const;
  sim::BytesPerSec bottleneck(std::span<const LinkId> links) const;
  Transport transport(DeviceId src_gpu, DeviceId dst_gpu) const;
  // nvidia-smi topo -m label for a GPU/NIC pair: "X", "NV18", "PIX", "PXB", "PHB", "NODE",
  // "SYS", or "NET" across nodes.
  std::string matrix_label(DeviceId a, DeviceId b) const;
  // GPUs joined by NVLink-class links (nvlink, xgmi, c2c) with no network hop: one id per
  // domain, indexed like graph.gpus().
  const std::vector<int>& nvlink_domain() const { return domain_; }

  const LinkGraph& graph() const { return graph_; }

 private:
  const LinkGraph& graph_;
  std::vector<int> domain_;
  mutable std::unordered_map<std::uint64_t, std::vector<LinkId>> cache_;
};

}  // namespace wiresim::topo
