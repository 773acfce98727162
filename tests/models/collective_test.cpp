#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "input/file.h"
#include "input/input_error.h"
#include "models/algorithm.h"
#include "models/collective.h"
#include "models/params.h"
#include "tests/approx.h"

using namespace wiresim::models;

namespace {

// The shipped parameters as text, with a latency row added before the ring's (`add`, one
// line) or the row of algorithm `drop` taken out.
std::string shipped_params(const std::string& add, const std::string& drop = "") {
  std::string text = wiresim::input::read_file(std::string(WIRESIM_SOURCE_DIR) + "/models/params.yaml");
  const std::size_t ring = text.find("\n  ring:") + 1;
  REQUIRE(ring != 0);
  text.insert(ring, add);
  if (!drop.empty()) {
    const std::size_t row = text.find("\n  " + drop + ":") + 1;
    REQUIRE(row != 0);
    text.erase(row, text.find('\n', row) + 1 - row);
  }
  return text;
}

// The line of `text` that starts with `prefix` (1-based).
int line_of(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.find("\n" + prefix);
  REQUIRE(at != std::string::npos);
  int line = 2;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

// Where and why parse_params refuses `text`.
std::pair<int, std::string> refusal(const std::string& text) {
  try {
    parse_params(text, "p.yaml");
  } catch (const wiresim::input::InputError& e) {
    CHECK(e.file() == "p.yaml");
    return {e.line(), e.what()};
  }
  FAIL("expected an InputError");
  return {0, ""};
}

}  // namespace

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
  CHECK(p.protocol(Protocol::ll128).payload == rel_approx(120.0 / 128.0));
  // Ring Simple over NVLink: 3.4 us per step; base 8.4 us (tuning.cc, 2.30.7).
  CHECK(p.step_latency(Algorithm::ring, Protocol::simple, TierClass::nvlink).us() == rel_approx(3.4));
  CHECK(p.base_latency(Algorithm::ring, Protocol::simple).us() == rel_approx(8.4));
  CHECK(p.step_latency(Algorithm::tree, Protocol::ll, TierClass::net).us() == rel_approx(5.0));
  CHECK(p.arch("hopper").nvls_efficiency == rel_approx(0.85));
  CHECK(p.arch("no-such-arch").channels == p.arch("default").channels);
  // An unknown tier efficiency defaults to 1.
  CHECK(p.arch("hopper").efficiency(wiresim::topo::Tier::nvlink) == rel_approx(0.83));
}

TEST_CASE("an architecture's own Simple send overhead replaces the protocol's there only") {
  std::string text = wiresim::input::read_file(std::string(WIRESIM_SOURCE_DIR) + "/models/params.yaml");
  const std::string cdna4 = "\n  cdna4:\n";
  const std::size_t at = text.find(cdna4);
  REQUIRE(at != std::string::npos);
  std::string own = text;
  own.insert(at + cdna4.size(), "    simple_overhead: 1.5us\n");
  const Params p = parse_params(own, "p.yaml");
  CHECK(p.protocol_on(p.arch("cdna4"), Protocol::simple).overhead.us() == rel_approx(1.5));
  CHECK(p.protocol_on(p.arch("cdna3"), Protocol::simple).overhead == p.protocol(Protocol::simple).overhead);
  CHECK(p.protocol_on(p.arch("cdna4"), Protocol::ll128).overhead == p.protocol(Protocol::ll128).overhead);
  CHECK(p.protocol(Protocol::simple).overhead.us() == rel_approx(4.1));
  for (const auto& [value, why] : {std::pair<std::string, std::string>{"-1us", "expected a time that is not negative"},
                                    {"2ms", "expected 0 to 1ms"}}) {
    std::string bad = text;
    bad.insert(at + cdna4.size(), "    simple_overhead: " + value + "\n");
    const auto [line, what] = refusal(bad);
    CHECK(line == line_of(bad, "    simple_overhead:"));
    CHECK(what.find("architectures.cdna4.simple_overhead") != std::string::npos);
    CHECK(what.find(why) != std::string::npos);
  }
}

