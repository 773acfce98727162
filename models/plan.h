// Plans: a collective expanded into a DAG of chunk transfers, and the builder the algorithm
// files (ring.cpp, tree.cpp, nvls.cpp, ...: one per algorithm, models/algorithm.h) share.
//
// Every send is two DAG nodes: the transfer (its bytes on the route's links, sharing them
// max-min fairly) and its arrival (a delay of one step latency: NCCL's per-step cost for the
// tier crossed, which includes the wire latency). The sender's next send waits only for the
// transfer, so latencies pipeline; the receiver's use of the data waits for the arrival.
// Channels that follow the same route are merged into one transfer of their summed bytes
// with their summed rate cap: equivalent, as they would share the same links equally.
//
//   Plan plan = expand(machine, Problem{Collective::all_reduce, parse_size("1GiB"), ranks},
//                      Choice{Algorithm::ring, Protocol::simple, 16});
//   sim::RunResult r = sim::run_dag(machine.links(), plan.dag);
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collective.h"
#include "models/limits.h"
#include "models/machine.h"
#include "sim/transfer_dag.h"

namespace wiresim::models {

struct Problem {
  Problem() = default;
  Problem(Collective op_, sim::Bytes size_, std::vector<topo::DeviceId> ranks_, int root_ = 0)
      : op(op_), size(size_), ranks(std::move(ranks_)), root(root_) {}

  Collective op = Collective::all_reduce;
  sim::Bytes size;                       // nccl-tests size (see collective.h)
  std::vector<topo::DeviceId> ranks;     // GPUs, rank order
  int root = 0;                          // broadcast / reduce
  // all_to_all only: bytes rank i sends rank j at [i * n + j] (skewed MoE routing, say);
  // empty means uniform, size / n to each rank.
  std::vector<double> matrix;
  Limits limits;                         // refused up front beyond these (models/limits.h)
  // GPUs that one host thread launches collectives for (nccl-tests -g): back-to-back
  // collectives take at least gpus_per_thread x Params::host_launch each.
  int gpus_per_thread = 1;
};

struct Choice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  int channels = 16;
  // Fidelity knob: merge up to this many consecutive pipeline units into one transfer —
  // chunks of a ring pass first, then consecutive ring (or pairwise) steps. 1 = full detail.
  // Exact in lock step on uniform links (docs/scale.md); see PlanBuilder::send_merged.
  int aggregation = 1;
};

struct Plan {
  sim::TransferDag dag;
  int steps = 0;          // algorithm steps a chunk goes through (2(n-1) for a ring all_reduce)
  int loops = 0;          // chunks each rank pushes through the pipeline
  std::string shape;      // one line: "ring x1, 32 loops of 32 MiB"
};

// Why an algorithm cannot run this problem on this machine, or nullopt if it can: the
// problem's own faults, then the algorithm's descriptor (collectives, protocols, why_not).
std::optional<std::string> why_not(const Machine& machine, const Problem& problem, Algorithm algorithm,
                                   Protocol protocol);
// The algorithm's descriptor's expansion. Throws input::InputError with why_not's reason when
// the algorithm does not apply.
Plan expand(const Machine& machine, const Problem& problem, const Choice& choice);

// Chunks of at most `chunk` bytes that carry `total` (at least 1, for an empty buffer), and
// the size of chunk k (the last one may be smaller).
int chunk_count(sim::Bytes total, sim::Bytes chunk);
sim::Bytes chunk_size(sim::Bytes total, sim::Bytes chunk, int k);
// chunk_count for plan-size estimates (models/limits.h): at least one, also for a zero chunk.
double pipeline_units(sim::Bytes bytes, sim::Bytes chunk);

