// Chrome trace-event JSON of a run, for Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// Each track (a GPU, say: DagNode::track) becomes a thread of the process "tracks"; each
// node is a complete ("X") slice from its start to its end, named by its label, carrying
// its bytes, route, latency and average rate (bytes over the time its bytes flowed).
// Slices that overlap on one track go to extra lanes ("gpu3 #2") so nothing is hidden:
// a ring all-reduce shows as a staircase of sends, one per GPU per step. With link_tracks,
// the process "links" also gets one thread per link with a slice for each transfer while
// its bytes cross that link. Times are microseconds with picosecond decimals. The output
// is capped at max_slices slices (earliest first); a cut trace says so in "otherData".
//
//   TraceOptions opt{.track_names = {"gpu0", "gpu1"}, .links = links};
//   std::ofstream out("ring.json");
//   write_chrome_trace(out, dag, run_dag(links, dag), opt);
#pragma once

#include <cstddef>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "sim/executor.h"
#include "sim/transfer_dag.h"

namespace wiresim::sim {

struct TraceOptions {
  std::vector<std::string> track_names;  // by DagNode::track; "track N" where missing
  std::span<const LinkSpec> links;       // the run's links: route names and latencies
  bool link_tracks = false;              // also one track per link
  std::size_t max_slices = 500'000;      // ~100 MB of JSON at most
};

// Throws std::invalid_argument if the result does not belong to the DAG, or a route
// names a link that `options.links` does not have.
void write_chrome_trace(std::ostream& out, const TransferDag& dag, const RunResult& result,
                        const TraceOptions& options);

}  // namespace wiresim::sim
