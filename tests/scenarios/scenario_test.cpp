// Shipped scenarios: each loads, runs, and shows what it was written to show.
#include <doctest/doctest.h>

#include <fstream>
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "input/input_error.h"
#include "models/params.h"
#include "scenarios/scenario.h"
#include "scenarios/step.h"
#include "tests/approx.h"
#include "tests/scratch_dir.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::scenarios;

namespace {

std::string repo(const std::string& path) { return std::string(WIRESIM_SOURCE_DIR) + "/" + path; }

// The three ways a step's communication is costed (scenarios/comm_cost.h), by name.
enum class Method { simulate, analytic, naive };

StepResult step(const Scenario& s, const topo::LinkGraph& g, Method method, const models::Limits& limits = {}) {
  const models::Machine machine(g, models::default_params());
  const SimulatedComm simulated;
  const ClosedFormComm closed_form;
  const NaiveComm naive;
  const CommCost& cost = method == Method::naive      ? static_cast<const CommCost&>(naive)
                         : method == Method::analytic ? static_cast<const CommCost&>(closed_form)
                                                      : simulated;
  return run_step(s, machine, cost, limits);
}

StepResult run_file(const std::string& file, Method method = Method::simulate, const std::string& topo = "") {
  Scenario s = load_scenario(repo("scenarios/" + file));
  if (!topo.empty()) s.topology = repo("topologies/" + topo);
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  return step(s, g, method);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kModel = "model: {name: m, hidden: 8192, layers: 80, heads: 64, kv_heads: 8, dtype: bf16}\n";

}  // namespace

TEST_CASE("the worked example's naive estimates are the textbook numbers") {
  // 160 all_reduces x 2 x (4096 x 8192 x 2 B) = 21.47 GB of traffic, divided by:
  // 1.8 TB/s (NVLink 5, bidirectional) = 11.9 ms; 900 GB/s (NVLink 4, bidirectional)
  // = 23.9 ms; 63 GB/s (PCIe 5 x16, per direction) = 341 ms; 50 GB/s (NDR) = 429 ms.
  const double traffic = 160.0 * 2.0 * 4096 * 8192 * 2;
  CHECK(run_file("llama70b-tp8-prefill.yaml", Method::naive, "hgx-b200.yaml").step.count() ==
        rel_approx(traffic / 1.8e12).epsilon(1e-6));
  CHECK(run_file("llama70b-tp8-prefill.yaml", Method::naive).step.count() ==
        rel_approx(traffic / 0.9e12).epsilon(1e-6));
  CHECK(run_file("llama70b-tp8-prefill.yaml", Method::naive, "pcie-h100-8gpu-2socket.yaml").step.count() ==
        rel_approx(traffic / 63e9).epsilon(1e-6));
  CHECK(run_file("llama70b-tp8-prefill-ib.yaml", Method::naive).step.count() ==
        rel_approx(traffic / 50e9).epsilon(1e-6));
}

TEST_CASE("simulated NVLink steps are slower than the naive bidirectional estimate") {
  // Per direction NVLink 4 carries 450 GB/s raw (~375 achieved), not 900: the simulated
  // step must exceed the naive one, and by less than the 2.4x that 900 / 375 gives.
  const double naive = run_file("llama70b-tp8-prefill.yaml", Method::naive).step.count();
  const double sim = run_file("llama70b-tp8-prefill.yaml").step.count();
  CHECK(sim > 1.3 * naive);
  CHECK(sim < 2.4 * naive);
}

TEST_CASE("decode with ring forced is the pure-latency term") {
  // 160 all_reduces of 512 KiB, each ~14 ring steps of ~1.5 us: about 3.4 ms.
  const StepResult r = run_file("llama70b-tp8-decode.yaml");
  CHECK(r.by_collective.at("tp_all_reduce").count == 160);
  CHECK(r.step.ms() == rel_approx(3.4).epsilon(0.1));
}

TEST_CASE("placement rule: TP inside the node and PP across beats TP across nodes") {
  const StepResult tp16 = run_file("llama70b-2node-tp16.yaml");
  const StepResult tp8pp2 = run_file("llama70b-2node-tp8-pp2.yaml");
  CHECK(tp8pp2.step < tp16.step);
  // TP16's all_reduces cross InfiniBand; TP8xPP2 sends only activations over it.
  CHECK(tp16.by_tier.at("ib").bytes.count() > 100.0 * tp8pp2.by_tier.at("ib").bytes.count());
  CHECK(tp8pp2.by_collective.at("pp_send_recv").count == 8);
}

TEST_CASE("EP across nodes and skewed routing both cost time") {
  const StepResult node = run_file("mixtral-ep8-node.yaml");
  const StepResult two = run_file("mixtral-ep8-2node.yaml");
  const StepResult skew = run_file("mixtral-ep8-node-skewed.yaml");
  CHECK(two.step > 2.0 * node.step);
  CHECK(skew.step > 1.5 * node.step);
  // 32 MoE layers, dispatch and combine each.
  CHECK(node.by_collective.at("ep_all_to_all").count == 64);
}

TEST_CASE("a TP=4 group spread over both sockets pays NCCL's SHM staging on the SYS hops") {
  const StepResult local = run_file("llama8b-tp4-pcie-switch.yaml");
  const StepResult spread = run_file("llama8b-tp4-pcie-sys.yaml");
  // Under one switch the ring runs at the GPU's Gen4 x16 link, 31.5 x 0.8 = 25.2 GB/s a hop;
  // across sockets NCCL stages the SYS hops through host memory at shm_bandwidth, 3.9 GB/s,
  // and a ring goes at its slowest hop: 25.2 / 3.9 = 6.46x on the bandwidth term, a little
  // less with the latency both pay.
  const double ratio = spread.step.count() / local.step.count();
  CHECK(ratio > 5.0);
  CHECK(ratio < 25.2 / 3.9);
  CHECK(spread.by_tier.count("upi") == 1);
  CHECK(local.by_tier.count("upi") == 0);
}

TEST_CASE("the closed form agrees with the simulation when groups do not contend") {
  const double a = run_file("llama70b-tp8-prefill.yaml", Method::analytic).step.count();
  const double s = run_file("llama70b-tp8-prefill.yaml").step.count();
  CHECK(a == rel_approx(s).epsilon(0.02));
}

TEST_CASE("a roofline adds compute and leaves communication exposed") {
  const std::string path = write_temp("roofline.yaml", std::string("topology: ") + repo("topologies/hgx-h100.yaml") +
                                                           "\n" + kModel +
                                                           "workload: {phase: prefill, tokens: 4096}\nlayout: {tp: 8}\n"
                                                           "compute: {peak_flops: 989TFLOP/s, memory_bandwidth: 3.35TB/s}\n");
  Scenario s = load_scenario(path);
  const topo::LinkGraph g = topo::load_topology(s.topology);
  const StepResult r = step(s, g, Method::simulate);
  // Prefill is compute-bound: 2 x 4096 tokens x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x
  // 32768) params / 8 GPUs / 989 TFLOP/s per layer, 80 layers: ~59 ms.
  const double per_layer = 2.0 * 4096 * (2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 32768) / 8 / 989e12;
  // Equal up to the DAG's integer picoseconds, rounded once per node (hundreds of them): 1e-8.
  CHECK(r.compute.count() == rel_approx(80 * per_layer).epsilon(1e-8));
  CHECK(r.step.count() == rel_approx(r.compute.count() + r.exposed_comm.count()).epsilon(1e-9));
  CHECK(r.exposed_comm.count() > 0.0);
  // One chain, every GPU computing all of it: busy for compute / step of the step.
  CHECK(r.compute_utilisation == rel_approx(r.compute.count() / r.step.count()).epsilon(1e-6));
}

TEST_CASE("bad scenarios are refused with file, line and what would be valid") {
  const auto expect_error = [](const std::string& name, const std::string& text, int line, const char* words) {
    const std::string path = write_temp(name, text);
    try {
      load_scenario(path);
      FAIL("expected an InputError for " << name);
    } catch (const input::InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
      CHECK(e.file() == path);
      if (line > 0) CHECK(e.line() == line);
    }
  };
  const std::string topo = std::string("topology: ") + repo("topologies/hgx-h100.yaml") + "\n";
  expect_error("unknown.yaml", topo + kModel + "workload: {phase: prefill, tokens: 4}\nlayout: {tp: 8}\nlayuot: {}\n", 5,
               "layuot");
  expect_error("heads.yaml", topo + kModel + "workload: {phase: prefill, tokens: 4}\nlayout: {tp: 3}\n", 4,
               "does not divide the 64 attention heads");
  expect_error("layers.yaml", topo + kModel + "workload: {phase: prefill, tokens: 4}\nlayout: {pp: 3}\n", 4,
               "does not divide the 80 layers");
  expect_error("phase.yaml", topo + kModel + "workload: {phase: training, tokens: 4}\nlayout: {tp: 8}\n", 3,
               "prefill, decode or load");
  expect_error("modelkey.yaml", topo + "model: {hidden: 8, layers: 1, heads: 1, colour: red}\n"
                                       "workload: {phase: prefill, tokens: 4}\nlayout: {tp: 1}\n", 2, "colour");
  expect_error("experts.yaml", topo + "model: {hidden: 8, layers: 2, heads: 2, experts: 6, top_k: 2}\n"
                                      "workload: {phase: prefill, tokens: 4}\nlayout: {tp: 2, ep: 8}\n", 0,
               "ep = 8 is more ranks than the 6 experts");
  expect_error("missing.yaml", topo + kModel + "layout: {tp: 8}\n", 0, "workload");
  expect_error("pick.yaml", topo + kModel + "workload: {phase: prefill, tokens: 4}\nlayout: {tp: 8}\npick: best\n", 5,
               "pick: expected fastest or nccl, got 'best'");
}

TEST_CASE("a layout that needs more GPUs than the topology has is refused") {
  Scenario s = load_scenario(repo("scenarios/llama70b-2node-tp16.yaml"));
  const topo::LinkGraph g = topo::load_topology(repo("topologies/hgx-h100.yaml"));
  CHECK_THROWS_WITH_AS(step(s, g, Method::simulate),
                       doctest::Contains("16 GPUs, but the topology has 8"), input::InputError);
}

TEST_CASE("model load: 70 GB over PCIe 5 vs NVLink-C2C") {
  // Naive floor: 70 GB over one Gen5 x16 link at 63 GB/s = 1.11 s; the simulation runs at the
  // achievable rate (63 x 0.84 = 52.9 GB/s): 1.32 s. Over C2C (225 GB/s per GPU) it is ~3.5x faster.
  const StepResult naive = run_file("model-load-pcie5.yaml", Method::naive);
  CHECK(naive.step.count() == rel_approx(70e9 / 63e9).epsilon(1e-3));
  const StepResult pcie = run_file("model-load-pcie5.yaml");
  CHECK(pcie.step.count() == rel_approx(70e9 / (63e9 * 0.84)).epsilon(1e-3));
  const StepResult c2c = run_file("model-load-c2c.yaml");
  CHECK(c2c.step.count() * 3.0 < pcie.step.count());
  CHECK(pcie.by_tier.count("pcie") == 1);
  CHECK(c2c.by_tier.count("c2c") == 1);
}

TEST_CASE("model load: host buffers on the far socket pay the UPI link, which 8 GPUs share") {
  // pcie-h100-8gpu-2socket: 4 GPUs a socket, 2 a PCIe switch, each switch on a Gen5 x16
  // uplink (63 GB/s raw); the sockets joined by 3 UPI links of 32 GB/s (96 GB/s a direction).
  // 140 GB over 8 GPUs is 17.5 GB each. Local buffers: 35 GB over each uplink, nothing over
  // UPI. Far buffers: the 4 GPUs of a socket take 70 GB through one direction of UPI, which
  // cannot go faster than its raw rate: 70 GB / 96 GB/s = 0.729 s bounds the load below.
  const StepResult local = run_file("model-load-local-numa.yaml");
  const StepResult remote = run_file("model-load-remote-numa.yaml");
  CHECK(local.by_tier.count("upi") == 0);
  CHECK(local.step.count() >= 35e9 / 63e9);
  REQUIRE(remote.by_tier.count("upi") == 1);
  CHECK(remote.by_tier.at("upi").bytes.count() == rel_approx(2 * 70e9).epsilon(1e-9));
  CHECK(remote.step.count() >= 70e9 / 96e9);
  CHECK(remote.step > local.step);
  // The socket link is the bottleneck: the busiest link is a UPI direction.
  REQUIRE(!remote.busiest.empty());
  const std::string& hot = remote.busiest.front().link;
  CHECK_MESSAGE((hot.find("cpu0->cpu1") != std::string::npos || hot.find("cpu1->cpu0") != std::string::npos), hot);
  CHECK(remote.by_collective.at("weight_load").bytes.count() == rel_approx(140e9).epsilon(1e-9));
}

TEST_CASE("model load: a NUMA node named by number is that socket's memory") {
  Scenario s = load_scenario(repo("scenarios/model-load-local-numa.yaml"));
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  s.workload.host_numa = HostNuma::node;
  s.workload.numa_node = 0;
  // Every GPU from socket 0's memory: the 4 GPUs of socket 1 cross UPI (70 GB one way).
  const StepResult zero = step(s, g, Method::simulate);
  REQUIRE(zero.by_tier.count("upi") == 1);
  CHECK(zero.by_tier.at("upi").bytes.count() == rel_approx(70e9).epsilon(1e-9));
  CHECK(zero.step.count() >= 70e9 / 96e9);
}

TEST_CASE("model load from storage: GPUDirect Storage vs a bounce through host memory, 140 GB") {
  // dgx-h100-nvme: 8 U.2 drives on PCIe Gen4 x4, 7.88 GB/s raw each, read 6.6 GiB/s. Whatever
  // the path, 140 GB leave 8 drives no faster than 8 x 7.88 GB/s: 2.22 s bounds both below.
  // At PCIe's achievable 84% (6.62 GB/s a drive, under the drive's 7.09 GB/s read) GDS is
  // drive-bound: 140 GB / (8 x 6.62 GB/s) = 2.645 s.
  const StepResult gds = run_file("model-load-gds.yaml");
  const StepResult bounce = run_file("model-load-bounce.yaml");
  const double floor = 140e9 / (8 * 7.88e9);
  CHECK(gds.step.count() >= floor);
  CHECK(bounce.step.count() >= floor);
  CHECK(gds.step.count() == rel_approx(140e9 / (8 * 7.88e9 * 0.84)).epsilon(0.01));
  // The bounce moves every byte twice: drive -> host, then host -> GPU; GDS once.
  CHECK(gds.by_collective.count("storage_read") == 0);
  CHECK(gds.by_collective.at("weight_load").bytes.count() == rel_approx(140e9).epsilon(1e-9));
  CHECK(bounce.by_collective.at("storage_read").bytes.count() == rel_approx(140e9).epsilon(1e-9));
  CHECK(bounce.by_collective.at("weight_load").bytes.count() == rel_approx(140e9).epsilon(1e-9));
  CHECK(bounce.by_tier.at("pcie").bytes > gds.by_tier.at("pcie").bytes);
  // The last chunk is still to copy when the drives finish: the bounce is the slower, by at
  // least that chunk (17.5 GB / 8 drives / 8 chunks = 273 MB) over a Gen5 x16 link.
  CHECK(bounce.step.count() >= gds.step.count() + 17.5e9 / 64 / 63e9);
}

TEST_CASE("model load: bad host_numa, source and gds values are refused where they are written") {
  const std::string head = std::string("topology: ") + repo("topologies/pcie-h100-8gpu-2socket.yaml") + "\n" + kModel;
  const auto load_error = [](const std::string& name, const std::string& text) {
    const std::string path = write_temp(name, text);
    try {
      load_scenario(path);
    } catch (const input::InputError& e) {
      CHECK(e.file() == path);
      return e;
    }
    FAIL("expected an InputError for " << name);
    return input::InputError("");
  };
  const auto e1 = load_error("numa.yaml", head + "workload: {phase: load, bytes: 70GB, host_numa: far}\nlayout: {tp: 8}\n");
  CHECK(e1.line() == 3);
  CHECK(e1.column() == 49);
  CHECK(std::string(e1.what()).find("expected local, remote or a NUMA node number") != std::string::npos);
  const auto e2 = load_error("source.yaml", head + "workload: {phase: load, source: disk}\nlayout: {tp: 8}\n");
  CHECK(e2.line() == 3);
  CHECK(std::string(e2.what()).find("expected host or storage, got 'disk'") != std::string::npos);
  const auto e3 = load_error("gds.yaml", head + "workload: {phase: load, source: storage, gds: maybe}\nlayout: {tp: 8}\n");
  CHECK(e3.line() == 3);
  CHECK(std::string(e3.what()).find("expected on or off") != std::string::npos);
  const auto e4 = load_error("gdshost.yaml", head + "workload: {phase: load, gds: on}\nlayout: {tp: 8}\n");
  CHECK(std::string(e4.what()).find("source: storage") != std::string::npos);
  const auto e5 = load_error("prefill.yaml", head + "workload: {phase: prefill, tokens: 4, host_numa: remote}\nlayout: {tp: 8}\n");
  CHECK(e5.line() == 3);
  CHECK(std::string(e5.what()).find("applies to a load") != std::string::npos);
  const auto e6 = load_error("gdsnuma.yaml", head + "workload: {phase: load, source: storage, gds: on, host_numa: 1}\nlayout: {tp: 8}\n");
  CHECK(e6.line() == 3);
  CHECK(std::string(e6.what()).find("passes through no host buffer") != std::string::npos);

  // What only the topology can say, still at the value's line and column.
  const auto run_error = [&](const std::string& name, const std::string& topology, const std::string& workload) {
    const std::string path = write_temp(name, std::string("topology: ") + repo("topologies/" + topology) + "\n" +
                                                  kModel + workload + "\nlayout: {tp: 8}\n");
    const Scenario s = load_scenario(path);
    const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
    try {
      step(s, g, Method::simulate);
    } catch (const input::InputError& e) {
      CHECK(e.file() == path);
      CHECK(e.line() == 3);
      return std::string(e.what());
    }
    FAIL("expected an InputError for " << name);
    return std::string();
  };
  CHECK(run_error("node5.yaml", "pcie-h100-8gpu-2socket.yaml", "workload: {phase: load, host_numa: 5}")
            .find("no NUMA node 5") != std::string::npos);
  // A GB200 tray's two Graces are joined by no link the topology models.
  CHECK(run_error("nolink.yaml", "gb200-nvl72.yaml", "workload: {phase: load, host_numa: remote}")
            .find("by no route") != std::string::npos);
  CHECK(run_error("nodrives.yaml", "hgx-h100.yaml", "workload: {phase: load, source: storage, gds: on}")
            .find("needs NVMe drives") != std::string::npos);
}

TEST_CASE("disaggregation: shipping the KV cache layer by layer hides it behind the prefill") {
  const StepResult layer = run_file("llama70b-disagg-layer.yaml");
  const StepResult all = run_file("llama70b-disagg-all.yaml");
  // 4096 tokens x 80 layers x 2 (K, V) x 1024 (8 of 64 heads of 8192) x 2 B = 1.34 GB, 8 ranks.
  CHECK(layer.by_collective.at("kv_transfer").bytes.count() == rel_approx(4096.0 * 80 * 2 * 1024 * 2));
  CHECK(layer.by_collective.at("kv_transfer").count == 80 * 8);
  CHECK(all.by_collective.at("kv_transfer").count == 8);
  // At the end the whole cache crosses NDR at once (~3.5 ms); layer by layer only the last
  // layer's share is left when the prefill ends.
  CHECK(layer.step < all.step);
  CHECK(all.step.count() - layer.step.count() > 2e-3);
  CHECK(layer.exposed_comm.count() == rel_approx(layer.step.count() - layer.compute.count()));
}

TEST_CASE("disaggregation: the KV cache shipped is the one memory counts (MLA whole per rank, GQA heads per rank)") {
  Scenario s = load_scenario(repo("scenarios/llama70b-disagg-all.yaml"));
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  // MLA: 576 cached elements per token and layer (DeepSeek-V3's 512 latent + 64 RoPE) x 2 B,
  // whole on each of the 8 TP ranks.
  s.model.kv_bytes_per_token = 576 * 2;
  CHECK(step(s, g, Method::simulate).by_collective.at("kv_transfer").bytes.count() ==
        rel_approx(4096.0 * 80 * 1152 * 8));
  // 4 KV heads over TP 8: each rank holds (and ships) one whole head of 128, as vLLM replicates it.
  s.model.kv_bytes_per_token = 0;
  s.model.kv_heads = 4;
  CHECK(step(s, g, Method::simulate).by_collective.at("kv_transfer").bytes.count() ==
        rel_approx(4096.0 * 80 * 2 * 128 * 2 * 8));
}

namespace {

// A shipped scenario with its workload's micro_batches replaced.
StepResult run_with_micro_batches(const std::string& file, int m) {
  Scenario s = load_scenario(repo("scenarios/" + file));
  s.workload.micro_batches = m;
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  return step(s, g, Method::simulate);
}

}  // namespace

TEST_CASE("micro-batches: a pipeline's compute-only step is (m + pp - 1) stage slices") {
  // Prefill on the roofline is compute-bound, so a micro-batch's stage time is 1/m of the
  // whole batch's: the compute-bound step of a GPipe forward is (m + pp - 1) x stage / m.
  const StepResult one = run_with_micro_batches("llama70b-2node-pp2-microbatch.yaml", 1);
  const double stage = one.compute.count() / 2.0;   // pp = 2, no overlap with one micro-batch
  for (int m : {2, 4, 8}) {
    CAPTURE(m);
    const StepResult r = run_with_micro_batches("llama70b-2node-pp2-microbatch.yaml", m);
    CHECK(r.compute.count() == rel_approx((m + 1) * stage / m).epsilon(1e-8));   // picosecond rounding
    // Conservation: the same activations cross the stage boundary, the same all_reduce bytes.
    CHECK(r.by_collective.at("pp_send_recv").bytes.count() ==
          rel_approx(one.by_collective.at("pp_send_recv").bytes.count()));
    CHECK(r.by_collective.at("tp_all_reduce").bytes.count() ==
          rel_approx(one.by_collective.at("tp_all_reduce").bytes.count()));
    CHECK(r.by_collective.at("tp_all_reduce").count == m * one.by_collective.at("tp_all_reduce").count);
    // Stages in flight: faster than the unsplit step, never faster than its compute alone.
    CHECK(r.step < one.step);
    CHECK(r.step >= r.compute);
    CHECK(r.exposed_comm.count() == rel_approx(r.step.count() - r.compute.count()));
    // Each GPU computes its stage's layers for every micro-batch: a stage's work per step.
    CHECK(r.compute_utilisation == rel_approx(stage / r.step.count()).epsilon(1e-6));  // ps-rounded kernels
  }
}

TEST_CASE("micro-batches: two ping-ponging micro-batches hide EP all_to_all behind compute") {
  const StepResult one = run_with_micro_batches("mixtral-ep8-2node-pingpong.yaml", 1);
  const StepResult two = run_file("mixtral-ep8-2node-pingpong.yaml");
  // Without pipeline stages, splitting a compute-bound prefill costs no compute...
  CHECK(two.compute.count() == rel_approx(one.compute.count()).epsilon(1e-9));
  // ... nothing overlaps with one micro-batch: step = compute + every all_to_all...
  CHECK(one.step.count() == rel_approx(one.compute.count() + one.comm.count()).epsilon(1e-6));
  // ... and with two, most of the all_to_all time hides behind the other's compute.
  CHECK(two.exposed_comm.count() < 0.5 * one.exposed_comm.count());
  CHECK(two.step < one.step);
  CHECK(two.step >= two.compute);
  CHECK(two.by_collective.at("ep_all_to_all").bytes.count() ==
        rel_approx(one.by_collective.at("ep_all_to_all").bytes.count()));
  CHECK(two.by_collective.at("ep_all_to_all").count == 2 * one.by_collective.at("ep_all_to_all").count);
}

TEST_CASE("micro-batches: a communicator runs one collective at a time, a GPU one kernel at a time") {
  // Replay the step's DAG: every node bound to a processor holds it from its start to the end
  // of the node that frees it; no two holds of one processor may overlap.
  const StepResult r = run_with_micro_batches("llama70b-2node-pp2-microbatch.yaml", 4);
  // Sorted starts and sorted ends of one processor's holds interleave: start i+1 >= end i.
  std::map<std::uint32_t, std::vector<double>> acquired, freed;
  for (sim::NodeId id = 0; id < r.dag.size(); ++id) {
    const auto b = r.dag.binding(id);
    if (b.processor != sim::TransferDag::kNoProcessor) acquired[b.processor].push_back(r.run.nodes[id].start.count());
    if (b.releases != sim::TransferDag::kNoProcessor) freed[b.releases].push_back(r.run.nodes[id].end.count());
  }
  int communicators = 0;
  for (auto& [proc, starts] : acquired) {
    auto& ends = freed[proc];
    REQUIRE(starts.size() == ends.size());
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    for (std::size_t i = 1; i < starts.size(); ++i) CHECK(starts[i] >= ends[i - 1] - 1e-12);
    if (proc >= (1u << 30)) ++communicators;
  }
  // Two TP groups (one per stage): each all_reduce of 4 micro-batches x 40 layers x 2 in turn.
  CHECK(communicators == 2);
}

TEST_CASE("micro-batches: a given layer_time is shared out by tokens, and a decode re-reads weights") {
  // layer_time is for the whole batch: 80 layers x 200 us = 16 ms, split or not, on one stage.
  const std::string given = write_temp("mb_given.yaml", std::string("topology: ") + repo("topologies/hgx-h100.yaml") +
                                                            "\n" + kModel +
                                                            "workload: {phase: prefill, tokens: 4096, micro_batches: 3}\n"
                                                            "layout: {tp: 8}\ncompute: {layer_time: 200us}\n");
  Scenario s = load_scenario(given);
  const topo::LinkGraph g = topo::load_topology(s.topology);
  CHECK(step(s, g, Method::simulate).compute.count() ==
        rel_approx(80 * 200e-6).epsilon(1e-7));   // its nodes rounded to integer picoseconds: 320 ps in 16 ms
  // A memory-bound decode reads every weight once per micro-batch: splitting it costs compute.
  const std::string decode = write_temp("mb_decode.yaml", std::string("topology: ") + repo("topologies/hgx-h100.yaml") +
                                                              "\n" + kModel +
                                                              "workload: {phase: decode, batch: 32, context: 4096}\n"
                                                              "layout: {tp: 8}\n"
                                                              "compute: {peak_flops: 989TFLOP/s, memory_bandwidth: 3.35TB/s}\n");
  Scenario d = load_scenario(decode);
  const StepResult d1 = step(d, g, Method::simulate);
  d.workload.micro_batches = 2;
  const StepResult d2 = step(d, g, Method::simulate);
  CHECK(d2.compute.count() > 1.5 * d1.compute.count());
}

TEST_CASE("micro-batches: out of range, or on a load, is refused at its line") {
  const std::string topo = std::string("topology: ") + repo("topologies/hgx-h100.yaml") + "\n";
  for (const auto& [name, workload, words] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"mb0.yaml", "workload: {phase: prefill, tokens: 4, micro_batches: 0}\n", "workload.micro_batches"},
           {"mb5.yaml", "workload: {phase: prefill, tokens: 4, micro_batches: 5}\n", "workload.micro_batches"},
           {"mbload.yaml", "workload: {phase: load, micro_batches: 2}\n", "not a load"}}) {
    const std::string path = write_temp(name, topo + kModel + workload + "layout: {tp: 8}\n");
    try {
      load_scenario(path);
      FAIL("expected an InputError for " << name);
    } catch (const input::InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
      CHECK(e.line() == 3);
    }
  }
}

