// Point-to-point channels, as NCCL splits a send (src/enqueue.cc addP2pToPlan,
// src/graph/paths.cc ncclTopoComputeP2pChannels, src/init.cc p2pChunkSize):
//   - a peer on another node: 2 channels (NCCL before 2.29, RCCL), or since NCCL 2.29 one per
//     NIC of the GPU and at least its NICs' GB/s / NCCL_P2P_PER_CHANNEL_NET_BW (4 for 400G);
//   - the communicator has p2pnChannels = pow2Up(min(channels, 32)) P2P channels; a peer may
//     use up to pow2Up(the fewest channels any peer gets: 2 per NVLink for NVLink peers, else
//     2), at most p2pnChannels;
//   - an operation starts on nChannelsMin of them (halved while nChannelsMin x ranks exceeds
//     p2pnChannels), fewer if its bytes are under one minimum part each, and doubles while
//     its parts exceed the maximum part (up to the per-peer limit);
//   - parts: one node: step / 8 to step x 32; several nodes: step / 2 to step, where the step
//     is the P2P chunk (512 KiB over NVLink in one node, 128 KiB over PCIe or the network).
//   - the protocol is not tuned: LL where the operation's bytes are at most
//     NCCL_P2P_LL_THRESHOLD (16 KiB, the default) per channel, else Simple; never LL128; and
//     never LL over the network: a connection runs LL only where it has LL buffers, and the
//     net transport's P2P connections get them only with NCCL_ALLOC_P2P_NET_LL_BUFFERS=1
//     (src/transport/net.cc, src/init.cc: default 0 since NCCL 2.14, "LL protocol for ...
//     network communication (off by default)"; RCCL's default is 0 too). Params::p2p_net_ll
//     models the setting.
// A P2P channel moves at most the architecture's p2p_channel_bw each way.
#include <algorithm>
#include <cmath>

#include "models/plan.h"

