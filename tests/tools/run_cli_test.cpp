// `wiresim run` and `wiresim sweep` end to end: the JSON contract of issue 6 (top-level
// step_time_ms, comm_time_ms, exposed_comm_ms, breakdown) and micro-batching on the command line.
#include <algorithm>
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/approx.h"
#include "tests/tools/run_binary.h"

using namespace wiresim_test;

TEST_CASE("run --format json: the contract's keys, and micro-batches that overlap") {
  const Run one = wiresim("run scenarios/mixtral-ep8-2node-pingpong.yaml --format json");
  REQUIRE(one.exit_code == 0);
  const auto j = nlohmann::json::parse(one.out);
  for (const char* key : {"step_time_ms", "comm_time_ms", "exposed_comm_ms", "compute_time_ms", "breakdown",
                          "micro_batches", "tokens_per_s", "compute_utilisation"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["micro_batches"] == 2);
  CHECK(j["breakdown"]["by_collective"].contains("ep_all_to_all"));
  // Step = compute alone + what is exposed; two micro-batches hide most of the all_to_all.
  CHECK(j["step_time_ms"].get<double>() ==
        rel_approx(j["compute_time_ms"].get<double>() + j["exposed_comm_ms"].get<double>()));
  CHECK(j["exposed_comm_ms"].get<double>() < 0.5 * j["comm_time_ms"].get<double>());
  // No pipeline: every GPU computes the whole compute-bound step, so busy = compute / step.
  CHECK(j["compute_utilisation"].get<double>() ==
        rel_approx(j["compute_time_ms"].get<double>() / j["step_time_ms"].get<double>()).epsilon(1e-6));
}

TEST_CASE("sweep --micro-batches: ranks the same layouts, and refuses a count that does not fit") {
  const std::string base = "sweep --topo topologies/hgx-h100.yaml --model scenarios/models/llama-70b.yaml "
                           "--peak-flops 989TFLOP/s --format json --threads 1 --tokens 4096";
  const Run one = wiresim(base);
  const Run four = wiresim(base + " --micro-batches 4");
  REQUIRE(one.exit_code == 0);
  REQUIRE(four.exit_code == 0);
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(four.out);
  CHECK(a["layouts"].size() == b["layouts"].size());
  CHECK(b["micro_batches"] == 4);
  const Run bad = wiresim(base + " --micro-batches 5000");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--micro-batches") != std::string::npos);
  // auto: each layout keeps its best of 1, 2, 4, 8 micro-batches — never worse than 1.
  const Run best = wiresim(base + " --micro-batches auto");
  REQUIRE(best.exit_code == 0);
  const auto c = nlohmann::json::parse(best.out);
  CHECK(c["micro_batches"] == "auto");
  REQUIRE(c["layouts"].size() == a["layouts"].size());
  const auto key = [](const nlohmann::json& l) {
    return l["tp"].dump() + l["ep"].dump() + l["pp"].dump() + l["dp"].dump() + l["placement"].get<std::string>();
  };
  std::map<std::string, double> single;
  for (const auto& l : a["layouts"]) single[key(l)] = l["step_time_ms"].get<double>();
  int split = 0;
  for (const auto& l : c["layouts"]) {
    const int m = l["micro_batches"].get<int>();
    CHECK((m == 1 || m == 2 || m == 4 || m == 8));
    CHECK(l["step_time_ms"].get<double>() <= single.at(key(l)) + 1e-9);
    split += m > 1;
  }
  CHECK(split > 0);   // with compute to overlap, some layout gains from splitting
  CHECK(wiresim(base + " --micro-batches many").exit_code == 2);
  // A memory limit too small for any layout's step: refused with one line naming the option.
  expect_one_line_error(wiresim(base + " --max-memory 1KiB"), "--max-memory", "the limits are");
}

TEST_CASE("run --max-memory: a step too big to simulate is refused with the estimate and the limit") {
  expect_one_line_error(wiresim("run scenarios/llama70b-tp8-prefill.yaml --max-memory 1MiB"), "--max-memory",
                        "transfers and delays");
  CHECK(wiresim("run scenarios/llama70b-tp8-prefill.yaml --max-memory 1MiB --model analytic").exit_code == 0);
}

TEST_CASE("coll --explain: the transport table is the one the model uses") {
  const std::string base = "coll all_reduce --topo topologies/hgx-h100.yaml --gpus 2 --sizes 1MiB --explain";
  const Run on = wiresim(base);
  const Run off = wiresim(base + " --p2p off");
  REQUIRE(on.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  CHECK(on.out.find("P2P/NVLink") != std::string::npos);
  CHECK(off.out.find("P2P/NVLink") == std::string::npos);
  CHECK(off.out.find("SHM") != std::string::npos);
  // A PCIe box with P2P on: SYS pairs are SHM too (NCCL's default P2P level).
  const Run sys = wiresim("coll all_reduce --topo topologies/pcie-l40s-8gpu-2switch.yaml --sizes 1MiB --explain");
  REQUIRE(sys.exit_code == 0);
  CHECK(sys.out.find("P2P/PCIe") != std::string::npos);
  CHECK(sys.out.find("SHM") != std::string::npos);
}

TEST_CASE("run: a layout whose weights do not fit the GPU is refused with the sizes (70B in BF16 on one H100)") {
  const fs::path s = scratch() / "one-h100.yaml";
  std::ofstream(s) << "name: one-h100\ntopology: " << WIRESIM_SOURCE_DIR << "/topologies/hgx-h100.yaml\n"
                   << "model: {name: llama-70b, hidden: 8192, layers: 80, heads: 64, kv_heads: 8, ffn: 28672, dtype: bf16}\n"
                   << "workload: {phase: decode, batch: 1, context: 128}\nlayout: {tp: 1}\n";
  const Run r = wiresim("run " + s.string());
  expect_one_line_error(r, "one-h100.yaml", "136.9 GB weights");
  CHECK(r.err.find("72.0 GB usable of a 80 GB GPU") != std::string::npos);
}

TEST_CASE("run: an offloading decode prints its copies per step, with units, and how much is exposed") {
  const Run table = wiresim("run scenarios/llama70b-decode-kv-offload.yaml");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# offload: 100% of the KV cache and 0% of the weights in host memory") != std::string::npos);
  const auto line = table.out.find("offload copies");
  REQUIRE(line != std::string::npos);
  const std::string row = table.out.substr(line, table.out.find('\n', line) - line);
  CHECK(row.find(" ms ") != std::string::npos);
  CHECK(row.find("GiB host->GPU") != std::string::npos);
  CHECK(row.find("exposed") != std::string::npos);
  // A prefill says nothing of offload, nor of a load.
  const Run prefill = wiresim("run scenarios/llama70b-tp8-prefill.yaml");
  REQUIRE(prefill.exit_code == 0);
  CHECK(prefill.out.find("offload") == std::string::npos);
  CHECK(prefill.out.find("# load of") == std::string::npos);

  const Run json = wiresim("run scenarios/llama70b-decode-kv-offload.yaml --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.contains("offload"));
  const auto& o = j["offload"];
  // 8 GPUs x 32 sequences x 4096 tokens x 512 B x 80 layers of KV cache copied in per step.
  CHECK(o["to_gpu_bytes"].get<double>() == rel_approx(8.0 * 32 * 4096 * 512 * 80).epsilon(1e-9));
  CHECK(o["kv_share"].get<double>() == 1.0);
  CHECK(o["host"] == "host memory");
  // The copies are part of the step, and what is exposed of them is no more than the step.
  CHECK(o["time_ms"].get<double>() <= j["step_time_ms"].get<double>());
  CHECK(o["exposed_ms"].get<double>() > 0.0);
  CHECK(o["exposed_ms"].get<double>() <= j["step_time_ms"].get<double>());
  CHECK(!nlohmann::json::parse(wiresim("run scenarios/llama70b-tp8-decode.yaml --format json").out).contains("offload"));

  // The CSV carries the same figures in its own columns; a step without offload has none.
  const Run csv = wiresim("run scenarios/llama70b-decode-kv-offload.yaml --format csv");
  REQUIRE(csv.exit_code == 0);
  const auto header_end = csv.out.find('\n');
  const std::string header = csv.out.substr(0, header_end);
  const std::string values = csv.out.substr(header_end + 1, csv.out.find('\n', header_end + 1) - header_end - 1);
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t from = 0;
    for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
    return cells;
  };
  const auto names = split(header), cells = split(values);
  REQUIRE(names.size() == cells.size());
  const auto cell = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    REQUIRE(it != names.end());
    return std::stod(cells[static_cast<std::size_t>(it - names.begin())]);
  };
  CHECK(cell("offload_to_gpu_bytes") == rel_approx(o["to_gpu_bytes"].get<double>()).epsilon(1e-12));
  CHECK(cell("offload_to_host_bytes") == rel_approx(o["to_host_bytes"].get<double>()).epsilon(1e-12));
  CHECK(cell("offload_time_ms") == rel_approx(o["time_ms"].get<double>()).epsilon(1e-6));
  CHECK(cell("offload_exposed_ms") == rel_approx(o["exposed_ms"].get<double>()).epsilon(1e-6));
  CHECK(wiresim("run scenarios/llama70b-tp8-decode.yaml --format csv").out.find("offload") == std::string::npos);
}

TEST_CASE("jobs --placement compare: the file's placement and each policy's, fastest first, the same ones merged") {
  const Run table = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --placement compare");
  REQUIRE(table.exit_code == 0);
  // The file interleaves the jobs over 2:1 oversubscribed leaves; packed, neither crosses them.
  const auto pack = table.out.find("\npack ");
  const auto given = table.out.find("\nas given, interleave ");
  REQUIRE(pack != std::string::npos);
  REQUIRE(given != std::string::npos);
  CHECK(pack < given);
  CHECK(table.out.find("a: nodes 0,1; b: nodes 2,3") != std::string::npos);
  CHECK(table.out.find("a: nodes 0,2; b: nodes 1,3") != std::string::npos);
  const Run json = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --placement compare --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["placements"].size() == 2);
  CHECK(j["placements"][0]["placement"] == nlohmann::json::array({"pack"}));
  CHECK(j["placements"][1]["placement"] == nlohmann::json::array({"as given", "interleave"}));
  const double packed = j["placements"][0]["makespan_ms"];
  const double given_ms = j["placements"][1]["makespan_ms"];
  CHECK(given_ms > 1.2 * packed);
  CHECK(j["placements"][0]["worst_slowdown"].get<double>() == doctest::Approx(1.0).epsilon(1e-9));
  // One policy on its own is the same run as a file placed that way.
  const Run packed_run = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --placement pack --format json");
  const Run same_leaf = wiresim("jobs scenarios/jobs/two-tp16-prefill-same-leaf.yaml --format json");
  REQUIRE(packed_run.exit_code == 0);
  REQUIRE(same_leaf.exit_code == 0);
  CHECK(nlohmann::json::parse(packed_run.out)["makespan_ms"] == nlohmann::json::parse(same_leaf.out)["makespan_ms"]);
  const Run bad = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --placement random");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("--placement: expected as-given, pack, interleave or compare, got 'random'") != std::string::npos);
}

