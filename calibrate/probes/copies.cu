// Copies and kernels: host<->device (pinned, pageable), device-to-device, kernel launch,
// peer copies and peer load/store kernels. Each size is one CSV row.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "calibrate/probe_format.h"
#include "calibrate/probes/probe.h"

namespace wiresim::probe {
namespace {

namespace fmt_kinds = wiresim::calibrate;

std::string gpu(int d) { return "gpu" + std::to_string(d); }

// Device memory freed on scope exit, on the device it was allocated on.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer(int device, double bytes) {
    WIRESIM_CUDA(cudaSetDevice(device));
    WIRESIM_CUDA(cudaMalloc(&p, static_cast<size_t>(bytes)));
    WIRESIM_CUDA(cudaMemset(p, 1, static_cast<size_t>(bytes)));
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(double bytes) { WIRESIM_CUDA(cudaMallocHost(&p, static_cast<size_t>(bytes))); }
  ~PinnedBuffer() { cudaFreeHost(p); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(int device) {
    WIRESIM_CUDA(cudaSetDevice(device));
    WIRESIM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// The largest size measured, below `limit`.
double largest(const Options& o, double limit) {
  const std::vector<double> all = sizes(o, limit);
  if (all.empty()) throw std::runtime_error("not enough free device memory for the smallest size");
  return all.back();
}

// The largest size worth trying: a quarter of free memory (source and destination, headroom).
double memory_limit(int device) {
  size_t free = 0, total = 0;
  WIRESIM_CUDA(cudaSetDevice(device));
  WIRESIM_CUDA(cudaMemGetInfo(&free, &total));
  return static_cast<double>(free) / 4;
}

__global__ void empty_kernel() {}

// Reads `n16` 16-byte words from `src` (possibly a peer's memory) and keeps the sum so the
// loads cannot be optimised away; `tail` single bytes follow.
__global__ void load_kernel(const int4* __restrict__ src, size_t n16, size_t tail, int* sink) {
  int acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n16; i += stride) {
    const int4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const char* bytes = reinterpret_cast<const char*>(src + n16);
    for (size_t i = 0; i < tail; ++i) acc ^= bytes[i];
  }
  if (acc == 0x7fffffff) *sink = acc;  // practically never: a data dependence, not a store
}

__global__ void store_kernel(int4* __restrict__ dst, size_t n16, size_t tail) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const int4 v = make_int4(1, 2, 3, 4);
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n16; i += stride) dst[i] = v;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    char* bytes = reinterpret_cast<char*>(dst + n16);
    for (size_t i = 0; i < tail; ++i) bytes[i] = 1;
  }
}

// Enough blocks to fill the GPU, no more than the work needs.
unsigned blocks_for(int device, size_t n16) {
  int sms = 1;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const size_t needed = (n16 + 255) / 256;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(needed, size_t(sms) * 8)));
}

void host_copies(Output& out, int device, const std::string& tier, bool pinned) {
  const Options& o = out.options();
  const double limit = memory_limit(device);
  const double top = largest(o, limit);
  Stream stream(device);
  DeviceBuffer dev(device, top);
  std::unique_ptr<PinnedBuffer> pinned_host;
  std::unique_ptr<char[]> pageable_host;
  void* host = nullptr;
  if (pinned) {
    pinned_host = std::make_unique<PinnedBuffer>(top);
    host = pinned_host->p;
  } else {
    pageable_host.reset(new char[static_cast<size_t>(top)]);
    std::fill_n(pageable_host.get(), static_cast<size_t>(top), 1);  // touch the pages
    host = pageable_host.get();
  }
  const std::string h2d = pinned ? fmt_kinds::kKindH2dPinned : fmt_kinds::kKindH2dPageable;
  const std::string d2h = pinned ? fmt_kinds::kKindD2hPinned : fmt_kinds::kKindD2hPageable;
  for (double s : sizes(o, limit)) {
    if (out.out_of_time()) return;
    const size_t n = static_cast<size_t>(s);
    out.row(h2d, "host", gpu(device), tier, 1, s, time_on_stream(stream.s, o, [&] {
              WIRESIM_CUDA(cudaMemcpyAsync(dev.p, host, n, cudaMemcpyHostToDevice, stream.s));
            }));
    out.row(d2h, gpu(device), "host", tier, 1, s, time_on_stream(stream.s, o, [&] {
              WIRESIM_CUDA(cudaMemcpyAsync(host, dev.p, n, cudaMemcpyDeviceToHost, stream.s));
            }));
  }
}

}  // namespace