// Point-to-point operations (models/p2p.cpp, as NCCL's addP2pToPlan): the tier their P2P
// chunk follows (net across nodes, nvlink when every pair is on NVLink, else pcie); the
// channels one operation of `bytes` runs on; its chunk (Simple: the P2P chunk; LL: one protocol
// step of payload; across nodes a quarter of it for Simple operations under one step and a
// half for operations under eight).
TierClass p2p_tier(const Machine& machine, const Problem& problem);
int p2p_channels(const Machine& machine, const Problem& problem, sim::Bytes bytes);
// The same in two steps, for callers that ask for many sizes of one problem: what does not
// depend on the bytes (a pass over the ranks), then the channels for `bytes`.
struct P2pShape {
  int max_channels = 1, min_channels = 1;   // a peer's limit; where an operation starts
  double min_part = 0.0, max_part = 0.0;    // bytes per channel part
  double step = 0.0;                        // the P2P chunk of the operation's tier (bytes)
  bool ll = true;                           // LL may run: false across nodes unless Params::p2p_net_ll
};
P2pShape p2p_shape(const Machine& machine, const Problem& problem);
int p2p_channels(const P2pShape& shape, sim::Bytes bytes);
// The chunk of one operation of `bytes`; `network`: the operation crosses nodes (NCCL cuts
// the chunk only for its net transport).
sim::Bytes p2p_chunk(const Params& params, const P2pShape& shape, Protocol protocol, sim::Bytes bytes, bool network);
// The protocol NCCL runs a point-to-point operation of `bytes` with: it does not tune it, but
// takes LL where the bytes are at most NCCL_P2P_LL_THRESHOLD (16 KiB) per channel and Simple
// above, never LL128 (addP2pToPlan); across nodes always Simple, as NCCL allocates no LL
// buffers for point-to-point over the network (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0, the default
// since NCCL 2.14 and in RCCL; Params::p2p_net_ll sets it). One protocol per operation: where
// ranks span nodes, the sends inside a node run Simple too (NCCL would give them LL; the
// network's sends set the time).
Protocol p2p_protocol(const P2pShape& shape, sim::Bytes bytes);
Protocol p2p_protocol(const Machine& machine, const Problem& problem, sim::Bytes bytes);
// The send whose bytes that rule reads for a whole operation: send_recv's one send,
// all_to_all's largest piece (size / n, or the traffic matrix's largest off-diagonal entry).
sim::Bytes p2p_largest_send(const Problem& problem);

// Ranks grouped by node, in rank order: groups[k] holds indices into problem.ranks.
std::vector<std::vector<int>> ranks_by_node(const Machine& machine, const Problem& problem);
// How many nodes the ranks span.
int node_count(const Machine& machine, const Problem& problem);
// Whether every node holds the same number of the ranks.
bool uniform_nodes(const std::vector<std::vector<int>>& by_node);
// Whether every pair of ranks is joined by NVLink-class links.
bool one_nvlink_domain(const Machine& machine, const Problem& problem);
// all_to_all: the bytes rank index i sends rank index j (problem.matrix, or size / n).
sim::Bytes all_to_all_piece(const Problem& problem, int i, int j);
// n ranks each reading n inputs of `bytes` and writing one result: (n+1) x bytes at the
// first GPU's memory speed (0 where it is unknown).
sim::Seconds reduce_inputs_time(const Machine& machine, const Problem& problem, sim::Bytes bytes);

constexpr sim::NodeId kNoNode = 0xFFFFFFFFu;

class PlanBuilder {
 public:
  PlanBuilder(const Machine& machine, const Problem& problem, const Choice& choice, Plan& plan);