// `command --format json` with the default pick and with --pick nccl; each output names its pick.
std::pair<nlohmann::json, nlohmann::json> both_picks(const std::string& command) {
  const Run fastest = wiresim(command + " --format json");
  const Run nccl = wiresim(command + " --pick nccl --format json");
  REQUIRE(fastest.exit_code == 0);
  REQUIRE(nccl.exit_code == 0);
  auto f = nlohmann::json::parse(fastest.out);
  auto n = nlohmann::json::parse(nccl.out);
  CHECK(f["pick"] == "fastest");
  CHECK(n["pick"] == "nccl");
  return {f, n};
}

TEST_CASE("run --pick nccl: each collective as NCCL's own cost model picks it, said in every output") {
  // TP 16 over 2 H100 nodes, 64 MiB all_reduces: the closed form's fastest is the LL128 ring;
  // NCCL's model (tests/models/nccl_tuning_test.cpp) ranks the NVLS tree first, which the
  // simulation finds slower.
  const auto [f, n] = both_picks("run scenarios/llama70b-2node-tp16.yaml");
  CHECK(n["step_time_ms"].get<double>() > f["step_time_ms"].get<double>());
  const Run table = wiresim("run scenarios/llama70b-2node-tp16.yaml --pick nccl");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# pick: nccl") != std::string::npos);
  CHECK(table.out.find("nvls_tree/simple") != std::string::npos);
  expect_one_line_error(wiresim("run scenarios/llama70b-2node-tp16.yaml --pick x"), "--pick", "fastest or nccl");
}

