// Host copies of a step: a decode's offload of KV cache and weights to host memory, and the
// model load (from host memory or NVMe, with or without GPUDirect Storage). Internal to the
// scenarios library; scenarios/step.cpp builds them into the step.
#pragma once

#include <map>
#include <vector>

#include "scenarios/memory.h"
#include "scenarios/scenario.h"
#include "scenarios/step_builder.h"

namespace wiresim::scenarios {

// The cpu device (NUMA node) on `gpu`'s node that holds its host buffers (host_copies.cpp).
topo::DeviceId host_for(const models::Machine& machine, topo::DeviceId gpu, HostNuma numa, int numa_node,
                        const input::Position& at, const std::string& key);

// A decode's offload copies (scenarios/scenario.h Offload), GPU by GPU: each GPU's host
// buffers on its workload.offload.host_numa node, one copy engine per direction taking the
// layers in order. Per layer and GPU, host -> GPU: the offloaded share of the layer's KV cache
// (batch x context tokens) and of its weights; GPU -> host: the offloaded share of the new
// token's K and V for every sequence.
class OffloadCopies {
 public:
  OffloadCopies(StepBuilder& b, const Scenario& s) : b_(b), offload_(s.workload.offload) {
    const double layers_here = static_cast<double>(s.model.layers) / s.layout.pp;
    const double kv_token = kv_bytes_per_token_per_gpu(s.model, s.layout);
    const double batch = static_cast<double>(s.workload.batch);
    in_ = sim::Bytes{offload_.kv * batch * static_cast<double>(std::max(1L, s.workload.context)) * kv_token} +
          weight_bytes_per_gpu(s.model, s.layout) * (offload_.weights / layers_here);
    out_ = sim::Bytes{offload_.kv * batch * kv_token};
  }

  // GPU `g`'s copy in of its next layer, once the buffer of the layer two back is `freed`.
  NodeId copy_in(int g, int replica, NodeId freed) {
    NodeId& last = last_in_.try_emplace(g, kNone).first->second;
    last = b_.copy(host(g), gpu(g), g, in_, "offload_h2d", "offload host->gpu", {last, freed});
    b_.record("offload_h2d", replica, last, last);
    return last;
  }
  // GPU `g`'s write back of the layer's new KV, after its attention (`after`).
  void write_back(int g, int replica, NodeId after) {
    if (out_.count() <= 0.0) return;
    NodeId& last = last_out_.try_emplace(g, kNone).first->second;
    last = b_.copy(gpu(g), host(g), g, out_, "offload_d2h", "offload gpu->host", {last, after});
    b_.record("offload_d2h", replica, last, last);
  }

 private:
  topo::DeviceId gpu(int g) const { return b_.graph().gpus()[g]; }
  topo::DeviceId host(int g) {
    const auto it = host_.find(g);
    if (it != host_.end()) return it->second;
    const topo::DeviceId h = host_for(b_.machine(), gpu(g), offload_.host_numa, offload_.numa_node,
                                      offload_.host_numa_at, "workload.offload.host_numa");
    return host_.emplace(g, h).first->second;
  }

  StepBuilder& b_;
  const Offload& offload_;
  sim::Bytes in_, out_;
  std::map<int, topo::DeviceId> host_;
  std::map<int, NodeId> last_in_, last_out_;
};

// Model load: appends every GPU's copy of its share of the weights to `b` (see host_copies.cpp).
void build_load(StepBuilder& b, const Scenario& s, const topo::LinkGraph& graph, const std::vector<int>& gpu_of_rank);

}  // namespace wiresim::scenarios