  struct Sent {
    sim::NodeId transfer;
    sim::NodeId arrival;
    sim::NodeId head = kNoNode;   // send_through: its first lines at the receiver
  };
  // `payload` bytes from rank `from` to rank `to` (indices into problem.ranks), after `deps`
  // (kNoNode entries are skipped). Wire bytes = payload / protocol payload efficiency
  // (and / extra_efficiency). `reduce`: the receiver combines the data, which adds one
  // step's worth of reduction at memory speed to the arrival.
  // `merged`: how many sends this one stands for (send_merged), each paying the protocol's
  // per-send overhead.
  Sent send(int from, int to, sim::Bytes payload, std::initializer_list<sim::NodeId> deps,
            std::uint32_t flow, sim::LabelId label, sim::BytesPerSec cap, bool reduce = false,
            sim::Seconds extra_arrival = sim::Seconds{0.0}, int merged = 1);
  // A send the GPU has already posted, its per-send overhead paid by a delay among `deps`:
  // a network send that the proxy's NIC moves while the GPU posts the next one. The bytes
  // start as soon as `deps` are met.
  Sent send_posted(int from, int to, sim::Bytes payload, std::initializer_list<sim::NodeId> deps,
                   std::uint32_t flow, sim::LabelId label, sim::BytesPerSec cap);
  // A transfer over explicit links (a multicast tree) with explicit step latency.
  Sent send_links(std::span<const sim::LinkId> links, int track, int peer, sim::Bytes payload,
                  std::initializer_list<sim::NodeId> deps, sim::Seconds arrival_latency,
                  sim::LabelId label, sim::BytesPerSec cap, double extra_efficiency = 1.0);
  // `merged` consecutive sends aggregated into one (Choice::aggregation): `payload` is
  // their total; the arrival pays `merged` step latencies and `reductions` reductions of
  // payload / merged each, so a lock-step pipeline keeps its time. merged = 1 is send().
  Sent send_merged(int from, int to, sim::Bytes payload, int merged, int reductions,
                   std::initializer_list<sim::NodeId> deps, std::uint32_t flow, sim::LabelId label,
                   sim::BytesPerSec cap);
  // send_merged for a protocol that forwards as it receives (ProtocolParams::cut_through),
  // `forwarded` being the send whose data this one passes on (all kNoNode: none). The sender
  // pays its overhead after `deps` and after the forwarded send's head (Sent::head: its first
  // lines here, a step latency after its bytes began), so consecutive hops overlap; then its
  // bytes flow. Its data arrives a step latency after its bytes have left and no earlier than
  // the forwarded data, plus the merged latencies and reductions as send_merged's. Across the
  // network (whole_steps) the proxy posts a step to the NIC only once all its lines are in
  // the buffer (src/transport/net.cc, sendProxyProgress): such a send waits for the forwarded
  // arrival instead. Four DAG nodes: start, transfer, arrival, head.
  Sent send_through(int from, int to, sim::Bytes payload, int merged, int reductions,
                    std::initializer_list<sim::NodeId> deps, const Sent& forwarded, std::uint32_t flow,
                    sim::LabelId label, sim::BytesPerSec cap);
  // The same forwarding what several sends bring (a tree rank passing its children's data up):
  // the start waits for every one's head (or arrival), the arrival for every one's arrival.
  // None (an empty span): a leaf's own data.
  Sent send_through(int from, int to, sim::Bytes payload, int merged, int reductions,
                    std::initializer_list<sim::NodeId> deps, std::span<const Sent> forwarded,
                    std::uint32_t flow, sim::LabelId label, sim::BytesPerSec cap);
  // Whether a send from `from` to `to` moves whole steps even under a cut-through protocol:
  // it crosses the network, through the proxy (send_through).
  bool whole_steps(int from, int to) const;
  sim::NodeId delay(sim::Seconds d, std::initializer_list<sim::NodeId> deps, sim::LabelId label, int track);
  void depend(sim::NodeId before, sim::NodeId after);

  // The launch node: base latency of the algorithm/protocol; every first step waits on it.
  sim::NodeId launch() const { return launch_; }
  // Step latency between two ranks: max(per-step latency of the tier class, wire latency).
  sim::Seconds step_latency(int from, int to) const;
  // Reduction arithmetic exposed per step: one buffer step read twice and written once.
  sim::Seconds reduction_time(sim::Bytes payload) const;
  sim::LabelId label(std::string_view name) { return plan_.dag.intern_label(name); }

  const Machine& machine() const { return machine_; }
  const Problem& problem() const { return problem_; }
  const Choice& choice() const { return choice_; }
  const ProtocolParams& protocol() const { return protocol_; }
  int nodes() const { return nodes_; }
  topo::DeviceId gpu(int rank) const { return problem_.ranks[rank]; }
  // Total rate cap of one GPU's sends under this protocol (LL's ll_max, LL128's per-channel
  // cap times channels); unlimited for Simple.
  sim::BytesPerSec protocol_cap() const;
  // Ring and tree channels are thread blocks, each moving at most the architecture's
  // channel_bw over NVLink-class links: from now on, every send whose route is NVLink-class
  // is capped at `channels` x channel_bw (wire bytes). 0 lifts the cap.
  void cap_nvlink_channels(double channels) { nvlink_channels_ = channels; }
  // The payload rate cap that cap_nvlink_channels puts on a send between these ranks.
  sim::BytesPerSec channel_cap(int from, int to) const;
  // The same for a send along `route` (a route between two ranks, as route() gives it).
  sim::BytesPerSec channel_cap(std::span<const sim::LinkId> route) const;
  // The payload rate cap of `channels` point-to-point channels between these ranks over
  // NVLink-class links (p2p_channel_bw each); unlimited over other links.
  sim::BytesPerSec p2p_cap(int from, int to, double channels) const;
  // Under NET/Socket, what a send between nodes may move: one socket stream per channel it
  // stands for (cap_nvlink_channels), payload; unlimited otherwise.
  sim::BytesPerSec stream_cap(int from, int to) const;
  sim::TransferDag& dag() { return plan_.dag; }
  // Sends from rank `from` to rank `to` (on another node) take `rail` (Machine::route with a
  // rail): a ring channel's NIC. Set before the first send between them.
  void set_rail(int from, int to, int rail) { rails_[{from, to}] = rail; }
  // The route of a send between these ranks on ECMP path `flow` (its rail, if set).
  std::span<const sim::LinkId> route(int from, int to, std::uint32_t flow) const;