namespace wiresim::models {
namespace {

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// NVLinks on the path from a to b: the link count of the GPU's first hop (NV18 to the
// switch, NV2 on a bonded mesh pair).
int nvlinks_between(const Machine& m, topo::DeviceId a, topo::DeviceId b) {
  const auto route = m.route(a, b);
  if (route.empty()) return 1;
  return std::max(1, m.graph().link(route.front()).count);
}

// The channels NCCL gives a peer on another node (ncclTopoGetNchannels): 2 before 2.29 (and in
// RCCL); since, max(the GPU's nearest NICs, divUp(their GB/s, p2p_net_channel_bw)), the GB/s
// the NICs' line rate truncated to an integer as NCCL does.
int net_peer_channels(const Machine& m, topo::DeviceId gpu) {
  const sim::BytesPerSec per_channel = m.arch().p2p_net_channel_bw;
  const auto nics = m.router().nearest_nics(gpu);
  if (per_channel.is_unlimited() || nics.empty()) return 2;
  double gbps = 0.0;
  for (auto nic : nics)
    for (auto l : m.graph().out_links(nic))
      if (topo::is_network_tier(m.graph().link(l).tier)) gbps += m.graph().link(l).bandwidth.count() / 1e9;
  const int need = static_cast<int>(std::ceil(std::floor(gbps) / (per_channel.count() / 1e9)));
  return std::max(static_cast<int>(nics.size()), need);
}

}  // namespace

TierClass p2p_tier(const Machine& machine, const Problem& problem) {
  if (node_count(machine, problem) > 1) return TierClass::net;
  for (std::size_t i = 0; i < problem.ranks.size(); ++i)
    for (std::size_t j = 0; j < problem.ranks.size(); ++j)
      if (i != j && (machine.staged(problem.ranks[i], problem.ranks[j]) ||
                     machine.tier_class(machine.route(problem.ranks[i], problem.ranks[j])) != TierClass::nvlink))
        return TierClass::pcie;
  return TierClass::nvlink;
}

P2pShape p2p_shape(const Machine& machine, const Problem& problem) {
  const int ranks = static_cast<int>(problem.ranks.size());
  const int channels = pow2_up(std::min(machine.arch().channels, 32));
  // The fewest channels any peer of the first rank gets (NCCL takes the minimum over pairs;
  // the ranks of a collective are alike).
  int per_peer = channels;
  const auto first = problem.ranks.front();
  const int net_peer = net_peer_channels(machine, first);
  for (int r = 1; r < ranks; ++r) {
    const auto peer = problem.ranks[r];
    int n = machine.node_of(peer) == machine.node_of(first) ? 2 : net_peer;
    if (machine.node_of(peer) == machine.node_of(first) && !machine.staged(first, peer) &&
        machine.tier_class(machine.route(first, peer)) == TierClass::nvlink)
      n = 2 * nvlinks_between(machine, first, peer);
    per_peer = std::min(per_peer, n);
  }
  P2pShape shape;
  shape.max_channels = std::min(pow2_up(per_peer), channels);
  shape.min_channels = shape.max_channels;
  while (shape.min_channels * ranks > channels && shape.min_channels > 1) shape.min_channels /= 2;
  const TierClass tier = p2p_tier(machine, problem);
  const double step = machine.params().p2p_chunk[static_cast<int>(tier)].count();
  const bool multi_node = tier == TierClass::net;
  shape.ll = !multi_node || machine.params().p2p_net_ll;
  shape.step = step;
  shape.min_part = multi_node ? step / 2 : step / 8;
  shape.max_part = multi_node ? step : step * 32;
  return shape;
}

int p2p_channels(const P2pShape& shape, sim::Bytes bytes) {
  int n = std::min(shape.min_channels, std::max(1, static_cast<int>(std::ceil(bytes.count() / shape.min_part))));
  double part = std::max(shape.min_part, std::ceil(bytes.count() / n));
  while (part > shape.max_part && n <= shape.max_channels / 2) {
    n *= 2;
    part = std::ceil(bytes.count() / n);
  }
  return n;
}

int p2p_channels(const Machine& machine, const Problem& problem, sim::Bytes bytes) {
  return p2p_channels(p2p_shape(machine, problem), bytes);
}

sim::Bytes p2p_chunk(const Params& params, const P2pShape& shape, Protocol protocol, sim::Bytes bytes, bool network) {
  const ProtocolParams& proto = params.protocol(protocol);
  const bool simple = protocol == Protocol::simple;
  // The step in buffer bytes (Simple: the P2P chunk) and the payload a chunk of it carries.
  const sim::Bytes step = simple ? sim::Bytes{shape.step} : proto.step;
  const double payload = simple ? 1.0 : proto.payload;
  // NCCL tunes the chunk for the network only: a quarter for a Simple send under one step,
  // a half for any send under eight.
  double share = 1.0;
  if (network && simple && bytes < step) share = 0.25;
  else if (network && bytes < step * 8.0) share = 0.5;
  return step * (payload * share);
}

Protocol p2p_protocol(const P2pShape& shape, sim::Bytes bytes) {
  constexpr double kLlThreshold = 16384.0;   // NCCL_P2P_LL_THRESHOLD's default, bytes per channel
  return shape.ll && bytes.count() <= p2p_channels(shape, bytes) * kLlThreshold ? Protocol::ll : Protocol::simple;
}

Protocol p2p_protocol(const Machine& machine, const Problem& problem, sim::Bytes bytes) {
  return p2p_protocol(p2p_shape(machine, problem), bytes);
}

sim::Bytes p2p_largest_send(const Problem& problem) {
  if (problem.op == Collective::send_recv) return problem.size;
  const int n = static_cast<int>(problem.ranks.size());
  if (problem.matrix.empty()) return problem.size / static_cast<double>(n);
  sim::Bytes largest{0.0};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) largest = std::max(largest, all_to_all_piece(problem, i, j));
  return largest;
}

}  // namespace wiresim::models
