// Collectives, algorithms and protocols: the names, their parsing, and the nccl-tests
// conventions for sizes and bus bandwidth.
//
// Sizes follow nccl-tests: `size` is max(send, recv) bytes per rank — the whole gathered
// buffer for all_gather, the whole input for reduce_scatter, the whole send buffer for
// all_to_all. busbw = algbw × bus_factor(op, n): all_reduce 2(n−1)/n; all_gather,
// reduce_scatter, all_to_all (n−1)/n; broadcast, reduce, send_recv 1.
//
//   Collective op = parse_collective("all_reduce");
//   double f = bus_factor(op, 8);           // 1.75
//   auto a = parse_algorithm("nvls");       // Algorithm::nvls
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"

namespace wiresim::models {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };
// Each algorithm's name, reach and behaviour: its descriptor (models/algorithm.h).
enum class Algorithm { ring, tree, nvls, nvls_tree, one_shot, two_shot, hierarchical, pairwise, direct };
enum class Protocol { ll, ll128, simple };

std::string_view to_string(Collective c);
std::string_view to_string(Algorithm a);
std::string_view to_string(Protocol p);
// Accept the names above, NCCL's spellings (allreduce, AllReduce, LL128, Simple) and the
// nccl-tests binary names (all_reduce_perf, alltoall_perf, sendrecv_perf).
std::optional<Collective> parse_collective(std::string_view s);
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::optional<Protocol> parse_protocol(std::string_view s);
std::vector<Collective> all_collectives();
std::vector<Algorithm> all_algorithms();
std::vector<Protocol> all_protocols();

double bus_factor(Collective c, int ranks);
// all_gather, reduce_scatter and all_to_all sizes are the whole buffer, split per rank.
bool splits_per_rank(Collective c);
// nccl-tests rounds each size down to whole elements of `element` bytes (per rank for the
// split collectives): the size it runs.
sim::Bytes nccl_tests_size(Collective c, sim::Bytes requested, int element, int ranks);
// The `count (elements)` column: elements per rank.
long long nccl_tests_count(Collective c, sim::Bytes size, int element, int ranks);
// Whether the operation combines data (so steps pay reduction arithmetic).
bool reduces(Collective c);

}  // namespace wiresim::models
