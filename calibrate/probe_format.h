// The probe's CSV format: one row per measured (kind, src, dst, bytes), shared by the CUDA
// probe (calibrate/probes/, which writes it) and the fitter (calibrate/probe_csv.h, which reads
// it). Plain C++17 with no dependencies, so that nvcc compiles it too. docs/calibrate.md
// describes every column; in short:
//
//   kind,src,dst,tier,ranks,bytes,repeats,median_us,min_us,max_us
//   h2d_pinned,host,gpu0,pcie,1,1048576,20,41.9,41.5,44.0
//   all_reduce,gpu0,all,nccl,8,1048576,20,30.1,29.8,31.0
//
// Lines starting with '#' are comments (the probe writes `# wiresim-probe v1 ...` first).
// `bytes` is what one operation moved: the copy size, or for a collective the size nccl-tests
// would print (the whole buffer for all_gather and reduce_scatter), so the nccl-tests bus
// factor applies unchanged. Times are microseconds over `repeats` timed runs after warm-up.
#pragma once

namespace wiresim::calibrate {

inline constexpr const char* kProbeCsvHeader =
    "kind,src,dst,tier,ranks,bytes,repeats,median_us,min_us,max_us";
inline constexpr int kProbeCsvColumns = 10;
inline constexpr const char* kProbeCsvVersion = "wiresim-probe v1";

// Kinds of measurement (the `kind` column). Copies and kernels between host and devices:
inline constexpr const char* kKindH2dPinned = "h2d_pinned";      // cudaMemcpyAsync host->device
inline constexpr const char* kKindD2hPinned = "d2h_pinned";
inline constexpr const char* kKindH2dPageable = "h2d_pageable";  // malloc'd host memory
inline constexpr const char* kKindD2hPageable = "d2h_pageable";
inline constexpr const char* kKindD2d = "d2d";                   // copy within one GPU (HBM)
inline constexpr const char* kKindLaunch = "launch";             // empty kernel, bytes 0
inline constexpr const char* kKindP2pCopy = "p2p_copy";          // cudaMemcpyPeerAsync src->dst
inline constexpr const char* kKindP2pLoad = "p2p_load";          // kernel on dst reads src's memory
inline constexpr const char* kKindP2pStore = "p2p_store";        // kernel on src writes dst's memory
// NCCL collectives use the collective's name as kind: all_reduce, all_gather, reduce_scatter,
// all_to_all, send_recv (tier "nccl", src "gpu0", dst "all").

// Tier labels that are not links of a topology (the fitter reports them, the overlay skips them).
inline constexpr const char* kTierHbm = "hbm";
inline constexpr const char* kTierLaunch = "launch";
inline constexpr const char* kTierNccl = "nccl";

}  // namespace wiresim::calibrate