TEST_CASE("the NVLS tree's ceiling per channel is two rates, on 2 nodes and on more") {
  const std::string text = wiresim::input::read_file(std::string(WIRESIM_SOURCE_DIR) + "/models/params.yaml");
  const Params& p = default_params();
  // NCCL's perChMaxNVLSTreeBws (src/graph/tuning.cc): Hopper {57.7, 45.5}, Blackwell {96, 80}.
  CHECK(p.arch("hopper").nvls_tree_per_channel[0].count() == rel_approx(57.7e9));
  CHECK(p.arch("hopper").nvls_tree_per_channel[1].count() == rel_approx(45.5e9));
  CHECK(p.arch("blackwell").nvls_tree_per_channel[1].count() == rel_approx(80e9));
  CHECK(p.arch("ampere").nvls_tree_per_channel[0].is_unlimited());
  const std::string line = "    nvls_tree_per_channel: [57.7GB/s, 45.5GB/s]";
  REQUIRE(text.find(line) != std::string::npos);
  for (const auto& [value, why] : {std::pair<std::string, std::string>{"[57.7GB/s]", "expected [on 2 nodes, on more than 2]"},
                                    {"[0GB/s, 45.5GB/s]", "expected a rate above 0"},
                                    {"[fast, 45.5GB/s]", "nvls_tree_per_channel"}}) {
    std::string bad = text;
    bad.replace(text.find(line), line.size(), "    nvls_tree_per_channel: " + value);
    const auto [at, what] = refusal(bad);
    CHECK(at == line_of(bad, "    nvls_tree_per_channel: " + value));
    CHECK(what.find("architectures.hopper.nvls_tree_per_channel") != std::string::npos);
    CHECK(what.find(why) != std::string::npos);
  }
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

TEST_CASE("an algorithm without a latency row of its own uses the one its descriptor names") {
  const Params& p = default_params();
  for (const AlgorithmDescriptor* d : algorithms()) {
    CAPTURE(d->name);
    CHECK(descriptor(d->latency_row).latency_row == d->latency_row);   // a row the file must have
    for (Protocol proto : all_protocols()) {
      CHECK(p.base_latency(d->id, proto) == p.base_latency(d->latency_row, proto));
      for (TierClass c : {TierClass::nvlink, TierClass::pcie, TierClass::net})
        CHECK(p.step_latency(d->id, proto, c) == p.step_latency(d->latency_row, proto, c));
    }
  }
  CHECK(descriptor(Algorithm::one_shot).latency_row == Algorithm::ring);
  CHECK(p.base_latency(Algorithm::one_shot, Protocol::simple).us() == rel_approx(8.4));
  // A row of its own replaces the one it names.
  const Params own = parse_params(
      shipped_params("  one_shot: {base: [1us, 2us, 3us], nvlink: [1us, 1us, 1us], pcie: [1us, 1us, 1us], net: [1us, 1us, 1us]}\n"),
      "p.yaml");
  CHECK(own.base_latency(Algorithm::one_shot, Protocol::simple).us() == rel_approx(3.0));
  CHECK(own.step_latency(Algorithm::one_shot, Protocol::simple, TierClass::nvlink).us() == rel_approx(1.0));
  CHECK(own.base_latency(Algorithm::two_shot, Protocol::simple).us() == rel_approx(8.4));
}

TEST_CASE("a latency table with an unknown algorithm, or without a row an algorithm needs, is refused with its position") {
  const std::string unknown =
      shipped_params("  ring2: {base: [1us, 2us, 3us], nvlink: [1us, 1us, 1us], pcie: [1us, 1us, 1us], net: [1us, 1us, 1us]}\n");
  const auto [line, what] = refusal(unknown);
  CHECK(line == line_of(unknown, "  ring2:"));
  CHECK(what.find("latency: unknown algorithm 'ring2'") != std::string::npos);
  // Without the ring's row: the ring and the five that use its row have none.
  const std::string no_ring = shipped_params("", "ring");
  const auto [line2, what2] = refusal(no_ring);
  CHECK(line2 == line_of(no_ring, "  tree:"));
  CHECK(what2.find("latency: missing algorithm 'ring'") != std::string::npos);
  // Without nvls's row: nvls uses its own, so the ring's does not stand in.
  CHECK(refusal(shipped_params("", "nvls")).second.find("latency: missing algorithm 'nvls'") != std::string::npos);
}
