// Algorithms and protocols: the names, their parsing. Collectives themselves, with their
// names, bus factors and nccl-tests size rules, are the input module's one vocabulary
// (input/collective.h), used here under the same names.
//
//   Collective op = *parse_collective("all_reduce");
//   double f = bus_factor(op, 8);           // 1.75
//   auto a = parse_algorithm("nvls");       // Algorithm::nvls
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "input/collective.h"
#include "models/algorithm_list.h"

namespace wiresim::models {

using input::all_collectives;
using input::bus_factor;
using input::Collective;
using input::nccl_tests_count;
using input::nccl_tests_size;
using input::parse_collective;
using input::reduces;
using input::rooted;
using input::splits_per_rank;
using input::to_string;

// Each algorithm's name, reach and behaviour: its descriptor (models/algorithm.h). The values,
// in the tuner's order, come from the one list in models/algorithm_list.h.
#define WIRESIM_ALGORITHM_VALUE(value, descriptor) value,
enum class Algorithm { WIRESIM_ALGORITHMS(WIRESIM_ALGORITHM_VALUE) };
#undef WIRESIM_ALGORITHM_VALUE
enum class Protocol { ll, ll128, simple };

std::string_view to_string(Algorithm a);
std::string_view to_string(Protocol p);
// Accept the names above and NCCL's spellings (NVLS, one-shot, LL128, Simple).
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::optional<Protocol> parse_protocol(std::string_view s);
std::vector<Algorithm> all_algorithms();   // in the tuner's order
std::vector<Protocol> all_protocols();

}  // namespace wiresim::models
