// What a GPU holds, by hand for Llama-3-70B (hidden 8192, 80 layers, 64 heads / 8 KV heads,
// MLP 28672, BF16), and the check against a GPU's capacity.
#include <doctest/doctest.h>

#include <string>

#include "input/input_error.h"
#include "models/params.h"
#include "scenarios/memory.h"
#include "scenarios/step.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::scenarios;

namespace {

ModelShape llama70b() {
  ModelShape m;
  m.name = "llama-70b";
  m.hidden = 8192;
  m.layers = 80;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn = 28672;
  m.dtype_bytes = 2;
  return m;
}

}  // namespace

TEST_CASE("weights, KV cache and activations per GPU, by hand") {
  const ModelShape m = llama70b();
  // Per layer: attention 2 x 8192^2 + 2 x 8192^2 x 8/64 = 150,994,944 parameters; MLP
  // 3 x 8192 x 28672 = 704,643,072; 80 layers: 68,451,041,280 parameters, 136.9 GB in BF16.
  const double params = 80.0 * (150994944.0 + 704643072.0);
  Layout one;
  CHECK(weight_bytes_per_gpu(m, one).count() == rel_approx(2.0 * params));
  Layout tp8;
  tp8.tp = 8;
  Workload decode;
  decode.phase = Phase::decode;
  decode.batch = 32;
  decode.context = 4096;
  const MemoryUse u = memory_per_gpu(m, tp8, decode);
  CHECK(u.weights.count() == rel_approx(2.0 * params / 8));
  // 32 x 4096 tokens x 80 layers x K and V x 1 KV head (8 / 8) x 128 x 2 B = 5.37 GB.
  CHECK(u.kv_cache.count() == rel_approx(32.0 * 4096 * 80 * 2 * 1 * 128 * 2));
  // 32 tokens in flight x (8192 + 28672 / 8) x 2 B x 2.
  CHECK(u.activations.count() == rel_approx(2.0 * 32 * (8192 + 3584) * 2));
  // TP 16 over 8 KV heads: each rank keeps a whole head, so the cache does not shrink further.
  Layout tp16;
  tp16.tp = 16;
  CHECK(memory_per_gpu(m, tp16, decode).kv_cache.count() == rel_approx(u.kv_cache.count()));
  // PP halves every per-layer share.
  Layout tp4pp2;
  tp4pp2.tp = 4;
  tp4pp2.pp = 2;
  CHECK(memory_per_gpu(m, tp4pp2, decode).kv_cache.count() == rel_approx(u.kv_cache.count()));
  CHECK(memory_per_gpu(m, tp4pp2, decode).weights.count() == rel_approx(u.weights.count()));
}

TEST_CASE("the memory check: 90% of the GPU's capacity, with the sizes in the message") {
  MemoryUse u;
  u.weights = sim::Bytes{70e9};
  CHECK_FALSE(memory_problem(u, sim::Bytes{80e9}));   // 70 <= 72
  u.kv_cache = sim::Bytes{3e9};
  const auto why = memory_problem(u, sim::Bytes{80e9});
  REQUIRE(why);
  CHECK(why->find("73.0 GB") != std::string::npos);
  CHECK(why->find("72.0 GB usable of a 80 GB GPU") != std::string::npos);
  CHECK_FALSE(memory_problem(u, sim::Bytes{0.0}));    // capacity unknown: not checked
}

TEST_CASE("run_step refuses Llama-70B in BF16 on one 80 GB H100, and takes it on eight") {
  Scenario s;
  s.file = "one-gpu.yaml";
  s.model = llama70b();
  s.workload.phase = Phase::decode;
  s.workload.batch = 1;
  s.workload.context = 128;
  const topo::LinkGraph g = topo::load_topology(std::string(WIRESIM_SOURCE_DIR) + "/topologies/hgx-h100.yaml");
  const models::Machine machine(g, models::default_params());
  CHECK_THROWS_WITH_AS(run_step(s, machine, ClosedFormComm{}), doctest::Contains("136.9 GB weights"),
                       input::InputError);
  s.layout.tp = 8;
  const StepResult r = run_step(s, machine, ClosedFormComm{});
  CHECK(r.gpu_memory.count() == 80e9);
  CHECK(r.memory.weights.count() == rel_approx(136.9e9 / 8).epsilon(1e-3));
}

TEST_CASE("DeepSeek-V3-class shapes: dense first layers, shared experts, uneven EP and an MLA-sized KV cache") {
  const ModelShape m = load_model(std::string(WIRESIM_SOURCE_DIR) + "/scenarios/models/deepseek-v3.yaml");
  CHECK(m.dense_layers == 3);
  CHECK_FALSE(is_moe_layer(m, 2));
  CHECK(is_moe_layer(m, 3));
  // Parameters by hand: 3 dense layers of 4 h^2 + 3 h 18432, 58 MoE layers of 4 h^2 + 257
  // experts of 3 h 2048 (256 routed, 1 shared): 671.1e9 (the report's 671B, embeddings aside).
  const double h = 7168, attn = 4 * h * h, expert = 3 * h * 2048;
  const double params = 3 * (attn + 3 * h * 18432) + 58 * (attn + 257 * expert);
  Layout one;
  CHECK(weight_bytes_per_gpu(m, one).count() == rel_approx(params));   // FP8: a byte each
  CHECK(params == rel_approx(671e9).epsilon(0.01));
  // EP 3 over 256 experts: blocks of 86, the busiest rank holds 86 routed experts.
  CHECK(experts_per_rank(m, 3) == 86);
  Layout ep3;
  ep3.tp = 3;
  ep3.ep = 3;
  ep3.dp = 1;
  // tp 3 does not divide 128 heads: the layout is refused for that, not for the uneven EP.
  CHECK(layout_problem(m, ep3, 8)->find("heads") != std::string::npos);
  Layout tp2ep6;
  tp2ep6.tp = 2;
  tp2ep6.dp = 3;
  tp2ep6.ep = 6;
  CHECK_FALSE(layout_problem(m, tp2ep6, 8));
  CHECK(weight_bytes_per_gpu(m, tp2ep6).count() ==
        rel_approx(3 * (attn + 3 * h * 18432) / 2 + 58 * (attn / 2 + 43 * expert + expert / 2)));
  // MLA: 1152 B per token per layer on every TP rank, not split by heads.
  Layout tp8;
  tp8.tp = 8;
  Workload decode;
  decode.phase = Phase::decode;
  decode.batch = 4;
  decode.context = 1000;
  CHECK(memory_per_gpu(m, tp8, decode).kv_cache.count() == rel_approx(4.0 * 1000 * 1152 * 61));
}
