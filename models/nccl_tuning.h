// NCCL's own cost model: what NCCL's tuner predicts for an algorithm and protocol, and so what
// it runs by default. wiresim's tuner ranks candidates by its closed form (the fastest); a
// caller that wants the candidate NCCL would pick passes nccl_time as the tuner's ranking
// (TunerOptions::rank, `coll --pick nccl`, `validate --pick nccl`).
//
// The formulas are src/graph/tuning.cc of NVIDIA/nccl (commit 5067397, 2026-06):
// ncclTopoTuneModel's bandwidth and latency per collective, algorithm and protocol, and
// ncclTopoGetAlgoTime (time = latency + bytes / bandwidth, the tree correction factors, the
// ring's Simple plateau factor). Their input is NCCL's graph search (src/graph/search.cc), which
// wiresim does not run. Its stand-in (nccl_graph) holds for nodes whose GPUs each reach a NIC:
// the search's speed is the largest of its speed array (speedArrayInter, sm90 / sm100 tables) no
// higher than the GPU-NIC path as NCCL rates it (the NIC's line rate; PCIe at NCCL's per-lane
// figure, 24 Gb/s a lane at 32 GT/s, 3/4 of the raw rate), one channel per NIC the node's ranks
// use (ring and tree: each NIC carries one channel each way at that speed), one per local GPU for
// the NVLS graph (the search pins min = max channels to the GPU count), and the channel
// doubling of ncclTopoDupChannels (none on sm90+ when the speed is under 50 GB/s over more than
// four channels). Not modelled, so nccl_time gives nullopt and the tuner keeps its own ranking:
// one node (the intra-node search); AMD GPUs (RCCL's tuner differs); NVLS and CollNet across
// nodes (need NCCL's CollNet plugin); all_to_all and send_recv (no algorithm choice).
//
//   TunerOptions o;
//   o.rank = nccl_time;
//   Decision d = tune(machine, problem, o);   // d.best: what NCCL would run
#pragma once

#include <optional>
#include <string>

#include "models/alpha_beta.h"
#include "models/plan.h"

namespace wiresim::models {

// The stand-in for one of NCCL's graphs (ncclTopoGraph): channels and per-channel speed.
struct NcclGraph {
  int channels = 0;
  sim::BytesPerSec speed;   // bwIntra = bwInter
};

// NCCL's graph for this algorithm's pattern on these ranks; nullopt where not modelled (above).
std::optional<NcclGraph> nccl_graph(const Machine& machine, const Problem& problem, Algorithm algorithm);

// NCCL's latency and algorithm bandwidth for one candidate (comm->latencies, comm->bandwidths).
struct NcclCost {
  sim::Seconds latency;
  sim::BytesPerSec bandwidth;   // algorithm bandwidth: bytes / (time - latency)
  int channels = 0;             // its graph's (nccl_graph)
  std::string formula;
};
std::optional<NcclCost> nccl_cost(const Machine& machine, const Problem& problem, Algorithm algorithm,
                                  Protocol protocol);

// ncclTopoGetAlgoTime for problem.size: what NCCL's tuner expects the choice to take, with
// nccl_cost's formula.
std::optional<Estimate> nccl_time(const Machine& machine, const Problem& problem, const Choice& choice);

}  // namespace wiresim::models
