// NcclTestsLog: what an nccl-tests run printed (all_reduce_perf, all_gather_perf, ...).
//
// The reader keeps the header (`# nThread 1 nGpus 8 minBytes ...`), the device list
// (`#  Rank  0 Group  0 Pid 746 on host device  0 [0x4f] NAME`), the NCCL and nccl-tests
// versions when printed, the result table (size, count, type, redop, root, then time, algbw,
// busbw and #wrong for out-of-place and again for in-place) and the `# Avg bus bandwidth`
// footer. Columns are found by the names in the table's `# size count type ...` header, so
// the variants different versions print all read: no `root` column (legacy), `error` in
// place of `#wrong`, `N/A` when validation was off, runs of spaces collapsed, smaller sizes
// cut out by a vendor, surrounding shell prompts and NCCL INFO lines. The collective comes
// from `# Collective test starting: X_perf`, else from the binary on the command line, else
// from the table itself (redop, root and size/count: see infer_collective in the .cpp).
// A row with the wrong number of fields or a non-numeric field, or a log with no table at
// all, throws input::InputError at its line.
//
//   NcclTestsLog log = read_nccl_tests_log("tests/data/calibrate/log_allreduce_....txt");
//   fmt::print("{} ranks, {} sizes, {}\n", log.rank_count(), log.rows.size(),
//              to_string(*log.collective));
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "input/collective.h"
#include "sim/units.h"

namespace wiresim::calibrate {

struct NcclTestsRank {
  int rank = 0;
  std::optional<int> group;    // absent in the legacy format
  long pid = 0;
  std::string host;
  int device = 0;              // CUDA device index on its host
  std::string bus_id;          // "0x1b", "0008:06:00" (without brackets)
  std::string device_name;     // "NVIDIA H100 80GB HBM3"
};

// One timing group of a row: out-of-place or in-place.
struct NcclTestsSample {
  sim::Seconds time;           // mean time per iteration
  double algbw_gbps = 0.0;     // GB/s, GB = 1e9 B, as printed
  double busbw_gbps = 0.0;
  // `#wrong` (a count) or the legacy `error` (max relative error); absent when printed N/A.
  std::optional<double> wrong;
};

struct NcclTestsRow {
  int line = 0;                // 1-based line in the log
  sim::Bytes size;             // as nccl-tests prints it: the total buffer for gather-types
  long long count = 0;         // elements per rank
  std::string type;            // "float", "bfloat16", ...
  std::string redop;           // "sum", "none", ...
  std::optional<int> root;     // -1 when not rooted; absent in the legacy format
  NcclTestsSample out_of_place;
  std::optional<NcclTestsSample> in_place;  // absent when printed N/A
};

struct NcclTestsLog {
  std::string source;                       // file name, for messages
  std::optional<input::Collective> collective;
  std::string collective_from;              // how it was found: "banner", "command", "table"
  std::string command;                      // the command line, when the log shows it
  std::optional<std::string> nccl_version;  // "2.28.7+cuda13.0"
  std::optional<std::string> tests_version; // "2.17.6"
  // From `# nThread 1 nGpus 8 minBytes 8 maxBytes ... warmup iters: 5 iters: 20 ...`.
  std::optional<int> n_threads, n_gpus, warmup_iters, iters;
  std::optional<sim::Bytes> min_bytes, max_bytes;
  std::vector<NcclTestsRank> ranks;
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_gbps;     // `# Avg bus bandwidth : X`, GB/s
  bool truncated = false;                   // a `# Truncated ...` note: smaller sizes cut out

  // The device list's length; without one, nThread × nGpus (one process assumed).
  std::optional<int> rank_count() const;
  // Distinct host names in the device list.
  int host_count() const;
};

NcclTestsLog read_nccl_tests_log(const std::string& path);
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source);
// Does this text look like nccl-tests output (a `# size count type` table header or a
// `# nThread` line in its first 200 lines)? Lets `calibrate fit` tell logs from probe CSVs.
bool looks_like_nccl_tests_log(std::string_view text);

}  // namespace wiresim::calibrate
