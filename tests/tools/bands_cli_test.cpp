// --bands on coll, run and sweep: each predicted time carries an interval, in every format,
// and the interval follows the shipped bands (or an overlay's held-out error).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/approx.h"
#include "tests/tools/run_binary.h"

using namespace wiresim_test;

TEST_CASE("coll --bands: time_us_lo <= time_us <= ... in JSON and CSV, and the source of each band") {
  const Run j = wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1KiB:1GiB:32 --bands --format json");
  REQUIRE(j.exit_code == 0);
  const auto out = nlohmann::json::parse(j.out);
  REQUIRE(out["results"].size() == 5);
  for (const auto& r : out["results"]) {
    const double lo = r["time_us_lo"].get<double>(), hi = r["time_us_hi"].get<double>();
    CHECK(lo > 0.0);
    CHECK(lo <= hi);
    CHECK(r["band_source"].get<std::string>().find("nvlink-node") != std::string::npos);
  }
  const Run c = wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB --bands --format csv");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.find("time_us,algbw_GBps,busbw_GBps,time_us_lo,time_us_hi\n") != std::string::npos);
  // Two nodes: the multi-node class answers.
  const Run m = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 64MiB --bands "
                        "--format json");
  REQUIRE(m.exit_code == 0);
  CHECK(nlohmann::json::parse(m.out)["results"][0]["band_source"].get<std::string>().find("nvidia-multinode") !=
        std::string::npos);
  // Without --bands the contract's columns are unchanged.
  const Run plain = wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB --format csv");
  CHECK(plain.out.find("time_us_lo") == std::string::npos);
}

TEST_CASE("coll --bands under a fitted overlay: the overlay's held-out error is the band") {
  const std::string overlay =
      (scratch_dir() / "bands-overlay.yaml").string();
  const Run fit = wiresim("calibrate fit --topo topologies/dgx1-v100.yaml "
                          "tests/data/calibrate/log_allreduce_v100_8gpu_legacy-format.txt -o " + overlay);
  REQUIRE(fit.exit_code == 0);
  const Run j = wiresim("coll all_reduce --topo topologies/dgx1-v100.yaml --sizes 64MiB --bands --format json --overlay " +
                        overlay);
  std::remove(overlay.c_str());
  REQUIRE(j.exit_code == 0);
  const auto r = nlohmann::json::parse(j.out)["results"][0];
  const double t = r["time_us"].get<double>();
  // [t / (1 + e), t (1 + e)]: symmetric in ratio, so lo x hi = t^2.
  CHECK(r["time_us_lo"].get<double>() * r["time_us_hi"].get<double>() == rel_approx(t * t));
  CHECK(r["time_us_hi"].get<double>() > t);
  CHECK(r["band_source"].get<std::string>().find("held-out") != std::string::npos);
}

TEST_CASE("run --bands and sweep --bands: the step's interval, exposed communication scaled") {
  const Run j = wiresim("run scenarios/llama70b-tp8-prefill.yaml --bands --format json");
  REQUIRE(j.exit_code == 0);
  const auto out = nlohmann::json::parse(j.out);
  const double step = out["step_time_ms"].get<double>();
  const double lo = out["step_time_ms_lo"].get<double>(), hi = out["step_time_ms_hi"].get<double>();
  CHECK(lo > 0.0);
  CHECK(lo <= hi);
  CHECK(out["band_class"] == "nvlink-node");
  // No compute model: the step is all exposed communication, so the band is the all_reduce's
  // band at its size, times the step.
  const Run c = wiresim("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 64MiB --dtype bf16 --bands --format json");
  REQUIRE(c.exit_code == 0);
  const auto row = nlohmann::json::parse(c.out)["results"][0];
  CHECK(lo / step == rel_approx(row["time_us_lo"].get<double>() / row["time_us"].get<double>()).epsilon(1e-6));
  CHECK(hi / step == rel_approx(row["time_us_hi"].get<double>() / row["time_us"].get<double>()).epsilon(1e-6));
  CHECK(wiresim("run scenarios/llama70b-tp8-prefill.yaml --bands --model naive").exit_code == 2);

  const Run s = wiresim("sweep --topo topologies/hgx-h100.yaml --model scenarios/models/llama-70b.yaml --tokens 4096 "
                        "--threads 1 --bands --format csv");
  REQUIRE(s.exit_code == 0);
  std::istringstream lines(s.out);
  std::string header;
  std::getline(lines, header);
  CHECK(header.find(",step_time_ms_lo,step_time_ms_hi") != std::string::npos);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) ++rows;
  CHECK(rows > 0);
  const std::string report =
      (scratch_dir() / "bands.html").string();
  const Run h = wiresim("sweep --topo topologies/hgx-h100.yaml --model scenarios/models/llama-70b.yaml --tokens 4096 "
                        "--threads 1 --bands --report " + report);
  REQUIRE(h.exit_code == 0);
  std::ifstream in(report);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(report.c_str());
  CHECK(html.find("<th>step band (ms)</th>") != std::string::npos);
  CHECK(h.out.find("step band (ms)") != std::string::npos);
}
