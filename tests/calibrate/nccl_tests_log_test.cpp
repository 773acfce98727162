#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "calibrate/nccl_tests_log.h"
#include "input/input_error.h"
#include "tests/approx.h"

using namespace wiresim::calibrate;
using wiresim::input::Collective;
using wiresim::input::InputError;

namespace {

std::string data(const std::string& name) {
  return std::string(WIRESIM_SOURCE_DIR) + "/tests/data/calibrate/" + name;
}

NcclTestsLog parse(const std::string& text) {
  return parse_nccl_tests_log(text, "test.log");
}

// The error a malformed log raises, so that a test can check its line and message.
InputError error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("unreachable");
}

const std::string kHeader =
    "# nThread 1 nGpus 4 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";

}  // namespace

TEST_CASE("legacy 2019 log: no Group, no root column, an error column") {
  const NcclTestsLog log = read_nccl_tests_log(data("log_allreduce_v100_8gpu_legacy-format.txt"));
  // 8 B .. 128 MiB doubling: 2^3 .. 2^27 is 25 sizes.
  REQUIRE(log.rows.size() == 25);
  CHECK(log.collective == Collective::all_reduce);
  CHECK(log.collective_from == "command");
  CHECK(log.rank_count() == 8);
  CHECK(log.host_count() == 1);
  CHECK(log.ranks[3].device_name == "Tesla V100-SXM2-16GB");
  CHECK(log.ranks[3].bus_id == "0x60");
  CHECK_FALSE(log.ranks[0].group.has_value());
  CHECK(log.n_gpus == 8);
  CHECK(log.warmup_iters == 5);
  CHECK(log.iters == 20);
  CHECK_FALSE(log.nccl_version.has_value());
  const NcclTestsRow& first = log.rows.front();
  CHECK(first.size.count() == 8.0);
  CHECK(first.count == 2);
  CHECK_FALSE(first.root.has_value());
  CHECK(first.out_of_place.time.us() == rel_approx(48.46));
  CHECK(*first.out_of_place.wrong == rel_approx(1e-7));
  const NcclTestsRow& last = log.rows.back();
  CHECK(last.size.count() == 134217728.0);
  CHECK(last.out_of_place.busbw_gbps == rel_approx(129.14));
  CHECK(last.in_place->time.us() == rel_approx(1821.9));
  CHECK(log.avg_busbw_gbps == rel_approx(25.9598));
}

TEST_CASE("2.13-era 2-node log: 16 ranks on two hosts, sizes up to 16 GiB") {
  const NcclTestsLog log =
      read_nccl_tests_log(data("log_allreduce_h100_2node16_g8_nccl-tests-2.13-era.txt"));
  // 8 B .. 16 GiB doubling: 2^3 .. 2^34 is 32 sizes.
  REQUIRE(log.rows.size() == 32);
  CHECK(log.collective == Collective::all_reduce);
  CHECK(log.rank_count() == 16);
  CHECK(log.host_count() == 2);
  CHECK(log.n_gpus == 8);  // per process: -g 8
  CHECK(log.ranks[9].host == "dgx-07");
  CHECK(log.ranks[9].device == 1);
  CHECK(log.ranks[9].group == 0);
  CHECK(log.ranks[9].device_name == "NVIDIA H100 80GB HBM3");
  CHECK(log.command.find("all_reduce_perf -b 8 -e 16384M") != std::string::npos);
  CHECK(log.rows[0].line == 26);
  CHECK(log.rows[0].out_of_place.time.us() == rel_approx(172.7));
  CHECK(log.rows[0].root == -1);
  CHECK(log.rows[0].out_of_place.wrong == 0.0);
  CHECK(log.rows[29].size.count() == 4294967296.0);
  CHECK(log.rows[29].out_of_place.time.us() == rel_approx(17662));
  CHECK(log.rows[31].out_of_place.busbw_gbps == rel_approx(472.35));
  CHECK(log.avg_busbw_gbps == rel_approx(91.2553));
}

TEST_CASE("vendor-truncated log: version line inside the device block, two rows") {
  const NcclTestsLog log = read_nccl_tests_log(data("log_allreduce_gb300_1tray4_truncated_oci.txt"));
  REQUIRE(log.rows.size() == 2);
  CHECK(log.truncated);
  CHECK(log.collective == Collective::all_reduce);
  CHECK(log.collective_from == "banner");
  CHECK(log.nccl_version == "2.28.7+cuda13.0");
  CHECK(log.rank_count() == 4);
  CHECK(log.ranks[2].bus_id == "0018:06:00");
  CHECK(log.ranks[2].device_name == "NVIDIA GB300");
  CHECK(log.rows[0].size.count() == 8589934592.0);
  CHECK(log.rows[0].out_of_place.time.us() == rel_approx(18920));
  CHECK(log.rows[0].out_of_place.busbw_gbps == rel_approx(681.03));
  CHECK(log.rows[1].in_place->time.us() == rel_approx(37605));
  CHECK(log.avg_busbw_gbps == rel_approx(446.673));
}