void measure_host_copies(Output& out, int device, const std::string& tier) {
  out.attempt("pinned host copies on " + gpu(device), [&] { host_copies(out, device, tier, true); });
  out.attempt("pageable host copies on " + gpu(device), [&] { host_copies(out, device, tier, false); });
}

void measure_device(Output& out, int device) {
  const Options& o = out.options();
  out.attempt("kernel launch on " + gpu(device), [&] {
    Stream stream(device);
    // Five rounds, so the fitter has a spread to work with (all at 0 bytes: α only).
    for (int round = 0; round < 5; ++round)
      out.row(fmt_kinds::kKindLaunch, gpu(device), gpu(device), fmt_kinds::kTierLaunch, 1, 0,
              time_on_stream(stream.s, o, [&] {
                empty_kernel<<<1, 1, 0, stream.s>>>();
                WIRESIM_CUDA(cudaGetLastError());
              }));
  });
  out.attempt("device copies on " + gpu(device), [&] {
    const double limit = memory_limit(device);
    const double top = largest(o, limit);
    Stream stream(device);
    DeviceBuffer a(device, top), b(device, top);
    for (double s : sizes(o, limit)) {
      if (out.out_of_time()) return;
      out.row(fmt_kinds::kKindD2d, gpu(device), gpu(device), fmt_kinds::kTierHbm, 1, s,
              time_on_stream(stream.s, o, [&] {
                WIRESIM_CUDA(cudaMemcpyAsync(b.p, a.p, static_cast<size_t>(s), cudaMemcpyDeviceToDevice, stream.s));
              }));
    }
  });
}

// Every ordered pair: a copy-engine copy; and where peer access works, a load kernel on the
// destination reading the source's memory and a store kernel on the source writing into it.
void measure_peers(Output& out, const Machine& m) {
  const Options& o = out.options();
  for (int src = 0; src < m.gpu_count; ++src) {
    for (int dst = 0; dst < m.gpu_count; ++dst) {
      if (src == dst) continue;
      const std::string pair = gpu(src) + "->" + gpu(dst);
      const std::string& tier = m.pair_tier[src][dst];
      const bool access = m.p2p_access[src][dst] && m.p2p_access[dst][src];
      out.attempt("peer measurements " + pair, [&] {
        if (access) {
          WIRESIM_CUDA(cudaSetDevice(src));
          const cudaError_t e1 = cudaDeviceEnablePeerAccess(dst, 0);
          if (e1 != cudaSuccess && e1 != cudaErrorPeerAccessAlreadyEnabled) WIRESIM_CUDA(e1);
          WIRESIM_CUDA(cudaSetDevice(dst));
          const cudaError_t e2 = cudaDeviceEnablePeerAccess(src, 0);
          if (e2 != cudaSuccess && e2 != cudaErrorPeerAccessAlreadyEnabled) WIRESIM_CUDA(e2);
          cudaGetLastError();
        }
        const double limit = std::min(memory_limit(src), memory_limit(dst));
        const double top = largest(o, limit);
        DeviceBuffer a(src, top), b(dst, top);
        DeviceBuffer sink(dst, sizeof(int));
        Stream on_src(src), on_dst(dst);
        for (double s : sizes(o, limit)) {
          if (out.out_of_time()) return;
          const size_t n = static_cast<size_t>(s), n16 = n / 16, tail = n % 16;
          // Events must be made on the device of the stream they are recorded on.
          WIRESIM_CUDA(cudaSetDevice(src));
          out.row(fmt_kinds::kKindP2pCopy, gpu(src), gpu(dst), tier, 2, s, time_on_stream(on_src.s, o, [&] {
                    WIRESIM_CUDA(cudaMemcpyPeerAsync(b.p, dst, a.p, src, n, on_src.s));
                  }));
          if (!access) continue;
          WIRESIM_CUDA(cudaSetDevice(dst));
          out.row(fmt_kinds::kKindP2pLoad, gpu(src), gpu(dst), tier, 2, s, time_on_stream(on_dst.s, o, [&] {
                    load_kernel<<<blocks_for(dst, n16), 256, 0, on_dst.s>>>(static_cast<const int4*>(a.p), n16, tail,
                                                                            static_cast<int*>(sink.p));
                    WIRESIM_CUDA(cudaGetLastError());
                  }));
          WIRESIM_CUDA(cudaSetDevice(src));
          out.row(fmt_kinds::kKindP2pStore, gpu(src), gpu(dst), tier, 2, s, time_on_stream(on_src.s, o, [&] {
                    store_kernel<<<blocks_for(src, n16), 256, 0, on_src.s>>>(static_cast<int4*>(b.p), n16, tail);
                    WIRESIM_CUDA(cudaGetLastError());
                  }));
        }
      });
    }
  }
}

}  // namespace wiresim::probe