 private:
  // What every send from `from` to `to` on ECMP path `flow` shares, worked out on the first
  // such send: its route, interned in the DAG, its step latency, whether it is staged and
  // its socket stream cap per channel (Machine::stream_cap).
  struct Hop {
    sim::RouteId route = 0;
    sim::Seconds step_latency;
    bool staged = false;
    sim::BytesPerSec stream = sim::BytesPerSec::unlimited();
    TierClass tier = TierClass::nvlink;   // the route's tier class (NVLink: ring/tree channel caps apply)
  };
  struct HopKey {
    int from, to;
    std::uint32_t flow;
    bool operator==(const HopKey&) const = default;
  };
  struct HopHash {
    std::size_t operator()(const HopKey& k) const {
      const std::uint64_t a = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.from)) << 32) |
                              static_cast<std::uint32_t>(k.to);
      return static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ull) ^ (k.flow * 0xC2B2AE3D27D4EB4Full));
    }
  };
  const Hop& hop(int from, int to, std::uint32_t flow);
  // The arrival a merged send adds beyond its own: the other merged - 1 step latencies of
  // `h` and the reductions of every merged piece (send_merged, send_through).
  sim::Seconds merged_extra(const Hop& h, sim::Bytes payload, int merged, int reductions) const;
  // whole_steps(from, to) for a hop already worked out.
  static bool whole_steps(const Hop& h);
  // send() and send_posted(): the transfer starts `overhead` after its deps.
  Sent transfer(int from, int to, sim::Bytes payload, std::initializer_list<sim::NodeId> deps, std::uint32_t flow,
                sim::LabelId label, sim::BytesPerSec cap, bool reduce, sim::Seconds extra_arrival,
                sim::Seconds overhead);

  const Machine& machine_;
  const Problem& problem_;
  const Choice& choice_;
  Plan& plan_;
  ProtocolParams protocol_;   // as it runs on this machine's architecture (Params::protocol_on)
  int nodes_ = 1;
  sim::NodeId launch_ = kNoNode;
  sim::BytesPerSec memory_bandwidth_;
  sim::BytesPerSec ll_cap_;   // ll_cap(machine, problem)
  double nvlink_channels_ = 0.0;
  double channels_per_send() const { return nvlink_channels_ > 0.0 ? nvlink_channels_ : 1.0; }
  std::unordered_map<HopKey, Hop, HopHash> hops_;
  // The last hop each rank sent on: a ring or chain sends on the same one again and again.
  std::vector<std::pair<HopKey, Hop>> last_hop_;
  std::map<std::pair<int, int>, int> rails_;
};

// What LL moves per GPU at most for these ranks, NCCL's llMaxBws: inside one node the GPU
// architecture's (ArchParams::ll_max), across nodes the row of the hosts' CPU vendor
// (Params::ll_max_net: AMD's for AMD hosts, Intel's for any other or unknown).
sim::BytesPerSec ll_cap(const Machine& machine, const Problem& problem);

// The floor a host thread puts under back-to-back collectives: gpus_per_thread x host_launch.
sim::Seconds host_floor(const Machine& machine, const Problem& problem);

