// Collective: the operations nccl-tests and the probe measure, with the nccl-tests bus factor.
//
// busbw = algbw × bus_factor(op, n), so that busbw is comparable to the bandwidth of one
// GPU's link whatever n is (shared/data/nccl-model.md §8, NVIDIA/nccl-tests doc/PERFORMANCE.md):
// all_reduce 2(n−1)/n; all_gather, reduce_scatter, all_to_all (n−1)/n; the others 1.
//
//   auto op = collective_from_string("all_reduce_perf");   // Collective::all_reduce
//   double f = bus_factor(*op, 8);                          // 1.75
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace wiresim::calibrate {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce,
                        send_recv };

inline constexpr std::array<Collective, 7> kCollectives = {
    Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
    Collective::all_to_all, Collective::broadcast, Collective::reduce, Collective::send_recv};

// The DESIGN.md name ("all_reduce", "all_to_all", "send_recv").
constexpr std::string_view to_string(Collective op) {
  switch (op) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_to_all: return "all_to_all";
    case Collective::broadcast: return "broadcast";
    case Collective::reduce: return "reduce";
    case Collective::send_recv: return "send_recv";
  }
  return "?";
}

// The nccl-tests binary name without "_perf" ("alltoall", "sendrecv").
constexpr std::string_view nccl_tests_name(Collective op) {
  switch (op) {
    case Collective::all_to_all: return "alltoall";
    case Collective::send_recv: return "sendrecv";
    default: return to_string(op);
  }
}

// Accepts the DESIGN.md name, the nccl-tests name, and either with a "_perf" suffix.
constexpr std::optional<Collective> collective_from_string(std::string_view s) {
  if (s.ends_with("_perf")) s.remove_suffix(5);
  for (Collective op : kCollectives)
    if (s == to_string(op) || s == nccl_tests_name(op)) return op;
  return std::nullopt;
}

constexpr double bus_factor(Collective op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1.0) / n;
    default: return 1.0;
  }
}

}  // namespace wiresim::calibrate
