// wiresim plan as a user runs it: Llama-70B decode at TPOT <= 50 ms across the shipped
// catalogue, in JSON and as a table; bad input is one located line.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/run_binary.h"

using namespace wiresim_test;

TEST_CASE("plan: Llama-70B decode at TPOT <= 50 ms ranks plans on every single-system machine, cheapest first") {
  const Run r = wiresim("plan --model scenarios/models/llama-70b.yaml --tpot 50ms --format json --threads 1");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::set<std::string> systems;
  double last = 0.0;
  for (const auto& p : j["plans"]) {
    systems.insert(p["system"].get<std::string>());
    CHECK(p["latency_ms"].get<double>() <= 50.0);
    CHECK(p["cost_usd_per_mtok"].get<double>() >= last);
    last = p["cost_usd_per_mtok"].get<double>();
    CHECK(p["memory_per_gpu_GB"].get<double>() > 0.0);
  }
  for (const char* s : {"hgx-h100", "hgx-h200", "hgx-b200", "gb200-nvl72", "mi300x-8", "pcie-h100-8gpu-2socket"})
    CHECK_MESSAGE(systems.count(s) == 1, s);
  // 140 GB of BF16 weights fit no single 80 GB GPU: some layouts were left out for memory.
  CHECK(j["counts"]["too_big"].get<int>() > 0);
}

TEST_CASE("plan: bad input is one line") {
  expect_one_line_error(wiresim("plan --model scenarios/models/llama-70b.yaml --tpot fast"), "--tpot", "");
  expect_one_line_error(wiresim("plan --model scenarios/models/llama-70b.yaml --phase prefill --tpot 50ms"), "--tpot",
                        "decode");
  expect_one_line_error(wiresim("plan --model scenarios/models/llama-70b.yaml --systems hgx-h1000"), "hgx-h1000", "hgx-h100");
  expect_one_line_error(wiresim("plan --model scenarios/models/llama-70b.yaml --mfu 1.5"), "--mfu", "(0, 1]");
}
