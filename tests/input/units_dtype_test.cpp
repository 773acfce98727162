// Units read at a position, FLOP/s, and the one dtype table.
#include <doctest/doctest.h>

#include <stdexcept>

#include "input/dtype.h"
#include "input/input_error.h"
#include "input/units.h"

using namespace wiresim::input;

TEST_CASE("FLOP/s: one parser with decimal prefixes") {
  CHECK(parse_flops("989TFLOP/s") == 989e12);
  CHECK(parse_flops("2.25PFLOP/s") == 2.25e15);
  CHECK(parse_flops("312e12FLOP/s") == 312e12);
  CHECK(parse_flops("500GFLOP/s") == 500e9);
  CHECK(parse_flops("7FLOP/s") == 7.0);
  CHECK_THROWS_AS(parse_flops("989TFLOPS"), std::invalid_argument);
  CHECK_THROWS_AS(parse_flops("TFLOP/s"), std::invalid_argument);
  CHECK_THROWS_AS(parse_flops("0TFLOP/s"), std::invalid_argument);
  CHECK_THROWS_AS(parse_flops("-1TFLOP/s"), std::invalid_argument);
  CHECK_THROWS_AS(parse_flops("1e999TFLOP/s"), std::invalid_argument);
  const Value doc = read_yaml_text("peak: 9x9TFLOP/s\n", "s.yaml");
  CHECK_THROWS_WITH_AS(as_flops(*find(doc, "peak"), "compute.peak"),
                       "s.yaml:1:7: compute.peak: expected a compute rate like 989TFLOP/s, got '9x9TFLOP/s'",
                       InputError);
}

TEST_CASE("rates and times are positive and carry a unit") {
  const Value doc = read_yaml_text("r: 400Gb/s\nz: 0GB/s\nt: 450\nd: 0us\n", "t.yaml");
  // 400 Gb/s = 50 GB/s per direction.
  CHECK(as_rate(*find(doc, "r"), "r").count() == 50e9);
  CHECK_THROWS_WITH_AS(as_rate(*find(doc, "z"), "z"), "t.yaml:2:4: z: expected a positive rate (450GB/s, 400Gb/s), got '0GB/s'",
                       InputError);
  CHECK_THROWS_AS(as_time(*find(doc, "t"), "t"), InputError);
  CHECK(as_duration(*find(doc, "d"), "d").count() == 0.0);
  CHECK_THROWS_AS(as_time(*find(doc, "d"), "d"), InputError);
}

TEST_CASE("one dtype table for nccl-tests, NCCL and framework names") {
  CHECK(dtype_size("bf16") == 2);
  CHECK(dtype_size("bfloat16") == 2);
  CHECK(dtype_size("half") == 2);
  CHECK(dtype_size("fp8") == 1);
  CHECK(dtype_size("char") == 1);
  CHECK(dtype_size("float") == 4);
  CHECK(dtype_size("int") == 4);
  CHECK(dtype_size("double") == 8);
  CHECK_FALSE(dtype_size("complex64"));
  const Value doc = read_yaml_text("dtype: fp4\n", "m.yaml");
  CHECK_THROWS_WITH_AS(as_dtype(*find(doc, "dtype"), "model.dtype"),
                       "m.yaml:1:8: model.dtype: unknown dtype 'fp4' (expected float, half, bf16, fp8, double, int8, "
                       "int32, int64)",
                       InputError);
}