TEST_CASE("a step too big to simulate is refused up front, from an estimate within 2.5x of the real DAG") {
  for (const char* file : {"llama70b-tp8-prefill.yaml", "mixtral-ep8-2node-pingpong.yaml", "llama70b-2node-pp2-microbatch.yaml"}) {
    CAPTURE(file);
    Scenario s = load_scenario(repo(std::string("scenarios/") + file));
    const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
    const double real = static_cast<double>(step(s, g, Method::simulate).dag.size());
    const auto limit = [&](double factor) {
      return models::Limits{sim::Bytes{real * models::kBytesPerNode * factor}, 2e9};
    };
    CHECK_THROWS_WITH_AS(step(s, g, Method::simulate, limit(0.4)),
                         doctest::Contains("--max-memory"), input::InputError);
    CHECK_NOTHROW(step(s, g, Method::simulate, limit(2.5)));
  }
}

TEST_CASE("regression (fuzz_scenario): an include path the system cannot resolve is bad input") {
  // Found by libFuzzer: `include:` with a name too long for the file system made
  // std::filesystem throw past the reader; it must be an InputError at the include.
  CHECK_THROWS_AS(load_scenario(repo("tests/data/fuzz/scenario-long-include-path.yaml")), input::InputError);
}

namespace {

// llama-70b at TP 8: each GPU keeps one of the 8 KV heads, 2 (K, V) x 128 x 2 B = 512 B per
// token per layer; 32 sequences x 4096 tokens x 80 layers = 5.37 GB of KV cache per GPU.
constexpr double kKvPerGpu = 32.0 * 4096 * 512 * 80;
// The step's new token: 32 sequences x 512 B x 80 layers per GPU, written back.
constexpr double kNewKvPerGpu = 32.0 * 512 * 80;
// PCIe Gen5 x16 raw (topologies/pcie-h100-8gpu-2socket.yaml) and the share of it the model
// grants Hopper's PCIe (models/params.yaml link_efficiency, [M2] 53/63).
constexpr double kGen5 = 63e9, kPcieEfficiency = 0.84;

}  // namespace

