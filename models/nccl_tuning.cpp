#include "models/nccl_tuning.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <span>

#include <fmt/format.h>

#include "models/machine.h"

namespace wiresim::models {
namespace {

// NCCL's figures, from src/graph/tuning.cc and src/graph/search.cc (NVIDIA/nccl 5067397). Times
// in microseconds and bandwidths in GB/s (1e9 B/s), as NCCL keeps them.
constexpr int kLl = 0, kLl128 = 1, kSimple = 2;
int proto_index(Protocol p) { return p == Protocol::ll ? kLl : p == Protocol::ll128 ? kLl128 : kSimple; }

// baseLatencies and hwLatencies (NVLink and NET rows) for the algorithms modelled here.
struct Row {
  std::array<double, 3> base, nvlink, net;
};
constexpr Row kTree{{6.8, 14.0, 8.4}, {0.6, 1.25, 4.0}, {5.0, 8.5, 14.0}};
constexpr Row kRing{{6.6, 14.0, 8.4}, {0.6, 1.9, 3.4}, {2.7, 4.0, 14.0}};
constexpr Row kNvlsTree{{0.0, 0.0, 0.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 20.9}};
constexpr Row kPat{{8.0, 8.0, 8.0}, {0.0, 0.0, 4.0}, {0.0, 0.0, 14.0}};

// Per compute-capability class: Volta, Ampere, Hopper, Blackwell; per node count: 1, 2, more.
using ByNodes = std::array<double, 3>;
constexpr std::array<ByNodes, 4> kPerChMaxRingLl128{{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
constexpr std::array<ByNodes, 4> kPerChMaxTreeLl128{{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr std::array<ByNodes, 4> kPerChMaxTree{{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr std::array<ByNodes, 4> kPerChMaxNvlsTree{{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
// llMaxBws: across nodes indexed by the CPU (Intel and others, AMD); one node by the GPU.
constexpr std::array<ByNodes, 4> kLlMaxBw{{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}}};
constexpr std::array<double, 4> kNvlsEfficiency{0.0, 0.0, 0.85, 0.74};
// treeCorrectionFactor: per protocol, for log2(bytes / 64) from 0 to 23.
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};
// The graph search's speeds across nodes (speedArrayInter and its sm90 / sm100 tables).
constexpr std::array<double, 19> kSpeedsInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                              7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 17> kSpeedsInterSm90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                  15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 20> kSpeedsInterSm100{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                                   20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// NCCL rates a PCIe link at 24 Gb/s a lane at 32 GT/s (kvDictPciGen, 240 x 100 Mbps): 3/4 of the
// raw signalling rate, which a topology's figure (128b/130b payload, 63 GB/s for Gen5 x16) is
// 128/130 of. Gen5 x16: 48 GB/s, as NCCL_DEBUG prints it.
constexpr double kNcclPciShare = 0.75 * 130.0 / 128.0;

int cc_index(int cc) { return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0; }
int log2i(double x) { return x >= 1.0 ? static_cast<int>(std::floor(std::log2(x))) : -1; }
double gbps(sim::BytesPerSec r) { return r.count() / 1e9; }

// The NIC a rank's channels leave through: its bound NIC, else the nearest.
std::optional<topo::DeviceId> rank_nic(const Machine& machine, topo::DeviceId gpu) {
  if (auto bound = machine.graph().bound_nic(gpu)) return bound;
  const auto nics = machine.router().nearest_nics(gpu);
  if (nics.empty()) return std::nullopt;
  return nics.front();
}

// The GPU-NIC path as NCCL rates it: the NIC's line rate and the PCIe links on the way.
double nccl_path_bw(const Machine& machine, topo::DeviceId gpu, topo::DeviceId nic) {
  const topo::LinkGraph& g = machine.graph();
  double bw = INFINITY;
  for (sim::LinkId l : g.out_links(nic)) {
    const topo::Link& link = g.link(l);
    if (link.tier == topo::Tier::ib || link.tier == topo::Tier::roce || link.tier == topo::Tier::eth)
      bw = std::min(bw, gbps(link.bandwidth));
  }
  for (sim::LinkId l : machine.router().route(gpu, nic)) {
    const topo::Link& link = g.link(l);
    bw = std::min(bw, link.tier == topo::Tier::pcie ? gbps(link.bandwidth) * kNcclPciShare : gbps(link.bandwidth));
  }
  return bw;
}

}  // namespace

std::optional<NcclGraph> nccl_graph(const Machine& machine, const Problem& problem, Algorithm algorithm) {
  const topo::GpuArch& arch = machine.gpu_arch();
  if (arch.vendor != topo::GpuVendor::nvidia) return std::nullopt;
  const auto by_node = ranks_by_node(machine, problem);
  if (by_node.size() < 2) return std::nullopt;
  // The node with the fewest NICs in use sets the graph (every node must carry every channel).
  int nics = std::numeric_limits<int>::max();
  double max_bw = 0.0;
  for (const auto& local : by_node) {
    std::set<topo::DeviceId> used;
    for (int r : local) {
      const topo::DeviceId gpu = problem.ranks[static_cast<std::size_t>(r)];
      const auto nic = rank_nic(machine, gpu);
      if (!nic) return std::nullopt;
      used.insert(*nic);
      max_bw = std::max(max_bw, nccl_path_bw(machine, gpu, *nic));
    }
    nics = std::min(nics, static_cast<int>(used.size()));
  }
  std::span<const double> speeds = kSpeedsInter;
  if (arch.compute_capability >= 100) speeds = kSpeedsInterSm100;
  else if (arch.compute_capability >= 90) speeds = kSpeedsInterSm90;
  // The first speed the path carries; a topology's figures are rounded (63 GB/s for Gen5 x16's
  // 63.02), so within half a percent counts.
  double speed = speeds.back();
  for (double s : speeds)
    if (s <= max_bw * 1.005) {
      speed = s;
      break;
    }
  const int g = static_cast<int>(by_node.front().size());
  NcclGraph graph;
  if (algorithm == Algorithm::nvls_tree) {
    graph.channels = g;
  } else {
    graph.channels = nics * std::max(1, static_cast<int>(std::floor(max_bw / speed)));
    // ncclTopoDupChannels: double the channels at half the speed, unless the speed is under 25
    // GB/s, or (sm90 and later) under 50 over more than four channels.
    const bool keep = speed < 25.0 || (arch.compute_capability > 80 && speed < 50.0 && graph.channels > 4);
    if (!keep) graph.channels *= 2, speed /= 2.0;
  }
  graph.speed = sim::BytesPerSec{speed * 1e9};
  return graph;
}

std::optional<NcclCost> nccl_cost(const Machine& machine, const Problem& problem, Algorithm algorithm,
                                  Protocol protocol) {
  const Collective op = problem.op;
  const bool ring = algorithm == Algorithm::ring, tree = algorithm == Algorithm::tree;
  const bool nvls_tree = algorithm == Algorithm::nvls_tree, pat = algorithm == Algorithm::pat;
  if (!(ring || tree || nvls_tree || pat)) return std::nullopt;
  if (op == Collective::all_to_all || op == Collective::send_recv) return std::nullopt;
  if ((tree || nvls_tree) && op != Collective::all_reduce) return std::nullopt;
  if (pat && op != Collective::all_gather && op != Collective::reduce_scatter) return std::nullopt;
  if ((nvls_tree || pat) && protocol != Protocol::simple) return std::nullopt;
  const auto graph = nccl_graph(machine, problem, algorithm);
  if (!graph) return std::nullopt;
  const int cc = cc_index(machine.gpu_arch().compute_capability);
  const int nodes = node_count(machine, problem);
  const int n = static_cast<int>(problem.ranks.size());
  const double ppn = static_cast<double>(n) / nodes;
  const int i2 = std::min(nodes, 3) - 1;
  const int p = proto_index(protocol);
  const std::string& cpu = machine.cpu_vendor(0);
  const bool amd_cpu = cpu == "amd";
  const double ll_max = kLlMaxBw[amd_cpu ? 1 : 0][i2];
  const int nsteps = op == Collective::all_reduce ? 2 * (n - 1)
                     : (op == Collective::reduce_scatter || op == Collective::all_gather) ? n - 1
                                                                                          : n;
  const double ch = graph->channels;
  const double speed = gbps(graph->speed);
  double bw = speed;
  if (nvls_tree) {
    const double intra = speed * kNvlsEfficiency[static_cast<std::size_t>(cc)] * (ch - 1) / ch * 2.0;
    const double inter = speed * (nodes <= 2 ? 2.0 : 1.0);
    bw = std::min({intra, inter, kPerChMaxNvlsTree[static_cast<std::size_t>(cc)][static_cast<std::size_t>(i2)]});
  }
  double bus = ch * bw;
  if (ring && protocol == Protocol::ll) bus = std::min(ll_max, bus * 0.5);
  if (ring && protocol == Protocol::ll128) bus = std::min(bus * 0.92, ch * kPerChMaxRingLl128[cc][i2]);
  if (tree) bus = std::min(bus * 0.92, ch * kPerChMaxTree[cc][i2]);
  if (tree && protocol == Protocol::ll) bus = std::min(bus / 3.8, ll_max);
  if (tree && protocol == Protocol::ll128)
    bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kPerChMaxTreeLl128[cc][i2]);
  if (pat) bus *= 0.75;
  // Bus to algorithm bandwidth (all_gather / reduce_scatter other than ring keep theirs).
  if (ring || nvls_tree) bus *= static_cast<double>(n) / nsteps;
  else if (tree) bus *= 0.5;
  const Row& row = ring ? kRing : tree ? kTree : nvls_tree ? kNvlsTree : kPat;
  double lat = row.base[p];
  // Intra-node steps at NCCL's NVLink latencies: the shipped clusters' nodes are NVSwitch ones.
  // A node whose rings run over PCIe would take NCCL's PCI row, not carried here yet.
  double intra_lat = row.nvlink[p];
  // With one GPU per node the latencies are fully exposed: NCCL takes the tree's NET latency.
  double inter_lat = ppn == 1.0 ? kTree.net[p] : row.net[p];
  if (ring) {
    if (op == Collective::broadcast || op == Collective::reduce) {
      // sameChannels is 0 across nodes: a step latency per step (the tree's for Simple).
      lat += nsteps * (protocol == Protocol::simple ? kTree.net[p] : row.net[p]);
    } else {
      const double net_overhead = (amd_cpu ? 2.0 : 1.0) * (protocol == Protocol::simple ? 3.0 : 1.0);
      intra_lat = std::max(intra_lat, net_overhead);
      const int inter_steps = op == Collective::all_reduce ? 2 * (nodes - 1) : nodes - 1;
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
  } else if (tree) {
    lat += 2.0 * ((ppn - 1) * intra_lat + log2i(nodes) * inter_lat);
  } else if (nvls_tree) {
    lat += intra_lat + 2.0 * log2i(nodes) * inter_lat;
  } else {
    lat += log2i(nodes) * (inter_lat / 3.5) + n * 2.8;
  }
  return NcclCost{sim::Seconds{lat * 1e-6}, sim::BytesPerSec{bus * 1e9}, graph->channels,
                  fmt::format("NCCL's model: {:.1f} us + bytes / {:.1f} GB/s ({} channels x {:.1f} GB/s)", lat, bus,
                              graph->channels, speed)};
}

std::optional<Estimate> nccl_time(const Machine& machine, const Problem& problem, const Choice& choice) {
  const auto cost = nccl_cost(machine, problem, choice.algorithm, choice.protocol);
  if (!cost) return std::nullopt;
  const double bytes = problem.size.count();
  double bw = gbps(cost->bandwidth);
  double lat = cost->latency.count() * 1e6;
  const int log_size = log2i(std::floor(bytes / 64.0));
  const int cc = machine.gpu_arch().compute_capability;
  const bool correct_tree = choice.algorithm == Algorithm::tree && problem.op == Collective::all_reduce;
  // NCCL corrects the NVLS tree too on Blackwell x86 hosts (every shipped B200 cluster's CPUs).
  const std::string& cpu = machine.cpu_vendor(0);
  const bool x86 = cpu != "arm";
  const bool correct_nvls_tree = choice.algorithm == Algorithm::nvls_tree && cc >= 100 && x86;
  if ((correct_tree && log_size >= 0 && log_size < 23) || (correct_nvls_tree && log_size >= 0 && log_size < 24))
    bw *= kTreeCorrection[static_cast<std::size_t>(proto_index(choice.protocol))][static_cast<std::size_t>(log_size)];
  // The ring's plateau effect: Simple across nodes, once each channel's share per rank reaches
  // 64 bytes (comm->nChannels: the ring graph's channels, doubled by ncclTopoPostset).
  if (choice.algorithm == Algorithm::ring && choice.protocol == Protocol::simple && problem.op == Collective::all_reduce) {
    const double comm_channels = std::min(64, 2 * cost->channels);
    if (bytes / (comm_channels * static_cast<double>(problem.ranks.size())) >= 64.0) lat *= cc < 80 ? 1.9 : 1.4;
  }
  return Estimate{sim::Seconds{(lat + bytes / (1000.0 * bw)) * 1e-6}, cost->formula};
}

}  // namespace wiresim::models
