// run_dag: plays a TransferDag on a network of directed links and reports when every node
// started and ended, what each link carried, and the critical path.
//
// Links have a capacity (bytes/s per direction) and a latency. Concurrent transfers share
// each link max-min fairly (progressive filling); when one starts or ends, only the rates
// of the transfers connected to it through shared links are recomputed. Time advances
// from event to event in integer picoseconds; equal-time events run in a stable order, so
// the same input always gives the same output.
//
//   std::vector<LinkSpec> links{{BytesPerSec{100e9}, Seconds{1e-6}, "a->b"}};
//   RunResult r = run_dag(links, dag);
//   fmt::print("{}\n", format_time(r.makespan));
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/transfer_dag.h"
#include "sim/units.h"

namespace wiresim::sim {

struct LinkSpec {
  BytesPerSec capacity;   // per direction
  Seconds latency;
  std::string name;       // for traces and reports ("gpu0->nvswitch0")
};

struct RunOptions {
  // Check capacity, conservation and max-min fairness on every event (slow; for tests).
  // Builds without NDEBUG check on every event whatever this says.
  bool check_invariants = false;
  // Giant components (sim/network.h, set_window): a component of more than window_flows
  // flows is re-shared locally around each change, and ends wait until they free
  // window_slack of a link: fast, feasible, not exactly max-min (RunResult::approximate).
  // 0 (the default) re-solves every touched component whole: exact.
  std::size_t window_flows = 0;
  double window_slack = 0.0;
  // Called now and then (every 2^16 events) with the nodes ended so far and the DAG's
  // size: for a progress bar. Never changes the run.
  std::function<void(std::size_t done, std::size_t total)> progress{};
};

struct NodeTiming {
  Seconds start;  // when its last predecessor ended
  Seconds end;    // when its last byte arrived (transfer) or its duration passed (delay)
};

struct LinkStats {
  Bytes carried;   // bytes that crossed the link
  Seconds busy;    // time during which at least one transfer flowed on it
  double utilisation = 0.0;  // carried / (capacity x makespan): 1 = full for the whole run
};

struct RunResult {
  Seconds makespan;                    // end of the last node
  std::vector<NodeTiming> nodes;       // indexed by NodeId
  std::vector<LinkStats> links;        // indexed by LinkId
  std::size_t peak_concurrent_transfers = 0;  // most transfers flowing at one time
  std::uint64_t events = 0;            // events processed (for benchmarks)
  std::uint64_t components_solved = 0; // connected components whose rates were re-solved
  std::uint64_t flows_resolved = 0;    // flow rates computed over all those solves
  std::uint64_t local_reshares = 0;    // of those solves, local ones (RunOptions::window_flows)
  bool approximate = false;            // some rates were not exactly max-min (local or deferred)
};

// A DAG that cannot finish: a cycle, or nodes waiting on predecessors that never end.
class StuckDagError : public std::runtime_error {
 public:
  StuckDagError(std::string message, std::vector<NodeId> stuck)
      : std::runtime_error(std::move(message)), stuck_(std::move(stuck)) {}
  const std::vector<NodeId>& stuck() const { return stuck_; }

 private:
  std::vector<NodeId> stuck_;
};

RunResult run_dag(std::span<const LinkSpec> links, const TransferDag& dag,
                  const RunOptions& options = {});

// The chain of nodes, first to last, whose ends determined the makespan: from the node
// that ended last, step back to the predecessor that ended last, until a node with none.
std::vector<NodeId> critical_path(const TransferDag& dag, const RunResult& result);

}  // namespace wiresim::sim
