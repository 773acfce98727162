#include "scenarios/host_copies.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "input/input_error.h"
#include "scenarios/memory.h"

namespace wiresim::scenarios {

// The cpu device (NUMA node) on `gpu`'s node that holds its host buffers (a load's, a
// decode's offload): `numa` local, remote (the next socket of the node after the GPU's own)
// or the node `numa_node`. A NUMA node the topology joins to the GPU by no route (no socket
// link) is an error at the host_numa value (`at`, named `key`).
topo::DeviceId host_for(const models::Machine& machine, topo::DeviceId gpu, HostNuma numa, int numa_node,
                        const input::Position& at, const std::string& key) {
  const topo::LinkGraph& graph = machine.graph();
  const auto& g = graph.device(gpu);
  std::vector<topo::DeviceId> cpus;
  std::size_t own = 0;
  for (topo::DeviceId d = 0; d < graph.device_count(); ++d) {
    const auto& dev = graph.device(d);
    if (dev.kind != topo::DeviceKind::cpu || dev.node != g.node) continue;
    if (dev.socket == g.socket) own = cpus.size();
    cpus.push_back(d);
  }
  if (cpus.empty()) throw input::InputError(fmt::format("{}: {} has no host CPU in {}", key, g.name, graph.source));
  topo::DeviceId host = cpus[own];
  if (numa == HostNuma::remote) {
    if (cpus.size() < 2)
      input::fail(at, fmt::format("{}: remote needs a second socket beside {}'s, but its node in {} has one cpu; "
                                  "expected local or 0",
                                  key, g.name, graph.source));
    host = cpus[(own + 1) % cpus.size()];
  } else if (numa == HostNuma::node) {
    const auto it = std::find_if(cpus.begin(), cpus.end(), [&](auto d) { return graph.device(d).socket == numa_node; });
    if (it == cpus.end())
      input::fail(at, fmt::format("{}: no NUMA node {} on {}'s node in {}; expected local, remote or 0..{}", key,
                                  numa_node, g.name, graph.source, cpus.size() - 1));
    host = *it;
  }
  if (host != cpus[own]) {
    try {
      machine.route(host, gpu);
    } catch (const input::InputError&) {
      input::fail(at, fmt::format("{}: {} (NUMA node {}) reaches {} by no route in {} (no socket link joins them); "
                                  "expected local",
                                  key, graph.device(host).name, graph.device(host).socket, g.name, graph.source));
    }
  }
  return host;
}



namespace {

topo::DeviceId host_for(const Scenario& s, const models::Machine& machine, topo::DeviceId gpu) {
  const Workload& w = s.workload;
  return host_for(machine, gpu, w.host_numa, w.numa_node, w.host_numa_at, "workload.host_numa");
}

// A bounced storage read runs as a pipeline of this many chunks per drive: chunk k's copy to
// the GPU overlaps chunk k+1's read into the host buffer (a loader's double buffering).
constexpr int kBounceChunks = 8;

}  // namespace

// Model load: every GPU copies its share of the weights, all at once; the step ends with the
// last copy. From host memory: one copy from the NUMA node workload.host_numa names. From
// storage: the share is striped over every NVMe drive of the GPU's node (RAID 0, as a DGX's
// data drives are), each stripe read straight into the GPU (GPUDirect Storage) or read into
// the host buffer and copied on, chunk by chunk (without GDS).
void build_load(StepBuilder& b, const Scenario& s, const topo::LinkGraph& graph, const std::vector<int>& gpu_of_rank) {
  const int n = s.layout.gpus();
  const sim::Bytes total = s.workload.bytes.count() > 0.0 ? s.workload.bytes
                                                           : weight_bytes_per_gpu(s.model, s.layout) * n;
  const sim::Bytes share = total / static_cast<double>(n);
  const NodeId loaded = b.mark({}, static_cast<std::uint32_t>(gpu_of_rank.front()));
  NodeId first = kNone, first_read = kNone, read = kNone;
  const bool storage = s.workload.source == LoadSource::storage;
  for (int r = 0; r < n; ++r) {
    const int index = gpu_of_rank[r];
    const auto gpu = graph.gpus()[index];
    if (!storage) {
      const NodeId copied = b.copy(host_for(s, b.machine(), gpu), gpu, index, share, "weight_load", "weights host->gpu");
      if (first == kNone) first = copied;
      b.dag().add_dependency(copied, loaded);
      continue;
    }
    std::vector<topo::DeviceId> drives;
    for (topo::DeviceId d = 0; d < graph.device_count(); ++d)
      if (graph.device(d).kind == topo::DeviceKind::nvme && graph.device(d).node == graph.device(gpu).node)
        drives.push_back(d);
    if (drives.empty())
      input::fail(s.workload.source_at, fmt::format("workload.source: storage needs NVMe drives (kind: nvme) on "
                                                    "{}'s node, but {} has none; expected source: host",
                                                    graph.device(gpu).name, graph.source));
    const sim::Bytes stripe = share / static_cast<double>(drives.size());
    if (s.workload.gds) {
      for (auto drive : drives) {
        const NodeId copied = b.copy(drive, gpu, index, stripe, "weight_load", "weights nvme->gpu (GDS)", {}, "GDS read");
        if (first == kNone) first = copied;
        b.dag().add_dependency(copied, loaded);
      }
      continue;
    }
    const topo::DeviceId host = host_for(s, b.machine(), gpu);
    const sim::Bytes chunk = stripe / static_cast<double>(kBounceChunks);
    for (auto drive : drives) {
      NodeId last_read = kNone, last_copy = kNone;
      for (int k = 0; k < kBounceChunks; ++k) {
        last_read = b.copy(drive, host, index, chunk, "storage_read", "weights nvme->host", {last_read}, "nvme read");
        if (first_read == kNone) {
          first_read = last_read;
          read = b.mark({}, static_cast<std::uint32_t>(index));
        }
        b.dag().add_dependency(last_read, read);
        last_copy = b.copy(host, gpu, index, chunk, "weight_load", "weights host->gpu", {last_read, last_copy});
        if (first == kNone) first = last_copy;
      }
      b.dag().add_dependency(last_copy, loaded);
    }
  }
  if (first_read != kNone) b.record("storage_read", 0, first_read, read);
  b.record("weight_load", 0, first_read != kNone ? first_read : first, loaded);
}

}  // namespace wiresim::scenarios
