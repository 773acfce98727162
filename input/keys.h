// Known-key tables and did-you-mean: a reader lists the keys a mapping may hold, and any
// other key is an error that names the nearest known one (or lists them all when none is
// near). The same hint serves unknown words in values: tiers, kinds, parameters.
//
//   constexpr std::array<std::string_view, 3> kKeys{"bandwidth", "efficiency", "latency"};
//   check_keys(tier, kKeys, "tiers.nvlink");
//   // x.yaml:3:11: tiers.nvlink.latncy: unknown key 'latncy'; did you mean 'latency'?
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "input/yaml.h"

namespace wiresim::input {

// Throws at the first key of `map` not in `known`, with the nearest known key as a hint.
void check_keys(const Value& map, std::span<const std::string_view> known, const std::string& path);
// "did you mean 'latency'?" or "expected one of: a, b, c".
std::string suggest(std::string_view word, std::span<const std::string_view> known);
// Levenshtein distance: insertions, deletions and substitutions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// Names compared loosely: lower case, '_' and '-' dropped, and a trailing "perf" (the
// nccl-tests binaries) dropped, so "AllReduce", "all_reduce" and "all_reduce_perf" agree.
std::string loose_name(std::string_view name);

}  // namespace wiresim::input