TEST_CASE("sweep --pick nccl: every layout's collectives as NCCL's own cost model picks them") {
  // The same 2-node layouts as run --pick above: tp16 runs its 64 MiB all_reduces over both
  // nodes, where NCCL's model takes the NVLS tree (78.68 ms) and the closed form's fastest the
  // LL128 ring (68.64 ms, as `run scenarios/llama70b-2node-tp16.yaml`); a one-node tp8 layout is
  // costed by the closed form either way (NCCL's model is not used on one node).
  const std::string base = "sweep --topo topologies/cluster-h100-ib.yaml --set nodes=2 --gpus 16 "
                           "--model scenarios/models/llama-70b.yaml";
  const auto [f, n] = both_picks(base);
  const auto step = [](const nlohmann::json& out, int tp, const std::string& placement) {
    for (const auto& l : out["layouts"])
      if (l["tp"] == tp && l["pp"] == 1 && l["placement"] == placement) return l["step_time_ms"].get<double>();
    return -1.0;
  };
  CHECK(step(n, 16, "pack") > 1.1 * step(f, 16, "pack"));
  CHECK(step(n, 8, "pack") == step(f, 8, "pack"));
  const Run table = wiresim(base + " --top 1 --pick nccl");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# pick: nccl") != std::string::npos);
  expect_one_line_error(wiresim(base + " --pick x"), "--pick", "fastest or nccl");
}

TEST_CASE("jobs --pick nccl: alone slower, together faster, as the NVLS tree halves what crosses the spine") {
  // Two tp16 jobs over a shared spine (scenarios/jobs/two-tp16-prefill.yaml). Alone, each job's
  // 64 MiB all_reduces run faster on the LL128 ring (68.64 ms) than on the NVLS tree NCCL's model
  // picks (78.68 ms); together, the ring's 2(n-1)/n of the data through the spine (2.5 GiB a job
  // on leaf0->spine0) against the tree's half of that makes the NVLS tree end first.
  const auto [f, n] = both_picks("jobs scenarios/jobs/two-tp16-prefill.yaml");
  CHECK(n["jobs"][0]["alone_ms"].get<double>() > f["jobs"][0]["alone_ms"].get<double>());
  CHECK(n["makespan_ms"].get<double>() < f["makespan_ms"].get<double>());
  const Run table = wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --pick nccl");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# pick: nccl") != std::string::npos);
  expect_one_line_error(wiresim("jobs scenarios/jobs/two-tp16-prefill.yaml --pick x"), "--pick", "fastest or nccl");
}
