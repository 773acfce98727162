// The table of algorithms (models/algorithm.h). Each descriptor is defined in its own file.
#include <array>
#include <stdexcept>

#include "models/algorithm.h"

namespace wiresim::models {

extern const AlgorithmDescriptor kRingAlgorithm, kTreeAlgorithm, kNvlsAlgorithm, kNvlsTreeAlgorithm,
    kOneShotAlgorithm, kTwoShotAlgorithm, kHierarchicalAlgorithm, kDirectAlgorithm, kPairwiseAlgorithm;

namespace {

// The tuner's order: ties keep the earlier candidate.
constexpr std::array kAlgorithms{
    &kRingAlgorithm,
    &kTreeAlgorithm,
    &kNvlsAlgorithm,
    &kNvlsTreeAlgorithm,
    &kOneShotAlgorithm,
    &kTwoShotAlgorithm,
    &kHierarchicalAlgorithm,
    &kDirectAlgorithm,
    &kPairwiseAlgorithm,
};

}  // namespace

std::span<const AlgorithmDescriptor* const> algorithms() { return kAlgorithms; }

const AlgorithmDescriptor& descriptor(Algorithm a) {
  for (const AlgorithmDescriptor* d : kAlgorithms)
    if (d->id == a) return *d;
  throw std::logic_error("an algorithm without a descriptor in models/algorithms.cpp");
}

}  // namespace wiresim::models
