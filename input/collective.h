// Collective: the one vocabulary of the operations wiresim models and nccl-tests measures —
// the enum, its names, and nccl-tests' conventions for bus bandwidth and sizes — shared by
// models/, calibrate/ and tools/ (one table in collective.cpp).
//
// busbw = algbw × bus_factor(op, n), so that busbw is comparable to the bandwidth of one GPU's
// link whatever n is (shared/data/nccl-model.md §8, NVIDIA/nccl-tests doc/PERFORMANCE.md):
// all_reduce 2(n−1)/n; all_gather, reduce_scatter, all_to_all (n−1)/n; the others 1.
// Sizes follow nccl-tests: `size` is max(send, recv) bytes per rank — the whole gathered
// buffer for all_gather, the whole input for reduce_scatter, the whole send buffer for
// all_to_all — rounded down to whole elements (per rank where the buffer is split).
//
//   auto op = parse_collective("all_reduce_perf");   // Collective::all_reduce
//   double f = bus_factor(*op, 8);                    // 1.75
//   sim::Bytes s = nccl_tests_size(Collective::all_gather, sim::Bytes{1e6}, 2, 8);   // 999,984 B
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/units.h"

namespace wiresim::input {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };

inline constexpr std::array<Collective, 7> kCollectives{
    Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::all_to_all,
    Collective::broadcast,  Collective::reduce,     Collective::send_recv};

// The DESIGN.md name: "all_reduce", "all_to_all", "send_recv".
std::string_view to_string(Collective op);
// The nccl-tests binary without "_perf": "all_reduce", "alltoall", "sendrecv".
std::string_view nccl_tests_name(Collective op);
// Any spelling: the names above, NCCL's (allreduce, AllReduce) and the nccl-tests binaries
// (all_reduce_perf, alltoall_perf, sendrecv_perf).
std::optional<Collective> parse_collective(std::string_view name);
std::vector<Collective> all_collectives();

double bus_factor(Collective op, int ranks);
// The same as text for output: "2(n-1)/n", "(n-1)/n" or "1".
std::string_view bus_factor_formula(Collective op);
// Combines data (so steps pay reduction arithmetic; nccl-tests prints redop sum).
bool reduces(Collective op);
// Has a root rank (broadcast, reduce).
bool rooted(Collective op);
// nccl-tests' size is the whole buffer, split across the ranks (all_gather, reduce_scatter, all_to_all).
bool splits_per_rank(Collective op);

// The size nccl-tests runs for a requested one: whole elements (per rank where split).
sim::Bytes nccl_tests_size(Collective op, sim::Bytes requested, int element, int ranks);
// The `count (elements)` column: elements per rank.
long long nccl_tests_count(Collective op, sim::Bytes size, int element, int ranks);

}  // namespace wiresim::input