TEST_CASE("KV offload on the PCIe box: every step copies the KV cache in over the uplinks two GPUs share") {
  const StepResult r = run_file("llama70b-decode-kv-offload.yaml");
  REQUIRE(r.offload);
  CHECK(r.offload->to_gpu.count() == rel_approx(8 * kKvPerGpu).epsilon(1e-9));
  CHECK(r.offload->to_host.count() == rel_approx(8 * kNewKvPerGpu).epsilon(1e-9));
  // Two GPUs' copies share a switch's x16 uplink: 2 x 5.37 GB / 63 GB/s = 170 ms at the raw
  // rate bounds the copies below; at the achievable 84% they take 2 x 5.37 / 52.9 = 203 ms,
  // which the copies (back to back, layer by layer) should reach within 5%.
  const double achievable = 2 * kKvPerGpu / (kGen5 * kPcieEfficiency);
  CHECK(r.offload->time.count() >= 2 * kKvPerGpu / kGen5);
  CHECK(r.offload->time.count() == rel_approx(achievable).epsilon(0.05));
  // The step holds its copies; what it waits for is the step beyond the same step with the KV
  // cache resident (~30 ms: 11 ms of compute and the TP all_reduces over PCIe), which cannot
  // hide 200 ms of copies: at least the copies' time less that step is exposed.
  CHECK(r.step >= r.offload->time);
  Scenario s = load_scenario(repo("scenarios/llama70b-decode-kv-offload.yaml"));
  s.workload.offload = {};
  const StepResult resident = step(s, topo::load_topology(s.topology, s.set), Method::simulate);
  CHECK(!resident.offload);
  CHECK(r.offload->exposed.count() == rel_approx(r.step.count() - resident.step.count()).epsilon(1e-9));
  CHECK(r.offload->exposed.count() >= r.offload->time.count() - resident.step.count());
  // The GPU keeps two layers' buffers of its offloaded KV cache: 2 / 80 of it.
  CHECK(r.memory.kv_cache.count() == rel_approx(kKvPerGpu * 2 / 80).epsilon(1e-9));
}