TEST_CASE("collapsed-whitespace all_gather page") {
  const NcclTestsLog log =
      read_nccl_tests_log(data("log_allgather_gb300_8rank_collapsed-whitespace_gcp.txt"));
  // 4 KiB .. 16 GiB doubling: 2^12 .. 2^34 is 23 sizes.
  REQUIRE(log.rows.size() == 23);
  CHECK(log.collective == Collective::all_gather);
  CHECK(log.tests_version == "2.17.6");
  CHECK(log.rank_count() == 8);
  CHECK(log.host_count() == 2);
  CHECK(log.ranks[4].host == "gke-psch-ug-cluster-a4xmax-03878a77-d3lp");
  CHECK(log.ranks[4].pid == 237);
  CHECK(log.rows[7].size.count() == 524288.0);
  CHECK(log.rows[7].redop == "none");
  CHECK(log.rows[7].out_of_place.time.us() == rel_approx(152.25));
  CHECK(log.rows[22].out_of_place.time.us() == rel_approx(42091.7));
  CHECK(log.avg_busbw_gbps == rel_approx(146.047));
}

TEST_CASE("the collective is read off the table when neither banner nor command names it") {
  // size = count × 4 B and a reduction: all_reduce.
  CHECK(parse(kHeader + "8 2 float sum -1 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n").collective ==
        Collective::all_reduce);
  // size = count × 4 B × 4 ranks and a reduction: reduce_scatter.
  CHECK(parse(kHeader + "64 4 float sum -1 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n").collective ==
        Collective::reduce_scatter);
  // size = count × 4 B × 4 ranks, no reduction: gather-type, read as all_gather.
  CHECK(parse(kHeader + "64 4 float none -1 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n").collective ==
        Collective::all_gather);
  // rooted and no reduction: broadcast.
  const NcclTestsLog b = parse(kHeader + "64 16 float none 0 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n");
  CHECK(b.collective == Collective::broadcast);
  CHECK(b.collective_from == "table");
  CHECK(b.rank_count() == 4);  // nThread 1 × nGpus 4, no device list
}

TEST_CASE("N/A in #wrong (validation off) and in the in-place group is accepted") {
  const NcclTestsLog log = parse(kHeader + "8 2 float sum -1 10.0 0.00 0.00 N/A N/A N/A N/A N/A\n");
  CHECK_FALSE(log.rows[0].out_of_place.wrong.has_value());
  CHECK_FALSE(log.rows[0].in_place.has_value());
}

TEST_CASE("a malformed log is refused at its line, with a reason") {
  // Line 4 has 12 fields under a 13-field header.
  const InputError short_row = error_of(kHeader + "8 2 float sum -1 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n"
                                                  "16 4 float sum -1 10.0 0.00 0.00 0 10.0 0.00 0.00\n");
  CHECK(short_row.line() == 4);
  CHECK(short_row.message().find("12 fields, expected 13") != std::string::npos);

  // Line 3, the time field (column 18) is not a number.
  const InputError bad_time = error_of(kHeader + "8 2 float sum -1 1O.5 0.00 0.00 0 10.0 0.00 0.00 0\n");
  CHECK(bad_time.line() == 3);
  CHECK(bad_time.column() == 18);
  CHECK(bad_time.message().find("time (us): expected a number, got '1O.5'") != std::string::npos);

  const InputError no_table = error_of("# nThread 1 nGpus 4\n# just a comment\nhello\n");
  CHECK(no_table.line() == 3);
  CHECK(no_table.message().find("no nccl-tests result table") != std::string::npos);

  const InputError bad_rank = error_of("#  Rank  0 Group  0 Pid x on h device 0 [0x1b] GPU\n" + kHeader);
  CHECK(bad_rank.line() == 1);
  CHECK(bad_rank.message().find("process id") != std::string::npos);
}

TEST_CASE("a root that is not a rank index is refused, not cast") {
  // The fuzzer found -1.1e115 here (a double far outside int): it must be bad input at its column.
  const InputError huge = error_of(kHeader + "64 16 float none -1.11111e+115 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n");
  CHECK(huge.line() == 3);
  CHECK(huge.column() == 18);
  CHECK(huge.message().find("root: expected -1 or a rank index") != std::string::npos);
  CHECK(error_of(kHeader + "64 16 float none 1.5 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n").line() == 3);
  CHECK(error_of(kHeader + "64 16 float none -2 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n").line() == 3);
}

TEST_CASE("thread and GPU counts out of range are refused, not multiplied") {
  // The fuzzer found nThread 1444444444 nGpus 2: their product overflowed an int in rank_count.
  const InputError huge = error_of("# nThread 1444444444 nGpus 2\n" + kHeader);
  CHECK(huge.line() == 1);
  CHECK(huge.column() == 11);
  CHECK(huge.message().find("nThread: expected 1 to 1024, got 1444444444") != std::string::npos);
  CHECK(error_of("# nThread 1 nGpus 0\n" + kHeader).message().find("nGpus: expected 1 to 1024") != std::string::npos);
}

TEST_CASE("logs are told apart from other files") {
  CHECK(looks_like_nccl_tests_log(kHeader));
  CHECK_FALSE(looks_like_nccl_tests_log("kind,src,dst\nh2d_pinned,host,gpu0\n"));
}
