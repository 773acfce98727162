// The one list of collective algorithms, in the order the tuner tries them: ties keep the
// earlier, simpler candidate. Each line names an algorithm's value in `enum class Algorithm`
// (models/collective.h) and the descriptor its own file defines (models/algorithm.h); the enum
// and the table of descriptors (models/algorithms.cpp) are both expanded from this list, so
// they cannot disagree, and adding an algorithm is its own file and one line here.
//
// An X-macro: WIRESIM_ALGORITHMS(X) expands to X(value, descriptor) once per algorithm, in
// order. Only collective.h, algorithms.cpp and algorithm_table_test.cpp expand it; everything
// else reads the enum, or the table through algorithms() and descriptor(). Every line ends in
// a backslash and a comment closes the list, so a line added anywhere, the end too, is the
// only line that changes.
#pragma once

#define WIRESIM_ALGORITHMS(X)                  \
  X(ring, kRingAlgorithm)                      \
  X(tree, kTreeAlgorithm)                      \
  X(nvls, kNvlsAlgorithm)                      \
  X(nvls_tree, kNvlsTreeAlgorithm)             \
  X(one_shot, kOneShotAlgorithm)               \
  X(two_shot, kTwoShotAlgorithm)               \
  X(hierarchical, kHierarchicalAlgorithm)      \
  X(direct, kDirectAlgorithm)                  \
  X(pairwise, kPairwiseAlgorithm)              \
  X(pat, kPatAlgorithm)                        \
  X(collnet, kCollnetAlgorithm)                \
  /* the end of the list */
