// Scenario: an LLM inference step as a capacity planner describes it — the model's shape,
// the workload (prefill or decode), the layout (tp, ep, pp, dp and placement) and the
// topology — read from YAML with every key checked.
//
//   Scenario s = load_scenario("scenarios/llama70b-tp8-prefill.yaml");
//   s.layout.tp;                  // 8
//   s.topology;                   // path to the topology, relative paths resolved
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "input/yaml.h"
#include "models/collective.h"
#include "models/machine.h"
#include "sim/units.h"

namespace wiresim::scenarios {

struct ModelShape {
  std::string name;
  int hidden = 0;             // model width
  int layers = 0;
  int heads = 0;              // attention heads
  int kv_heads = 0;           // grouped-query attention heads (= heads without GQA)
  int ffn = 0;                // MLP intermediate size (0: 4 x hidden)
  int dtype_bytes = 2;        // bf16
  std::string dtype = "bf16";
  // Mixture of experts (experts == 0: dense). Every `moe_every`-th layer is MoE.
  int experts = 0;
  int top_k = 0;
  int expert_ffn = 0;
  int moe_every = 1;
  int dense_layers = 0;       // the first this many layers are dense (DeepSeek's first_k_dense_replace)
  int shared_experts = 0;     // experts every token passes through on a MoE layer, beside its top_k
  // KV cache bytes per token per layer, all heads, where attention caches something other
  // than K and V per KV head (MLA's compressed latent); it is then whole on every TP rank.
  // 0: 2 x kv_heads x (hidden / heads) x dtype bytes, split over TP by KV heads.
  int kv_bytes_per_token = 0;
  // Routing skew: share of the tokens each expert gets (sums to 1); empty = uniform.
  std::vector<double> expert_load;
  std::string routing = "uniform";   // for output: "uniform", "zipf 1.2", "explicit"
};

// Layer `layer` (from 0) is a mixture-of-experts layer.
inline bool is_moe_layer(const ModelShape& m, int layer) {
  return m.experts > 0 && layer >= m.dense_layers && (layer + 1) % m.moe_every == 0;
}
// Parameters of one layer, whole (before any TP split). Attention: q and o projections h x h,
// k and v h x (h · kv_heads / heads). An MLP (gate, up, down): 3 h ffn; an expert 3 h expert_ffn.
inline double attention_params(const ModelShape& m) {
  const double h = m.hidden;
  return 2.0 * h * h + 2.0 * h * (h * m.kv_heads / m.heads);
}
inline double mlp_params(const ModelShape& m) { return 3.0 * m.hidden * static_cast<double>(m.ffn); }
inline double expert_params(const ModelShape& m) { return 3.0 * m.hidden * static_cast<double>(m.expert_ffn); }
// Experts on the busiest EP rank: experts are dealt out in blocks of ceil(experts / ep).
inline int experts_per_rank(const ModelShape& m, int ep) { return (m.experts + ep - 1) / ep; }

// load: the weights copied from host memory (or storage) to the GPUs (a model load).
enum class Phase { prefill, decode, load };

// Where a load's pinned host buffers live: on the GPU's own socket, on another socket (the copy
// then crosses the inter-socket link), or on one NUMA node named by number (a cpu device of
// the GPU's node, in topology order).
enum class HostNuma { local, remote, node };
// Where a load's weights come from: host memory already holding them, or NVMe drives of the
// topology (read directly into the GPU with GPUDirect Storage, else bounced through host memory).
enum class LoadSource { host, storage };

// A decode that keeps part of each GPU's KV cache and weights in pinned host memory
// (`workload.offload`): every step copies each layer's offloaded share host -> GPU before the
// layer needs it (one copy engine, in layer order, two layers' buffers on the GPU: the copy of
// layer l waits for layer l - 2 to finish), and writes the step's new KV back GPU -> host
// after the layer's attention. The copies take the topology's route from the host_numa node
// to the GPU (PCIe, root complex, UPI, NVLink-C2C), shared with whatever else uses it.
struct Offload {
  double kv = 0.0;        // share of each GPU's KV cache held in host memory, 0..1
  double weights = 0.0;   // share of each GPU's weights held in host memory, 0..1
  HostNuma host_numa = HostNuma::local;
  int numa_node = -1;     // HostNuma::node: which (a cpu's socket number)
  input::Position at, host_numa_at;   // for errors only the topology can show
  bool any() const { return kv > 0.0 || weights > 0.0; }
};

struct Workload {
  Phase phase = Phase::prefill;
  long tokens = 0;      // prefill: tokens per batch (per data-parallel replica)
  long batch = 0;       // decode: sequences per replica
  long context = 0;     // decode: context length (for the KV cache size)
  sim::Bytes bytes;     // load: total bytes to load (0: the model's weights), split over the GPUs
  HostNuma host_numa = HostNuma::local;   // load: where the host buffers live
  int numa_node = -1;                     // HostNuma::node: which (a cpu's socket number)
  LoadSource source = LoadSource::host;   // load: host memory or the node's NVMe drives
  bool gds = false;                       // storage: GPUDirect Storage (drive -> GPU directly)
  input::Position host_numa_at, source_at;   // for errors only the topology can show
  Offload offload;                        // decode: KV cache and weights in host memory
  // Prefill/decode disaggregation: the decode group is the same layout shifted by
  // decode_offset GPUs; the prefill ships its KV cache there, layer by layer (overlapping
  // the rest of the prefill) or all at once at the end. 0: no disaggregation.
  int decode_offset = 0;
  bool kv_layer_by_layer = true;
  // The batch split into this many micro-batches that flow one behind the other: pipeline
  // stages work on different micro-batches at once, and a GPU computes one micro-batch
  // while another's collectives are on the wire (two micro-batches ping-ponging EP
  // all_to_all with expert compute). 1: the whole batch at once.
  int micro_batches = 1;
};

// Where a load reads from, for output: "host memory", "host memory on the far socket",
// "storage with GPUDirect Storage", "storage through host memory on NUMA node 1", ...
std::string load_source_text(const Workload& w);
// Where a decode's offloaded KV cache and weights live, for output: "host memory", "host
// memory on the far socket", "host memory on NUMA node 1".
std::string offload_place_text(const Offload& o);

enum class Placement { pack, spread, explicit_map };

struct Layout {
  int tp = 1, ep = 1, pp = 1, dp = 1;
  Placement placement = Placement::pack;
  std::vector<int> rank_map;   // explicit: rank -> GPU index in topology order
  int gpus() const { return tp * pp * dp; }
};

// Per-layer compute time: given outright, or a roofline from the GPU's peak rates.
struct Compute {
  std::optional<sim::Seconds> layer_time;
  double peak_flops = 0.0;            // FLOP/s
  sim::BytesPerSec memory_bandwidth;  // HBM
  bool enabled() const { return layer_time.has_value() || peak_flops > 0.0; }
};

struct Scenario {
  std::string name;
  std::string file;                        // where it was read from
  std::string topology;                    // path
  std::map<std::string, std::string> set;  // topology overrides
  ModelShape model;
  Workload workload;
  Layout layout;
  Compute compute;
  std::optional<models::Algorithm> tp_algorithm;   // force the TP all_reduce algorithm
  std::optional<models::Protocol> tp_protocol;
  // `pick: nccl`: every collective's algorithm as NCCL's own cost model picks it (models/
  // nccl_tuning.h); `fastest` (the default): the closed form's fastest. A models::parse_ranking name.
  std::string pick = "fastest";
  // `faults: {fail: [...], degrade: [...]}`: what-if failures of the topology, as the
  // --fail and --degrade options take them (topologies/faults.h); the commands add theirs.
  std::vector<std::string> fail;
  std::vector<std::string> degrade;
  // `transport: {p2p: on|off, p2p_level: auto|PIX|PXB|PHB|SYS, gdr: auto|on|off, net: ib|socket}`: NCCL's transport knobs
  // (models::Transports; absent keys keep NCCL's defaults); --p2p, --gdr and --net win.
  models::Transports transports;
};

// The head that scenario and jobs files share: `name:` (default: the file's stem),
// `topology:` (resolved against the file's folder) and `set:` (topology overrides).
struct FileHead {
  std::string name;
  std::string topology;
  std::map<std::string, std::string> set;
};
FileHead read_head(const input::Value& doc, const std::string& path);

// Reads a `faults:` mapping (fail: and degrade:, each a pattern or a list of them) into
// `fail` and `degrade`; shared by scenario and jobs files.
void read_faults(const input::Value& v, std::vector<std::string>& fail, std::vector<std::string>& degrade);

// Reads a `transport:` mapping (p2p, gdr, net) over `out`; shared by scenario and jobs files.
void read_transports(const input::Value& v, models::Transports& out);

// Throws input::InputError at file:line:column for anything unknown, missing or invalid
// (a layout that does not divide the heads, layers or experts, say).
Scenario load_scenario(const std::string& path, const std::map<std::string, std::string>& overrides = {});
// A model file alone (for `wiresim sweep --model M.yaml`): the `model:` mapping, or a file
// that is only a model.
ModelShape load_model(const std::string& path);
// Checks that the layout fits the model and the GPU count; returns the reason if not.
std::optional<std::string> layout_problem(const ModelShape& model, const Layout& layout, int gpus);

}  // namespace wiresim::scenarios