TEST_CASE("KV offload: buffers on the far socket are slower, the UPI link carrying every byte") {
  const StepResult local = run_file("llama70b-decode-kv-offload.yaml");
  const StepResult remote = run_file("llama70b-decode-kv-offload-remote.yaml");
  REQUIRE(local.offload);
  REQUIRE(remote.offload);
  // Every GPU's buffers are on the other socket: all 8 x 5.37 GB in (and the new KV out) cross UPI.
  // (The TP all_reduces' SHM transfers between the sockets cross it in both runs.)
  REQUIRE(remote.by_tier.count("upi") == 1);
  const double shm = local.by_tier.count("upi") ? local.by_tier.at("upi").bytes.count() : 0.0;
  CHECK(remote.by_tier.at("upi").bytes.count() - shm == rel_approx(8 * (kKvPerGpu + kNewKvPerGpu)).epsilon(1e-6));
  // The 4 GPUs of a socket pull 4 x 5.37 GB through one direction of UPI (3 x 32 GB/s): 224 ms
  // at the raw rate, beyond the local copies' 203 ms.
  CHECK(remote.offload->time.count() >= 4 * kKvPerGpu / 96e9);
  CHECK(remote.offload->time > local.offload->time);
  CHECK(remote.step > local.step);
}

TEST_CASE("KV offload: NVLink-C2C on GB200 copies the same KV cache several times faster than PCIe") {
  const StepResult pcie = run_file("llama70b-decode-kv-offload.yaml");
  const StepResult c2c = run_file("llama70b-decode-kv-offload-c2c.yaml");
  REQUIRE(c2c.offload);
  CHECK(c2c.offload->to_gpu.count() == rel_approx(8 * kKvPerGpu).epsilon(1e-9));
  REQUIRE(c2c.by_tier.count("c2c") == 1);
  CHECK(c2c.by_tier.count("pcie") == 0);
  // Each GPU its own C2C share, 225 GB/s a direction (topologies/gb200-nvl72.yaml), at the 80%
  // the model grants Blackwell's C2C (models/params.yaml): 5.37 GB / 180 GB/s = 29.8 ms, within 5%.
  CHECK(c2c.offload->time.count() >= kKvPerGpu / 225e9);
  CHECK(c2c.offload->time.count() == rel_approx(kKvPerGpu / (225e9 * 0.8)).epsilon(0.05));
  // 203 ms over shared PCIe uplinks against 30 ms: more than 5x.
  CHECK(c2c.offload->time.count() * 5.0 < pcie.offload->time.count());
  CHECK(c2c.step < pcie.step);
}

