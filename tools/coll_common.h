// What `wiresim coll` and `wiresim validate` share: the element size of a --dtype (the input
// module's one dtype table). nccl-tests' size rules are input/collective.h's; the machine
// options (--p2p among them) are tools/machine_input.h's.
//
//   const int element = dtype_size("bf16");                         // 2
//   sim::Bytes s = nccl_tests_size(Collective::all_gather, sim::Bytes{1e6}, element, 8);
//   long long count = nccl_tests_count(Collective::all_gather, s, element, 8);
#pragma once

#include <string>

#include <fmt/format.h>

#include "input/dtype.h"
#include "input/input_error.h"
#include "models/collective.h"

namespace wiresim::tools {

using models::nccl_tests_count;
using models::nccl_tests_size;
using models::splits_per_rank;

// Bytes per element of a --dtype.
inline int dtype_size(const std::string& dtype) {
  if (const auto size = input::dtype_size(dtype)) return *size;
  throw input::InputError(fmt::format("--dtype: unknown type '{}' (expected {})", dtype, input::dtype_examples()));
}

}  // namespace wiresim::tools
