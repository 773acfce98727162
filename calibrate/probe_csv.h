// ProbeRow: one line of the probe's CSV (format in calibrate/probe_format.h, docs/calibrate.md).
//
// read_probe_csv checks the header and every field (a bad row throws input::InputError at its
// line and column); write_probe_csv writes the same format, so a file round-trips.
//
//   std::vector<ProbeRow> rows = read_probe_csv("calibrate/results/2025-01-01-H100.csv");
//   for (const ProbeRow& r : rows) fmt::print("{} {} {}\n", r.kind, r.tier, r.median.us());
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/probe_format.h"
#include "sim/units.h"

namespace wiresim::calibrate {

struct ProbeRow {
  std::string kind;     // h2d_pinned, p2p_copy, all_reduce, ... (probe_format.h)
  std::string src;      // "host", "gpu0"
  std::string dst;      // "gpu1", "host", "all" (a collective over `ranks` GPUs)
  std::string tier;     // nvlink, pcie, c2c, ... ; hbm, launch, nccl for non-link rows
  int ranks = 1;        // GPUs taking part: 1 for host<->device, 2 for a pair, n for a collective
  sim::Bytes bytes;
  int repeats = 1;
  sim::Seconds median, min, max;
  int line = 0;         // 1-based line in the file it was read from; 0 when made in memory
};

std::vector<ProbeRow> read_probe_csv(const std::string& path);
std::vector<ProbeRow> parse_probe_csv(std::string_view text, const std::string& source);
void write_probe_csv(std::ostream& out, std::span<const ProbeRow> rows);
// Does the text start (after '#' comments) with the probe CSV header?
bool looks_like_probe_csv(std::string_view text);

}  // namespace wiresim::calibrate
