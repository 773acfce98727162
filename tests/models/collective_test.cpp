#include <doctest/doctest.h>

#include "models/collective.h"
#include "models/params.h"
#include "input/input_error.h"

using namespace wiresim::models;

// Collective names and bus factors are the input module's (tests/input/collective_test.cpp).
TEST_CASE("algorithm and protocol names parse in NCCL's spellings") {
  CHECK(parse_algorithm("NVLS") == Algorithm::nvls);
  CHECK(parse_algorithm("one-shot") == Algorithm::one_shot);
  CHECK(parse_protocol("LL128") == Protocol::ll128);
  CHECK(parse_protocol("Simple") == Protocol::simple);
  CHECK_FALSE(parse_algorithm("nvls2").has_value());
  for (auto a : all_algorithms()) CHECK(parse_algorithm(to_string(a)) == a);
  for (auto p : all_protocols()) CHECK(parse_protocol(to_string(p)) == p);
  // models speaks of the input module's Collective under its own name.
  CHECK(parse_collective("all_reduce") == Collective::all_reduce);
}

TEST_CASE("the built-in parameters carry NCCL's tables") {
  const Params& p = default_params();
  // LL carries 8 of 16 bytes, LL128 120 of 128 (nccl-model.md §1).
  CHECK(p.protocol(Protocol::ll).payload == 0.5);
  CHECK(p.protocol(Protocol::ll128).payload == doctest::Approx(120.0 / 128.0));
  // Ring Simple over NVLink: 3.4 us per step; base 8.4 us (tuning.cc, 2.30.7).
  CHECK(p.step_latency(Algorithm::ring, Protocol::simple, TierClass::nvlink).us() == doctest::Approx(3.4));
  CHECK(p.base_latency(Algorithm::ring, Protocol::simple).us() == doctest::Approx(8.4));
  CHECK(p.step_latency(Algorithm::tree, Protocol::ll, TierClass::net).us() == doctest::Approx(5.0));
  CHECK(p.arch("hopper").nvls_efficiency == doctest::Approx(0.85));
  CHECK(p.arch("no-such-arch").channels == p.arch("default").channels);
  // An unknown tier efficiency defaults to 1.
  CHECK(p.arch("hopper").efficiency(wiresim::topo::Tier::nvlink) == doctest::Approx(0.83));
}

TEST_CASE("a bad parameter file is refused with its position") {
  const std::string text = "protocols:\n  ll: {payload: 0.5, step: 64KiB, slots: 8, colour: red}\n";
  try {
    parse_params(text, "p.yaml");
    FAIL("expected an InputError");
  } catch (const wiresim::input::InputError& e) {
    CHECK(e.file() == "p.yaml");
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("unknown key 'colour'") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_params("protocols: [1, 2]\n", "p.yaml"), wiresim::input::InputError);
  CHECK_THROWS_AS(parse_params("protocols: {\n", "p.yaml"), wiresim::input::InputError);
}
