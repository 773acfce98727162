// Building blocks of the closed forms (each algorithm's closed_form, models/algorithm.h): the
// rate each of a set of simultaneous sends gets, and the time of ring passes and of phases.
//
// Links are shared only by the algorithm's own symmetric traffic, max-min fairly, as the
// simulation's network shares them: shared_rates solves that one problem. A ring pass is
// played step by step as build_ring_pass schedules it; a phase is simultaneous sends, as
// long as the slowest one plus its step latency.
//
//   std::vector<Edge> edges{{0, 1, 0}, {1, 0, 1}};
//   const double t = phase_time(b, edges, sim::Bytes{1 << 20}, b.protocol_cap());
//   const std::vector<double> rates = shared_rates(b, edges, sim::BytesPerSec::unlimited());
#pragma once

#include <cstdint>
#include <utility>
#include <span>
#include <vector>

#include "models/alpha_beta.h"
#include "models/plan.h"

namespace wiresim::models {

// A send from rank index `from` to `to` on ECMP path `flow`.
struct Edge {
  int from;
  int to;
  std::uint32_t flow;
  sim::BytesPerSec cap = sim::BytesPerSec::unlimited();   // this edge's own payload cap
};

// How edges that each send part of the time share a link (shared_rates with duty,
// duty_shared_rates).
enum class Sharing {
  // A link of k edges of mean duty f is shared as if by 1 + (k − 1)·f edges at once (the
  // expected number sending while one of them sends), then max-min fairly.
  mean_concurrency,
  // The edges pause independently: an edge's rate while it sends is the expectation of
  // min over its links l of capacity_l / (1 + X_l), X_l the others sending on l, each
  // sending the share duty[j] of the time (an edge on several of its links counts on each).
  // Nothing is redistributed: an edge held back at one end leaves its share of the other end
  // unused, as a tree edge between two NICs that each carry four different edges. A dense
  // link, where the chance that none of its other edges could take that share (each sending
  // and free at its far end, f/2) is under 1 %, is taken alone outside the min: its edges
  // absorb one another's pauses, as a GPU's NVLink port carrying 28 tree edges does. Where the
  // joint counts have over 200,000 states, each link's mean count instead.
  independent,
};

// Per-edge payload rate (B/s) when all `edges` are active at once: the max-min fair share of
// the links (as the simulation's network gives it), each edge capped by `cap`, its own cap
// and, where staged through host memory, the SHM rate.
//
// `duty`, when given (one per edge, in (0, 1]), is the share of the time each edge is sending:
// edges that pause (per-send overhead, step latency, waiting for a slower hop) leave their
// links to the others, as the simulation's network re-shares a link whenever a transfer on it
// starts or ends; `sharing` says how (above).
std::vector<double> shared_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                 const std::vector<double>& duty = {},
                                 Sharing sharing = Sharing::mean_concurrency);

// Per-edge mean payload rate (B/s) when all `edges` start at once and edge e moves
// volume[e] bytes (> 0), the links re-shared max-min fairly each time an edge finishes: an
// edge's volume over its finish time. Equal volumes on equal shares give shared_rates.
std::vector<double> drained_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                  const std::vector<double>& volume);

inline constexpr int kDutyRounds = 4;

// shared_rates with the duty found by a fixed point of `rounds` rounds: each edge sends
// `bytes` once per period of its group (`group[e]`: edges that advance together, as a ring's
// steps or a tree's steady state) and pauses for the rest. The group's period is its slowest
// edge's pause[e] + bytes / rate, at least `min_period` (another stage that holds the group
// back); an edge's duty is (bytes / rate) / period. The first round starts from shared_rates
// without duty. Used by the ring and NVLS-tree closed forms (mean_concurrency) and the tree's
// (independent).
std::vector<double> duty_shared_rates(const PlanBuilder& b, const std::vector<Edge>& edges, sim::BytesPerSec cap,
                                      double bytes, const std::vector<double>& pause, const std::vector<int>& group,
                                      Sharing sharing = Sharing::mean_concurrency, double min_period = 0.0,
                                      int rounds = kDutyRounds);

// The first chunk's way through a pipelined tree (s): the slowest path from a leaf up to the
// root and back down, hop by hop. A hop costs the per-send overhead, `bytes` at its rate and
// its step latency (plus `reduce` on the way up). Ranks of one height (hops above their
// deepest leaf) send up at once and ranks of one depth receive down at once, so siblings share
// their links (two child nodes into one NIC); nothing else is sending (trees_fill, below, for
// several trees at once). Up edges use flow `flow_up + r`, down edges `flow_down + r`
// (r the child); both are appended to `edges` when given. `hop_rate`, when given, is lowered
// to the slowest edge's rate in its hop (the edges of one height or depth sharing their links,
// as every chunk's do: two siblings into one NIC halve each other's rate).
// `starts`, when given, gets the time (s, from the first send) at which the first chunk reaches
// each edge appended to `edges`, in the same order.
double tree_fill(const PlanBuilder& b, const TreeShape& tree, std::uint32_t flow_up, std::uint32_t flow_down,
                 double bytes, sim::BytesPerSec cap, double reduce, std::vector<Edge>* edges = nullptr,
                 double* hop_rate = nullptr, std::vector<double>* starts = nullptr);

