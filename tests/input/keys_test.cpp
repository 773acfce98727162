// Known keys and did-you-mean.
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "input/input_error.h"
#include "input/keys.h"

using namespace wiresim::input;

TEST_CASE("an unknown key names the nearest known one, or lists them all") {
  constexpr std::array<std::string_view, 3> kKeys{"bandwidth", "efficiency", "latency"};
  const Value tier = read_yaml_text("bandwidth: 1GB/s\nlatncy: 2us\n", "o.yaml");
  CHECK_THROWS_WITH_AS(check_keys(tier, kKeys, "tiers.nvlink"),
                       "o.yaml:2:1: tiers.nvlink.latncy: unknown key 'latncy'; did you mean 'latency'?", InputError);
  const Value far = read_yaml_text("colour: red\n", "o.yaml");
  CHECK_THROWS_WITH_AS(check_keys(far, kKeys, ""),
                       "o.yaml:1:1: colour: unknown key 'colour'; expected one of: bandwidth, efficiency, latency",
                       InputError);
  check_keys(read_yaml_text("latency: 1us\n", "o.yaml"), kKeys, "");
}

TEST_CASE("edit distance and loose names") {
  // kitten -> sitting: two substitutions and an insertion.
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(loose_name("All-Reduce") == "allreduce");
  CHECK(loose_name("all_reduce_perf") == "allreduce");
  CHECK(loose_name("perf") == "perf");
}
