#include "scenarios/memory.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace wiresim::scenarios {

sim::Bytes weight_bytes_per_gpu(const ModelShape& m, const Layout& l) {
  const double attention = attention_params(m), dense_mlp = mlp_params(m), expert = expert_params(m);
  double per_layer_moe = 0.0, per_layer_dense = attention / l.tp + dense_mlp / l.tp;
  if (m.experts > 0) {
    const double routed = l.ep > 1 ? experts_per_rank(m, l.ep) * expert : m.experts * expert / l.tp;
    per_layer_moe = attention / l.tp + routed + m.shared_experts * expert / l.tp;
  }
  double total = 0.0;
  for (int layer = 0; layer < m.layers; ++layer) total += is_moe_layer(m, layer) ? per_layer_moe : per_layer_dense;
  return sim::Bytes{total / l.pp * m.dtype_bytes};
}

double kv_bytes_per_token_per_gpu(const ModelShape& m, const Layout& l) {
  if (m.kv_bytes_per_token > 0) return m.kv_bytes_per_token;
  const double head_dim = static_cast<double>(m.hidden) / m.heads;
  return 2.0 * std::ceil(static_cast<double>(m.kv_heads) / l.tp) * head_dim * m.dtype_bytes;
}

MemoryUse memory_per_gpu(const ModelShape& m, const Layout& l, const Workload& w) {
  MemoryUse use;
  use.weights = weight_bytes_per_gpu(m, l);
  if (w.phase == Phase::load) {
    // A load of a given size holds what it loaded, its share on each GPU.
    if (w.bytes.count() > 0.0) use.weights = w.bytes / static_cast<double>(l.gpus());
    return use;
  }
  const double b = m.dtype_bytes;
  const double layers_here = static_cast<double>(m.layers) / l.pp;
  const double held = w.phase == Phase::decode ? static_cast<double>(w.batch) * static_cast<double>(w.context)
                                               : static_cast<double>(w.tokens);
  use.kv_cache = sim::Bytes{held * kv_bytes_per_token_per_gpu(m, l) * layers_here};
  const double all = w.phase == Phase::decode ? static_cast<double>(w.batch) : static_cast<double>(w.tokens);
  const double per_micro_batch = std::ceil(all / std::max(1, w.micro_batches));
  use.activations = sim::Bytes{2.0 * per_micro_batch * (m.hidden + static_cast<double>(m.ffn) / l.tp) * b};
  // Offload: the share in host memory leaves the GPU but for two layers' buffers of it (the
  // layer in use and the one being copied in).
  const double buffered = std::min(1.0, 2.0 / layers_here);
  const auto resident = [&](sim::Bytes all, double offloaded) { return all * (1.0 - offloaded + offloaded * buffered); };
  if (w.phase == Phase::decode && w.offload.any()) {
    use.kv_cache = resident(use.kv_cache, w.offload.kv);
    use.weights = resident(use.weights, w.offload.weights);
  }
  return use;
}

sim::Bytes smallest_gpu_memory(const topo::LinkGraph& graph, const std::vector<int>& gpus) {
  double smallest = INFINITY;
  const auto consider = [&](topo::DeviceId d) { smallest = std::min(smallest, graph.device(d).memory.count()); };
  if (gpus.empty())
    for (auto d : graph.gpus()) consider(d);
  else
    for (int g : gpus) consider(graph.gpus()[g]);
  return sim::Bytes{std::isfinite(smallest) ? smallest : 0.0};
}

std::string describe(const MemoryUse& u) {
  return fmt::format("{:.1f} GB weights + {:.1f} GB KV cache + {:.1f} GB activations = {:.1f} GB",
                     u.weights.count() / 1e9, u.kv_cache.count() / 1e9, u.activations.count() / 1e9,
                     u.total().count() / 1e9);
}

std::optional<std::string> memory_problem(const MemoryUse& use, sim::Bytes capacity) {
  if (capacity.count() <= 0.0) return std::nullopt;
  const double usable = kUsableMemoryFraction * capacity.count();
  if (use.total().count() <= usable) return std::nullopt;
  return fmt::format("needs {} per GPU, over the {:.1f} GB usable of a {:.0f} GB GPU ({:.0f}%, as vLLM's default)",
                     describe(use), usable / 1e9, capacity.count() / 1e9, 100.0 * kUsableMemoryFraction);
}

}  // namespace wiresim::scenarios
