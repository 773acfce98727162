// The one collective vocabulary: names in every spelling, bus factors, nccl-tests sizes.
#include <doctest/doctest.h>

#include "input/collective.h"

using namespace wiresim::input;

TEST_CASE("collective names parse in NCCL's and nccl-tests' spellings") {
  CHECK(parse_collective("all_reduce") == Collective::all_reduce);
  CHECK(parse_collective("AllReduce") == Collective::all_reduce);
  CHECK(parse_collective("all_reduce_perf") == Collective::all_reduce);
  CHECK(parse_collective("alltoall_perf") == Collective::all_to_all);
  CHECK(parse_collective("sendrecv") == Collective::send_recv);
  CHECK_FALSE(parse_collective("all_reduce2"));
  CHECK_FALSE(parse_collective("h2d_pinned"));
  for (Collective c : kCollectives) {
    CHECK(parse_collective(to_string(c)) == c);
    CHECK(parse_collective(std::string(nccl_tests_name(c)) + "_perf") == c);
  }
  CHECK(nccl_tests_name(Collective::all_to_all) == "alltoall");
}

TEST_CASE("busbw factors are nccl-tests', and their formulas say so") {
  // all_reduce 2(n-1)/n: 8 ranks -> 14/8.
  CHECK(bus_factor(Collective::all_reduce, 8) == 1.75);
  // all_gather, reduce_scatter, all_to_all (n-1)/n: 16 ranks -> 15/16.
  CHECK(bus_factor(Collective::all_gather, 16) == 0.9375);
  CHECK(bus_factor(Collective::reduce_scatter, 4) == 0.75);
  CHECK(bus_factor(Collective::all_to_all, 2) == 0.5);
  CHECK(bus_factor(Collective::broadcast, 8) == 1.0);
  CHECK(bus_factor(Collective::reduce, 8) == 1.0);
  CHECK(bus_factor(Collective::send_recv, 8) == 1.0);
  CHECK(bus_factor_formula(Collective::all_reduce) == "2(n-1)/n");
  CHECK(bus_factor_formula(Collective::all_to_all) == "(n-1)/n");
  CHECK(bus_factor_formula(Collective::send_recv) == "1");
  CHECK(reduces(Collective::reduce_scatter));
  CHECK_FALSE(reduces(Collective::all_gather));
  CHECK(rooted(Collective::broadcast));
  CHECK_FALSE(rooted(Collective::all_reduce));
}

TEST_CASE("sizes round down to whole elements, per rank where the buffer is split") {
  // all_gather of 1e6 B in bf16 over 8 ranks: 16-byte blocks, 62,500 of them = 1e6 exactly;
  // 1e6 + 15 rounds down to the same.
  CHECK(nccl_tests_size(Collective::all_gather, wiresim::sim::Bytes{1e6 + 15}, 2, 8).count() == 1e6);
  // all_reduce in float: whole 4-byte elements, 1001 -> 1000.
  CHECK(nccl_tests_size(Collective::all_reduce, wiresim::sim::Bytes{1001}, 4, 8).count() == 1000);
  // count: elements per rank, 1e6 B / 2 B / 8 ranks.
  CHECK(nccl_tests_count(Collective::all_gather, wiresim::sim::Bytes{1e6}, 2, 8) == 62500);
  CHECK(nccl_tests_count(Collective::all_reduce, wiresim::sim::Bytes{1000}, 4, 8) == 250);
}
