// Element types: the one table of data type names and their sizes, as nccl-tests prints them
// (float, bfloat16, int8, ...), as ML frameworks write them (bf16, fp16, fp8, fp32) and as NCCL
// names them (half, char, int). `coll --dtype`, a scenario's `model.dtype` and an nccl-tests
// log's `type` column all read through it.
//
//   dtype_size("bf16");        // 2
//   dtype_size("bfloat16");    // 2
//   dtype_size("complex");     // nullopt
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "input/yaml.h"

namespace wiresim::input {

// Bytes per element, or nullopt for a name not in the table.
std::optional<int> dtype_size(std::string_view name);
// The common names, for messages: "float, half, bf16, fp8, double, int8, int32, int64".
std::string_view dtype_examples();
// A scalar that names a type: its size, or an InputError at its place.
int as_dtype(const Value& v, const std::string& path);

}  // namespace wiresim::input