// One ring pass (all_reduce, all_gather or reduce_scatter) over `order` (rank indices).
// `block` is the bytes of one rank's block in this ring instance; `chunk` the bytes one
// transfer carries at most; entry[p] (or kNoNode) must end before position p starts.
// Returns, per position, the node after which that rank is done with this ring.
struct RingPass {
  Collective op = Collective::all_reduce;
  std::vector<int> order;
  sim::Bytes block;
  sim::Bytes chunk;
  int slots = 2;
  std::uint32_t flow = 0;
  sim::BytesPerSec cap = sim::BytesPerSec::unlimited();
  std::vector<sim::NodeId> entry;
};
std::vector<sim::NodeId> build_ring_pass(PlanBuilder& b, const RingPass& pass, int* loops);
// The sends build_ring_pass makes for n ranks, `loops` chunks and `steps` steps per chunk,
// after Choice::aggregation (chunks merge first, then steps).
double ring_pass_sends(double n, double loops, double steps, int aggregation);
// What one send weighs in a plan-size estimate (models/limits.h counts two DAG nodes a send):
// 2 for one that forwards as it receives, four nodes (send_through); a ring or chain's under
// ProtocolParams::cut_through, a tree's under tree_cut_through.
inline double send_weight(bool forwards) { return forwards ? 2.0 : 1.0; }
inline double ring_send_weight(const ProtocolParams& protocol) { return send_weight(protocol.cut_through); }

// NCCL's tree: inside each node the chain by_node[k] (head first), between nodes NCCL's
// double binary tree of the chains' heads over the node positions (which = 0: the in-order
// binary tree of ncclGetBtree; 1: its mirror, or its shift for an odd count). Indices are rank
// indices; `ranks` is the number of ranks.
struct TreeShape {
  std::vector<int> parent;                  // by rank index; -1 at the root (and outside)
  std::vector<std::vector<int>> children;
  std::vector<int> depth;
  int root = 0;
};
TreeShape build_tree(const std::vector<std::vector<int>>& by_node, int which, int ranks);
// The chains of the tree pairs NCCL runs for `channels` channels: one pair per rail (up to
// channels / 2, and no more than the smallest node's GPUs), rail r's chain in every node
// starting at the node's GPU r (the GPU of NIC r) and going on in rank order, or on a mesh
// along the node's mesh cycle r mod C (Machine::mesh_rings).
std::vector<std::vector<std::vector<int>>> tree_chains(const Machine& machine, const Problem& problem,
                                                      const std::vector<std::vector<int>>& by_node, int channels);

// The order ring instance r of R visits the ranks: inside each node consecutively, entering
// node k at local position (r - k) mod g, so that each instance crosses between nodes on its
// own rail. With one node (or R = 1) it is rank order.
std::vector<int> ring_order(const std::vector<std::vector<int>>& by_node, int r, int rings);
// The rings an all_reduce / all_gather / reduce_scatter runs, each an order of rank indices.
// Inside a node whose GPUs are joined by direct links (a mesh), ring instance r follows the
// node's mesh cycle r mod C (Machine::mesh_rings), else rank order. One node: one instance per
// mesh cycle (at most `channels`). Several nodes: one instance per rail (no more than a node
// has mesh cycles), each entering and leaving every node at the same GPUs: as NCCL's graph
// search builds rings (NET n -> GPU a -> .. -> GPU x -> NET n), instance r enters at local
// GPU r and leaves from a GPU that reaches r's NIC through PCIe switches alone, so it goes
// out by the NIC it came in by; where none does, as ring_order. On meshes the entry and exit
// GPUs are chosen so that every NIC sends and receives one instance.
std::vector<std::vector<int>> ring_orders(const Machine& machine, const Problem& problem, int channels);
// The chain a broadcast (from the root, first) or a reduce (towards the root, last) follows:
// the ring's order starting at the root, reversed for a reduce.
std::vector<int> chain_order(const std::vector<std::vector<int>>& by_node, Collective op, int root);
// Ring instances to build: ring_orders(...).size().
int ring_instances(const Machine& machine, const Problem& problem, int channels);
// Buffer steps per ring chunk: 4 for Simple all_reduce/all_gather/reduce_scatter, else 1.
int ring_chunk_steps(const Params& params, const Choice& choice, Collective op);
// Bytes per transfer of a merged ring instance: channels x step x chunk steps x payload.
sim::Bytes ring_chunk(const Machine& machine, const Choice& choice, Collective op, int channels_in_instance);

}  // namespace wiresim::models