TEST_CASE("KV offload: a small share hides behind the step's compute; weights offload copies its share") {
  Scenario s = load_scenario(repo("scenarios/llama70b-decode-kv-offload.yaml"));
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  s.workload.offload.kv = 0.02;
  const StepResult small = step(s, g, Method::simulate);
  REQUIRE(small.offload);
  // 2% of a layer's KV is 1.34 MB per GPU, 2.7 MB per uplink: 51 us at 52.9 GB/s, well under a
  // layer's ~140 us of compute. Only the first layers' copies (before any compute) are exposed:
  // no more than two layers' copies.
  const double layer_copy = 2 * 0.02 * kKvPerGpu / 80 / (kGen5 * kPcieEfficiency);
  CHECK(small.offload->time.count() >= 80 * 2 * 0.02 * kKvPerGpu / 80 / kGen5);
  CHECK(small.offload->exposed.count() <= 2 * layer_copy);
  CHECK(small.offload->exposed.count() < 0.1 * small.offload->time.count());

  s.workload.offload.kv = 0.0;
  s.workload.offload.weights = 0.5;
  const StepResult weights = step(s, g, Method::simulate);
  REQUIRE(weights.offload);
  // Weights per GPU at TP 8: 80 layers x (attention 2h²(1 + 1/8) + MLP 3 h ffn) / 8 x 2 B.
  const double h = 8192, per_gpu = 80 * (2 * h * h * (1 + 1.0 / 8) + 3 * h * 28672) / 8 * 2;
  CHECK(weights.offload->to_gpu.count() == rel_approx(8 * 0.5 * per_gpu).epsilon(1e-9));
  CHECK(weights.offload->to_host.count() == 0.0);   // weights are read, never written back
  CHECK(weights.memory.weights.count() == rel_approx(per_gpu * (0.5 + 0.5 * 2 / 80)).epsilon(1e-9));
  CHECK(weights.offload->time.count() >= 2 * 0.5 * per_gpu / kGen5);
}

