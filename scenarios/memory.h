// What one GPU holds for a step: its share of the weights, the KV cache of the sequences it
// serves, and the activations in flight — checked against the GPU's own capacity
// (topologies: a GPU device's `memory`), of which a serving engine lets the model use a share.
//
// Per GPU, for a layout tp x ep x pp x dp (b bytes per element, h hidden, L layers):
//   weights      attention (2h² + 2h²·kv/heads) / tp per layer; dense MLP 3·h·ffn / tp; MoE
//                layers ceil(experts / ep) experts (the busiest rank; all / tp without EP)
//                plus the shared experts / tp; L / pp layers (no embeddings).
//   KV cache     K and V for every token held: 2 · ceil(kv_heads / tp) · (h / heads) · b per
//                token per layer (a TP rank keeps its share of the KV heads, a whole one at
//                least) — or the model's kv_bytes_per_token, whole on every rank (MLA) — for
//                the L / pp layers of its stage; decode holds batch x context tokens per
//                replica, prefill the prompt's tokens.
//   activations  2 · T · (h + ffn / tp) · b for a micro-batch of T tokens: the input and output
//                of the widest GEMM pair in flight (an estimate; kernels' workspaces aside).
//   offload      a decode's workload.offload share of the KV cache and of the weights stays in
//                host memory; the GPU keeps the rest and two layers' buffers of the offloaded part.
//
//   const MemoryUse m = memory_per_gpu(model, layout, workload);
//   if (auto why = memory_problem(m, sim::Bytes{80e9})) throw ...;   // "needs 137.0 GB ..."
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/units.h"
#include "topologies/link_graph.h"

namespace wiresim::scenarios {

// The share of a GPU's memory the model's weights, KV cache and activations may take: vLLM's
// default gpu_memory_utilization, 0.9 (docs.vllm.ai, engine arguments); the rest holds the
// CUDA context, NCCL's buffers and the allocator's slack.
constexpr double kUsableMemoryFraction = 0.9;

struct MemoryUse {
  sim::Bytes weights;
  sim::Bytes kv_cache;
  sim::Bytes activations;
  sim::Bytes total() const { return weights + kv_cache + activations; }
};

sim::Bytes weight_bytes_per_gpu(const ModelShape& model, const Layout& layout);
// KV cache bytes one GPU keeps per token per layer (scenarios/scenario.h kv_bytes_per_token).
double kv_bytes_per_token_per_gpu(const ModelShape& model, const Layout& layout);
MemoryUse memory_per_gpu(const ModelShape& model, const Layout& layout, const Workload& workload);

// Why `use` does not fit a GPU of `capacity` (GB = 1e9 B), with the sizes; nullopt when it
// fits or the capacity is unknown (0).
std::optional<std::string> memory_problem(const MemoryUse& use, sim::Bytes capacity);
// The smallest memory among `gpus` (indices into graph.gpus(); empty: all of them); 0 when
// any of them does not give its memory.
sim::Bytes smallest_gpu_memory(const topo::LinkGraph& graph, const std::vector<int>& gpus = {});
// "17.1 GB weights + 10.7 GB KV cache + 0.2 GB activations = 28.0 GB"
std::string describe(const MemoryUse& use);

}  // namespace wiresim::scenarios
