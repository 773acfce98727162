// NCCL collectives in one process, one communicator per GPU (ncclCommInitAll), timed as
// nccl-tests times them: a batch of back-to-back launches on every GPU, host clock around
// it, divided by the batch. Sizes follow nccl-tests (the whole buffer for gather-types), so
// the CSV's bytes and the logs' sizes mean the same thing. Built only with WIRESIM_PROBE_NCCL.
#include <string>
#include <vector>

#include "calibrate/probes/probe.h"

#ifdef WIRESIM_PROBE_NCCL
#include <nccl.h>
#endif

namespace wiresim::probe {

#ifndef WIRESIM_PROBE_NCCL

std::string nccl_version() { return ""; }

void measure_nccl(Output&, int) {
  std::fprintf(stderr, "wiresim-probe: built without NCCL; collectives not measured\n");
}

#else

namespace {

#define WIRESIM_NCCL(call)                                                                      \
  do {                                                                                          \
    const ncclResult_t wiresim_res_ = (call);                                                   \
    if (wiresim_res_ != ncclSuccess)                                                            \
      throw std::runtime_error(std::string(#call) + ": " + ncclGetErrorString(wiresim_res_));   \
  } while (0)

struct Rank {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// One collective of `bytes` (nccl-tests' size) on every rank, in one group.
void launch(const std::string& op, std::vector<Rank>& ranks, double bytes) {
  const int n = static_cast<int>(ranks.size());
  const size_t total = static_cast<size_t>(bytes) / sizeof(float);
  const size_t per_rank = total / n;
  WIRESIM_NCCL(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    if (op == "all_reduce") WIRESIM_NCCL(ncclAllReduce(k.send, k.recv, total, ncclFloat, ncclSum, k.comm, k.stream));
    else if (op == "all_gather") WIRESIM_NCCL(ncclAllGather(k.send, k.recv, per_rank, ncclFloat, k.comm, k.stream));
    else if (op == "reduce_scatter")
      WIRESIM_NCCL(ncclReduceScatter(k.send, k.recv, per_rank, ncclFloat, ncclSum, k.comm, k.stream));
    else if (op == "all_to_all") {
      for (int peer = 0; peer < n; ++peer) {
        WIRESIM_NCCL(ncclSend(k.send + peer * per_rank, per_rank, ncclFloat, peer, k.comm, k.stream));
        WIRESIM_NCCL(ncclRecv(k.recv + peer * per_rank, per_rank, ncclFloat, peer, k.comm, k.stream));
      }
    } else {  // send_recv: a ring, each rank to the next (nccl-tests sendrecv_perf)
      WIRESIM_NCCL(ncclSend(k.send, total, ncclFloat, (r + 1) % n, k.comm, k.stream));
      WIRESIM_NCCL(ncclRecv(k.recv, total, ncclFloat, (r + n - 1) % n, k.comm, k.stream));
    }
  }
  WIRESIM_NCCL(ncclGroupEnd());
}

void synchronize(std::vector<Rank>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    WIRESIM_CUDA(cudaSetDevice(static_cast<int>(r)));
    WIRESIM_CUDA(cudaStreamSynchronize(ranks[r].stream));
  }
}

Stats time_collective(const std::string& op, std::vector<Rank>& ranks, double bytes, const Options& o) {
  const int batch = o.quick ? 5 : 20;
  for (int i = 0; i < o.warmup; ++i) launch(op, ranks, bytes);
  synchronize(ranks);
  std::vector<double> us;
  for (int rep = 0; rep < o.repeats; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) launch(op, ranks, bytes);
    synchronize(ranks);
    const std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
    us.push_back(spent.count() / batch);
  }
  return summarize(std::move(us));
}

void run_all(Output& out, int gpu_count) {
  const Options& o = out.options();
  std::vector<int> devices(gpu_count);
  for (int d = 0; d < gpu_count; ++d) devices[d] = d;
  std::vector<ncclComm_t> comms(gpu_count);
  WIRESIM_NCCL(ncclCommInitAll(comms.data(), gpu_count, devices.data()));
  std::vector<Rank> ranks(gpu_count);
  // Buffers hold the largest size (nccl-tests' size is the whole buffer for every op here).
  double limit = o.max_bytes;
  for (int d = 0; d < gpu_count; ++d) {
    size_t free = 0, total = 0;
    WIRESIM_CUDA(cudaSetDevice(d));
    WIRESIM_CUDA(cudaMemGetInfo(&free, &total));
    limit = std::min(limit, static_cast<double>(free) / 4);
  }
  const std::vector<double> all = sizes(o, limit);
  const double top = all.empty() ? 0 : all.back();
  for (int d = 0; d < gpu_count; ++d) {
    Rank& k = ranks[d];
    k.comm = comms[d];
    WIRESIM_CUDA(cudaSetDevice(d));
    WIRESIM_CUDA(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
    WIRESIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&k.send), static_cast<size_t>(top)));
    WIRESIM_CUDA(cudaMalloc(reinterpret_cast<void**>(&k.recv), static_cast<size_t>(top)));
    WIRESIM_CUDA(cudaMemset(k.send, 0, static_cast<size_t>(top)));
  }
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}) {
    for (double s : all) {
      // Below one float per rank there is nothing to move.
      if (s < 4.0 * gpu_count || out.out_of_time()) continue;
      out.attempt(std::string(op) + " " + std::to_string(static_cast<long long>(s)) + " B", [&] {
        out.row(op, "gpu0", "all", "nccl", gpu_count, s, time_collective(op, ranks, s, o));
      });
    }
  }
  for (int d = 0; d < gpu_count; ++d) {
    cudaSetDevice(d);
    cudaFree(ranks[d].send);
    cudaFree(ranks[d].recv);
    cudaStreamDestroy(ranks[d].stream);
    ncclCommDestroy(ranks[d].comm);
  }
}

}  // namespace

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "";
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? (v / 100) % 100 : (v / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

void measure_nccl(Output& out, int gpu_count) {
  out.attempt("NCCL collectives", [&] { run_all(out, gpu_count); });
}

#endif

}  // namespace wiresim::probe