TEST_CASE("KV offload: bad offload keys and values are refused where they are written") {
  const std::string head = std::string("topology: ") + repo("topologies/pcie-h100-8gpu-2socket.yaml") + "\n" + kModel;
  const auto load_error = [&](const std::string& name, const std::string& workload) {
    const std::string path = write_temp(name, head + workload + "\nlayout: {tp: 8}\n");
    try {
      load_scenario(path);
    } catch (const input::InputError& e) {
      CHECK(e.file() == path);
      CHECK(e.line() == 3);
      return e;
    }
    FAIL("expected an InputError for " << name);
    return input::InputError("");
  };
  const std::string decode = "workload: {phase: decode, batch: 32, context: 64, offload: ";
  const auto e1 = load_error("share.yaml", decode + "{kv: 1.5}}");
  CHECK(e1.column() == 65);
  CHECK(std::string(e1.what()).find("workload.offload.kv: expected a share from 0 to 1") != std::string::npos);
  const auto e2 = load_error("numa.yaml", decode + "{kv: 1.0, host_numa: far}}");
  CHECK(e2.column() == 81);
  CHECK(std::string(e2.what()).find("workload.offload.host_numa: expected local, remote or a NUMA node number") !=
        std::string::npos);
  const auto e3 = load_error("key.yaml", decode + "{kvcache: 1.0}}");
  CHECK(std::string(e3.what()).find("kvcache") != std::string::npos);
  const auto e4 = load_error("nothing.yaml", decode + "{kv: 0, weights: 0%}}");
  CHECK(e4.column() == 60);
  CHECK(std::string(e4.what()).find("offloads nothing") != std::string::npos);
  const auto e5 = load_error("prefill.yaml", "workload: {phase: prefill, tokens: 64, offload: {kv: 1.0}}");
  CHECK(std::string(e5.what()).find("applies to a decode") != std::string::npos);
  const auto e6 = load_error("micro.yaml", "workload: {phase: decode, batch: 32, micro_batches: 2, offload: {kv: 1.0}}");
  CHECK(std::string(e6.what()).find("micro_batches: 1") != std::string::npos);
  // A percentage is a share too.
  const Scenario pct = load_scenario(write_temp("pct.yaml", head + decode + "{kv: 25%}}\nlayout: {tp: 8}\n"));
  CHECK(pct.workload.offload.kv == rel_approx(0.25));

  // A far NUMA node the topology cannot reach, at the value's line and column.
  const std::string path = write_temp("nolink-offload.yaml", std::string("topology: ") + repo("topologies/gb200-nvl72.yaml") +
                                                                 "\n" + kModel + decode + "{kv: 1.0, host_numa: remote}}" +
                                                                 "\nlayout: {tp: 8}\n");
  const Scenario s = load_scenario(path);
  const topo::LinkGraph g = topo::load_topology(s.topology, s.set);
  try {
    step(s, g, Method::simulate);
    FAIL("expected an InputError");
  } catch (const input::InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.line() == 3);
    CHECK(e.column() == 81);
    CHECK(std::string(e.what()).find("workload.offload.host_numa") != std::string::npos);
    CHECK(std::string(e.what()).find("by no route") != std::string::npos);
  }
}
