// Determinism: the same inputs give byte-identical output, run after run (event order is
// (time, sequence), never hash order or addresses). Each command runs three times; stdout
// and any file it writes must match byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/sanitized.h"
#include "tests/tools/run_binary.h"

namespace {

using namespace wiresim_test;

void expect_identical_runs(const std::string& args, const std::string& written = "") {
  CAPTURE(args);
  std::string first_out, first_file;
  for (int i = 0; i < 3; ++i) {
    const Run r = wiresim(args);
    REQUIRE(r.exit_code == 0);
    CHECK(!r.out.empty());
    const std::string file = written.empty() ? "" : slurp(written);
    if (i == 0) {
      first_out = r.out;
      first_file = file;
    } else {
      CHECK(r.out == first_out);
      CHECK(file == first_file);
    }
  }
}

}  // namespace

TEST_CASE("coll: table, csv and json are byte-identical across runs") {
  for (const std::string format : {"table", "csv", "json"})
    expect_identical_runs("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1KiB:256MiB:8 --format " + format);
}

TEST_CASE("coll: every collective, the tuner's explanation and a trace file") {
  for (const std::string op : {"all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"})
    expect_identical_runs("coll " + op + " --topo topologies/hgx-h100.yaml --sizes 4KiB:64MiB:16 --format csv");
  const std::string trace = (scratch() / "trace.json").string();
  expect_identical_runs("coll all_reduce --topo topologies/hgx-h100.yaml --sizes 1MiB:16MiB:4 --explain --trace " +
                            trace, trace);
}

TEST_CASE("coll: a cluster with contention across nodes") {
  // Many transfers start and end at equal times here: ties must break the same way each run.
  expect_identical_runs("coll all_to_all --topo topologies/cluster-h100-ib.yaml --set nodes=2 "
                        "--sizes 64KiB:16MiB:16 --format json");
  expect_identical_runs("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 "
                        "--sizes 64KiB:16MiB:16 --algo ring --format csv");
}

TEST_CASE("run: shipped scenarios are byte-identical across runs") {
  if (wiresim("run --help").out.find("Positionals:") == std::string::npos) return;  // not built yet
  // The sanitizer build (tests/sanitized.h) leaves this to the plain suite: the golden test runs
  // every shipped scenario once under the sanitizers. Six runs of each take 76 s in Release, about
  // ten times that there.
  if (kSanitized) return;
  for (const auto& entry : fs::directory_iterator(WIRESIM_SOURCE_DIR "/scenarios"))
    if (entry.path().extension() == ".yaml")
      for (const std::string format : {"table", "json"})
        expect_identical_runs("run " + entry.path().string() + " --format " + format);
}

TEST_CASE("sweep: the same ranking whatever the thread count, run after run") {
  // Layouts finish in a different order on 1, 2 and 4 threads; the ranking sorts by the
  // objective and then by enumeration order, so the output must not change.
  const std::string base = "sweep --topo topologies/cluster-h100-ib.yaml --set nodes=2 --model "
                           "scenarios/models/mixtral-8x7b.yaml --peak-flops 989TFLOP/s --format json --threads ";
  const Run one = wiresim(base + "1");
  REQUIRE(one.exit_code == 0);
  // The sanitizer build (tests/sanitized.h) compares 1 and 4 threads once, not seven runs.
  if (!kSanitized)
    for (const std::string threads : {"2", "4"}) expect_identical_runs(base + threads);
  CHECK(wiresim(base + "4").out == one.out);
  // Micro-batches: processors dispatch in a fixed order at each instant, whatever the threads.
  if (kSanitized) return;
  const Run split = wiresim(base + "1 --micro-batches 2");
  REQUIRE(split.exit_code == 0);
  CHECK(wiresim(base + "4 --micro-batches 2").out == split.out);
}
