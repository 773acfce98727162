// The table of algorithms (models/algorithm.h), expanded from the one list in
// models/algorithm_list.h. Each descriptor is defined in its own file.
#include <array>
#include <cstddef>
#include <stdexcept>

#include "models/algorithm.h"

namespace wiresim::models {

#define WIRESIM_ALGORITHM_DECLARE(value, descriptor) extern const AlgorithmDescriptor descriptor;
WIRESIM_ALGORITHMS(WIRESIM_ALGORITHM_DECLARE)
#undef WIRESIM_ALGORITHM_DECLARE

namespace {

// The tuner's order, which is the enum's: ties keep the earlier candidate.
#define WIRESIM_ALGORITHM_ENTRY(value, descriptor) &descriptor,
constexpr std::array kAlgorithms{WIRESIM_ALGORITHMS(WIRESIM_ALGORITHM_ENTRY)};
#undef WIRESIM_ALGORITHM_ENTRY

}  // namespace

std::span<const AlgorithmDescriptor* const> algorithms() { return kAlgorithms; }

const AlgorithmDescriptor& descriptor(Algorithm a) {
  const auto i = static_cast<std::size_t>(a);
  if (i >= kAlgorithms.size() || kAlgorithms[i]->id != a)
    throw std::logic_error("a descriptor whose id is not its line of models/algorithm_list.h");
  return *kAlgorithms[i];
}

}  // namespace wiresim::models
