// Params: the numbers the collective models run on, per protocol, algorithm, tier class and
// GPU architecture — data, not code. The defaults are models/params.yaml, compiled in;
// load_params reads a replacement file with the same schema.
//
//   const Params p = default_params();
//   const ArchParams& h = p.arch("hopper");
//   sim::Seconds step = p.step_latency(Algorithm::ring, Protocol::simple, TierClass::nvlink);
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "models/collective.h"
#include "sim/units.h"
#include "topologies/link_graph.h"

namespace wiresim::models {

// What a step crosses, for latency: NVLink-class fabric, PCIe/host, or the network.
enum class TierClass { nvlink, pcie, net };
std::string_view to_string(TierClass c);
TierClass tier_class(topo::Tier tier);

struct ProtocolParams {
  double payload = 1.0;   // payload bytes per wire byte
  sim::Bytes step;        // buffer bytes per step (per connection, per channel)
  int slots = 8;          // steps a connection buffers: how far a sender runs ahead
  // What each send of a pipeline costs its channel beyond moving the bytes (the fences, flag
  // writes and polls of one step): paid by the sender before the bytes flow, so a channel's
  // consecutive sends cannot overlap it, and small chunks lose more of the bandwidth.
  sim::Seconds overhead{0.0};
  // Whether a rank forwards data as it lands rather than once the whole step has arrived:
  // LL and LL128 flag every 8-byte or 128-byte line, so the next rank reduces and sends each
  // line as soon as its flag is set (NCCL src/device/prims_ll128.h, recvReduceSendCopy);
  // Simple waits for a whole step. See PlanBuilder::send_through. `cut_through` is for rings
  // and chains, `tree_cut_through` for trees (each rank forwarding up what its children send
  // and down what its parent sends); they are separate switches because the ring's per-step
  // cost is fitted store-and-forward (params.yaml says why) while a tree's depth multiplies it.
  bool cut_through = false;
  bool tree_cut_through = false;
};

struct LatencyRow {
  std::array<sim::Seconds, 3> base{};                  // indexed by Protocol
  std::array<std::array<sim::Seconds, 3>, 3> step{};   // [TierClass][Protocol]
};

struct ArchParams {
  int channels = 16;
  int nvls_channels = 16;
  double nvls_efficiency = 0.0;
  sim::BytesPerSec ll_max;   // LL's cap inside one node (across nodes: Params::ll_max_net)
  sim::BytesPerSec ll128_per_channel;
  // What the NVLSTree kernel moves per channel of NCCL's NVLS graph (a head GPU and its NIC),
  // bus bandwidth, on [2 nodes, more than 2] (NCCL's perChMaxNVLSTreeBws); unlimited where not
  // given.
  std::array<sim::BytesPerSec, 2> nvls_tree_per_channel{sim::BytesPerSec::unlimited(),
                                                        sim::BytesPerSec::unlimited()};
  std::map<topo::Tier, double> link_efficiency;
  // P2P off: what one GPU-to-GPU transfer staged through host memory (NCCL's SHM transport)
  // achieves, payload per direction; unlimited where not given.
  sim::BytesPerSec shm_bandwidth = sim::BytesPerSec::unlimited();
  // Added once to every collective's base latency: what the vendor's library and runtime
  // spend to launch and complete a collective beyond NCCL's latency tables (RCCL on ROCm).
  sim::Seconds launch_overhead{0.0};
  // What each NVLS step (one chunk per channel and head) costs a GPU's reduce-scatter and
  // all-gather streams beyond moving its bytes: the multimem and flag synchronisation through
  // the switch. Paid once per loop per stream, so small chunks lose more of the bandwidth.
  sim::Seconds nvls_step_overhead{0.0};
  // What an NVLS collective costs once, before its first loop, beyond NCCL's latency table:
  // every GPU's first multimem loads and stores wait for the switch's multicast group to be
  // ready on all ranks. Measured as the intercept of an NVLS sweep (time = start + loops x
  // step overhead + bytes / rate); 0 where not given.
  sim::Seconds nvls_start{0.0};
  // What one ring/tree channel (one thread block) moves over NVLink-class links, wire bytes
  // per second: NCCL's per-channel graph bandwidth. Unlimited where not given.
  sim::BytesPerSec channel_bw = sim::BytesPerSec::unlimited();
  // The same for a point-to-point channel (send/recv, all_to_all), one direction: the
  // threads of a P2P channel are split between its sends and its receives.
  sim::BytesPerSec p2p_channel_bw = sim::BytesPerSec::unlimited();
  // What NCCL plans one point-to-point channel to move over the network (NCCL >= 2.29:
  // NCCL_P2P_PER_CHANNEL_NET_BW): a peer on another node gets max(the GPU's NICs, their
  // GB/s / this) channels. Unlimited where not given: 2, as NCCL before 2.29 and RCCL.
  sim::BytesPerSec p2p_net_channel_bw = sim::BytesPerSec::unlimited();
  // Added to every step over NVLink-class links: what this architecture's hop costs beyond
  // NCCL's latency table (flag and data visibility through the switch).
  sim::Seconds nvlink_step_extra{0.0};
  // What each LL128 send costs its channel on this architecture, in place of
  // protocols.ll128.overhead (the GPU-side fences and flag polls of one step depend on the
  // GPU); the protocol's value where not given.
  std::optional<sim::Seconds> ll128_overhead;
  // The same for Simple, in place of protocols.simple.overhead; the protocol's where not given.
  std::optional<sim::Seconds> simple_overhead;
  // PXN (a flow to another rail relayed by the GPU of that rail): NCCL's default since 2.12;
  // RCCL ships it disabled (NCCL_PXN_DISABLE defaults to 1 there).
  bool pxn = true;
  // RCCL's MSCCL all-pairs all_reduce (a direct reduce-scatter then a direct all-gather:
  // two_shot), which RCCL runs ahead of its tuner on 8 GPUs of one node that are all joined
  // pairwise by xGMI, up to this size (out of place; LL below 512 KiB, Simple above); 0 where
  // it is not modelled (NCCL; shipped, cdna3 as well: models/params.yaml [R2]).
  sim::Bytes msccl_all_reduce{0.0};
  double efficiency(topo::Tier tier) const;   // 1.0 where not given
};

struct Params {
  std::array<ProtocolParams, 3> protocols{};  // indexed by Protocol
  int ring_simple_chunk_steps = 4;
  sim::Bytes nvls_chunk;                      // per channel per step
  std::array<sim::Bytes, 3> p2p_chunk{};      // indexed by TierClass
  // NCCL_ALLOC_P2P_NET_LL_BUFFERS: point-to-point over the network may run LL (NCCL's default,
  // false: Simple only; models/p2p.cpp).
  bool p2p_net_ll = false;
  // LL's cap once ranks span nodes, for 2 nodes and for more: NCCL reads its llMaxBws table by
  // the GPU inside one node but by the hosts' CPU vendor across nodes (src/graph/tuning.cc
  // ncclTopoTuneModel; RCCL the same). `amd` for AMD hosts (and, in NCCL, hosts of different
  // vendors), `other` for Intel, Arm and POWER hosts and where the topology does not say.
  struct LlMaxNet {
    std::array<sim::BytesPerSec, 2> amd{};
    std::array<sim::BytesPerSec, 2> other{};
  } ll_max_net;
  // Every algorithm's row: its own where the file has one, else the row its descriptor's
  // latency_row names (models/algorithm.h).
  std::map<Algorithm, LatencyRow> latency;
  std::map<std::string, ArchParams> architectures;
  // Host time to enqueue and launch one collective on one GPU. A thread that launches for G
  // GPUs (nccl-tests -g G) cannot issue collectives faster than one per G x host_launch, so
  // back-to-back collectives take at least that long each.
  sim::Seconds host_launch{0.0};
  // NET/Socket (NCCL_IB_DISABLE=1, or no RDMA NIC): kernel TCP through host memory. What one
  // connection (a channel's send to a peer; one socket, NCCL's default) moves per second, and
  // what each of its steps costs beyond an RDMA step (the system calls and the kernel's copies).
  struct NetSocket {
    sim::BytesPerSec stream_bandwidth = sim::BytesPerSec::unlimited();
    sim::Seconds step_extra{0.0};
  } net_socket;
  std::string source;

  const ProtocolParams& protocol(Protocol p) const { return protocols[static_cast<int>(p)]; }
  // The protocol as it runs on an architecture: its per-send overhead may be the
  // architecture's own (ArchParams::simple_overhead, ll128_overhead).
  ProtocolParams protocol_on(const ArchParams& arch, Protocol p) const;
  // Falls back to "default" for an architecture the file does not list.
  const ArchParams& arch(std::string_view name) const;
  sim::Seconds base_latency(Algorithm a, Protocol p) const;
  sim::Seconds step_latency(Algorithm a, Protocol p, TierClass c) const;
};

const Params& default_params();
// Throws input::InputError at file:line:column for anything it does not understand.
Params load_params(const std::string& path);
Params parse_params(std::string_view yaml_text, const std::string& source);

}  // namespace wiresim::models
