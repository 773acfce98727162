// wiresim-probe: measures a machine's links with CUDA and writes the CSV the fitter reads
// (calibrate/probe_format.h) plus a JSON file of machine facts.
//
// Every measurement is warm-up runs, then `repeats` timed runs (CUDA events around each, or
// the host clock around a batch for NCCL, as nccl-tests does); a row reports the median, min
// and max. A measurement that fails (out of memory at 1 GiB, say) is skipped with a note on
// stderr; the run stops measuring when its time budget is spent.
//
//   wiresim-probe --quick --out results/h100     # results/h100.csv, results/h100.json
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wiresim::probe {

#define WIRESIM_CUDA(call)                                                                       \
  do {                                                                                           \
    const cudaError_t wiresim_err_ = (call);                                                     \
    if (wiresim_err_ != cudaSuccess)                                                             \
      throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(wiresim_err_));    \
  } while (0)

struct Options {
  bool quick = false;
  std::string out = "probe";   // writes <out>.csv and <out>.json
  double min_bytes = 8;
  double max_bytes = double(1ull << 30);
  double step = 2;             // size factor between measurements
  int warmup = 3;
  int repeats = 20;
  double budget_s = 600;       // stop starting new measurements after this
  bool skip_p2p = false;
  bool skip_nccl = false;
};

struct Stats {
  double median_us = 0, min_us = 0, max_us = 0;
  int repeats = 0;
};
Stats summarize(std::vector<double> us);

// Appends rows to the CSV and keeps the clock.
class Output {
 public:
  Output(const Options& options, FILE* csv);
  void row(const std::string& kind, const std::string& src, const std::string& dst, const std::string& tier,
           int ranks, double bytes, const Stats& s);
  bool out_of_time() const;
  // Runs `measure`; on failure prints what was skipped and why, and carries on.
  void attempt(const std::string& what, const std::function<void()>& measure);
  const Options& options() const { return options_; }

 private:
  const Options& options_;
  FILE* csv_;
  std::chrono::steady_clock::time_point start_;
};

// Sizes from options.min_bytes to options.max_bytes (capped at `limit`), × options.step.
std::vector<double> sizes(const Options& o, double limit);

// Times `op` (enqueued on `stream`) with CUDA events: warm-up, then one event pair per repeat.
Stats time_on_stream(cudaStream_t stream, const Options& o, const std::function<void()>& op);

// Machine facts as JSON; also says which tier joins each GPU pair ("nvlink" or "pcie").
struct Machine {
  int gpu_count = 0;
  std::vector<std::vector<std::string>> pair_tier;   // [src][dst]
  std::vector<std::vector<int>> p2p_access;          // [src][dst] 1 = cudaDeviceCanAccessPeer
  std::string host_tier = "pcie";                    // "c2c" on Grace-Hopper/Blackwell
  std::string json;
};
Machine describe_machine();

void measure_host_copies(Output& out, int device, const std::string& tier);
void measure_device(Output& out, int device);
void measure_peers(Output& out, const Machine& m);
// NCCL collectives over all GPUs (one communicator per GPU); a no-op where built without NCCL.
void measure_nccl(Output& out, int gpu_count);
std::string nccl_version();

}  // namespace wiresim::probe
