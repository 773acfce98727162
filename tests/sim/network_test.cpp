#include <doctest/doctest.h>

#include <vector>

#include "sim/network.h"

using namespace wiresim::sim;

TEST_CASE("network: a change re-solves only the component it touches") {
  // Links 0 and 1 (100 GB/s each) carry one flow each: two components.
  Network net({100e9, 100e9});
  const std::vector<LinkId> on0{0}, on1{1};
  net.add_flow(on0, 1e6, Network::kNoCap, 0.0, 10, 0);
  net.add_flow(on1, 1e6, Network::kNoCap, 0.0, 11, 0);
  net.reshare(0);
  CHECK(net.components_solved() == 2);
  // Alone on its link, each gets 100 GB/s: 1e6 B in 10 us = 10'000'000 ps.
  CHECK(net.rate_of(10) == 100e9);
  CHECK(net.next_completion() == 10'000'000);
  // A second flow on link 0 at 5 us: only link 0's component is solved again, and its two
  // flows get 50 GB/s each; the flow on link 1 keeps its rate and its finish.
  net.add_flow(on0, 1e6, Network::kNoCap, 5e6, 12, 5'000'000);
  net.reshare(5'000'000);
  CHECK(net.components_solved() == 3);
  CHECK(net.rate_of(10) == 50e9);
  CHECK(net.rate_of(12) == 50e9);
  CHECK(net.rate_of(11) == 100e9);
  // Flow 11 ends at 10 us. Flow 10 had 0.5 MB left at 5 us, at 50 GB/s: ends at 15 us.
  std::vector<std::uint32_t> done;
  CHECK(net.next_completion() == 10'000'000);
  net.take_completed(10'000'000, done);
  CHECK(done == std::vector<std::uint32_t>{11});
  net.reshare(10'000'000);
  CHECK(net.next_completion() == 15'000'000);
  done.clear();
  net.take_completed(15'000'000, done);
  CHECK(done == std::vector<std::uint32_t>{10});
  net.reshare(15'000'000);
  // Flow 12 sent 0.5 MB by 15 us, then alone at 100 GB/s: 5 us more.
  CHECK(net.rate_of(12) == 100e9);
  CHECK(net.next_completion() == 20'000'000);
  CHECK(net.active_flows() == 1);
  // Link 0 has carried finished flow 10's bytes; link 1 was busy while flow 11 ran, 0-10 us.
  CHECK(net.carried(0) == 1e6);
  CHECK(net.busy(1) == 10'000'000);
}

TEST_CASE("network: flows ending at one instant are taken together") {
  // Three equal flows on one link end at the same picosecond: one batch, one reshare.
  Network net({30e9});
  const std::vector<LinkId> route{0};
  for (std::uint32_t t = 0; t < 3; ++t) net.add_flow(route, 1e6, Network::kNoCap, 0.0, t, 0);
  net.reshare(0);
  // 10 GB/s each: 1e6 B in 100 us.
  CHECK(net.next_completion() == 100'000'000);
  std::vector<std::uint32_t> done;
  net.take_completed(100'000'000, done);
  CHECK(done.size() == 3);
  net.reshare(100'000'000);
  CHECK_FALSE(net.next_completion().has_value());
}