// tree_fill for several trees that start at once (a tree pair per rail): the slowest tree's
// fill. Hops that run at the same time share their links: every tree's up sends from ranks of
// one height (hops above their deepest leaf), and its down sends into ranks of one depth. Per
// tree, its edges (up then down, parent by parent, as tree_fill) and their first-chunk times
// are appended to `edges` and `starts` when given.
// `tails`, when given, gets for each edge the least time from its first chunk's send to the end
// of that chunk's way: the way up (for an up edge) and back down to its deepest leaf.
// Trees that forward as they receive (ProtocolParams::tree_cut_through) are played as
// expand_tree's send_through: a send starts once what it forwards has its first lines in
// (across the network, its whole arrival); `last` (> 0: the last chunk's bytes) ends the way
// with the last chunk's final hop, which carries only its own bytes.
double trees_fill(const PlanBuilder& b, const std::vector<TreeShape>& trees, const std::vector<std::uint32_t>& flow_up,
                  const std::vector<std::uint32_t>& flow_down, double bytes, sim::BytesPerSec cap, double reduce,
                  std::vector<Edge>* edges, double* hop_rate, std::vector<double>* starts,
                  std::vector<double>* tails = nullptr, double last = 0.0);

// A pipeline of chunks of `bytes` (`total` in all) over `edges` can end no sooner than this (s):
// each link carries `total` per edge on it, at most its capacity at any time, and no more
// than its edges can send alone (one chunk per o + bytes / rate each) while they send. An edge
// sends from start[e] (its first chunk's arrival) until tail[e] before the end (the rest of
// its last chunk's way, at least as long as the first chunk's alone). A link its edges cannot
// fill even all at once is skipped.
double windowed_bound(const PlanBuilder& b, const std::vector<Edge>& edges, const std::vector<double>& start,
                      const std::vector<double>& tail, sim::BytesPerSec cap, double bytes, double total);

// A pipeline's chunks after its first (`later` of them), where the first chunk reaches each
// edge at start[e] and the edges share links: the time (s) from the first chunk's passage to
// the last's at the slowest link. Chunks arrive at a link every `hop`; with k of its edges
// started, a link passes one every pause + bytes x (1 + (k − 1)·f) / capacity (f the share of
// the steady period an edge sends), between `hop` and `steady` (the period with every edge
// sending), queueing the rest. Once all its edges have started, at least its own period: its
// slowest edge's pause + bytes / rates[e] (rates: duty_shared_rates). At least later x hop.
double staggered_spacing(const PlanBuilder& b, const std::vector<Edge>& edges, const std::vector<double>& start,
                         const std::vector<double>& rates, sim::BytesPerSec cap, double bytes, double pause,
                         double hop, double steady, int later);

// The ranks' NVSwitch ports: the slowest port link (payload B/s) and the longest up + down
// wire latency (s), which bound NVLS and NVLSTree.
std::pair<double, double> switch_ports(const Machine& machine, const std::vector<topo::DeviceId>& ranks);

// Each rank's first NVLS loop waits the architecture's nvls_start after the launch (a delay
// per rank, labelled "nvls start"); the launch itself where that is 0. NVLS and NVLSTree both
// start their streams here, and their closed forms add nvls_start once.
std::vector<sim::NodeId> nvls_start_nodes(PlanBuilder& b, int ranks);

// One NVLS all_reduce loop after the first, in the expansion's steady state (s): g GPUs on the
// switch, each GPU port moving `part_time` = one part's wire bytes / B, `tau` the step overhead
// after each stream's loop, `d` from a reduce-scatter's end to its all-gather's start (wire +
// reduction). An uplink carries the g reduce-scatters and its own all-gather, a downlink the
// reverse: if g parts take no longer than tau - d the streams alternate (g part + tau);
// otherwise each runs alone at B/g for tau - d and both at B/(g+1) for the rest.
double nvls_period(int g, double part_time, double tau, double d);

// One ring pass, exactly as build_ring_pass schedules it, for rings whose hops differ (PIX
// and SHM hops on a PCIe box, NVLink and NIC hops across nodes): each send starts once the
// connection's previous send has left, its data has arrived (step 0 of a loop: the rank's
// previous loop has ended) and a buffer slot is free; it ends after c / rate and arrives a
// step latency (plus the reduction) later. Under a cut-through protocol (PlanBuilder::
// send_through) a send waits for the head of its data, not its arrival, unless whole[p] (the
// hop crosses the network), and its data arrives no earlier than the data it forwards. The
// time (s) is the latest rank's. Costs loops x steps x n per ring.
// `sends`, when given (n lists), gets each rank's send windows (start, end), in order;
// `send_rates`, when given, holds each rank's payload rate (B/s) per send, in that order, for
// rate[p].
using Window = std::pair<double, double>;
double ring_pass_time(const PlanBuilder& b, Collective op, int n, const std::vector<double>& rate,
                      const std::vector<double>& latency, const std::vector<bool>& whole, sim::Bytes block,
                      sim::Bytes chunk, int slots, std::span<std::vector<Window>> sends = {},
                      std::span<const std::vector<double>> send_rates = {});

// A ring all_reduce/all_gather/reduce_scatter over `orders` (one ring each, sharing links), in
// seconds. Rings whose hops are all alike run in lock step — every step takes the slowest
// hop's time, exact there; rings with unlike hops are played hop by hop (ring_pass_time) when
// that is cheap enough, else also in lock step (an upper bound). Rings that share links start
// at the rates of the duty's mean concurrency (duty_shared_rates); where a play is small
// enough, each send is then replayed at the rate its link's overlaps in the previous play gave
// it: rings that start and step together send at the same moments, not at random phases.
double ring_time(const PlanBuilder& b, Collective op, const std::vector<std::vector<int>>& orders,
                 sim::Bytes block, sim::Bytes chunk, sim::BytesPerSec cap, std::uint32_t flow_base = 0);

// Simultaneous sends of `payload` each: the slowest one, plus its step latency (s).
double phase_time(const PlanBuilder& b, const std::vector<Edge>& edges, sim::Bytes payload, sim::BytesPerSec cap);


}  // namespace wiresim::models
