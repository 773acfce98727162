#include <doctest/doctest.h>

#include <vector>

#include "sim/network.h"
#include "tests/approx.h"

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

TEST_CASE("network: a window re-shares a giant component around the change only") {
  // Links A = 0 and B = 1, 100 GB/s each. f1 on A; f2 on A and B; f3 and f4 on B.
  // Exact max-min: B's three flows get 100/3 GB/s each, f1 the rest of A: 200/3.
  Network net({100e9, 100e9});
  const std::vector<LinkId> a{0}, ab{0, 1}, b{1};
  net.set_window(1);  // components of more than one flow are giant
  net.add_flow(a, 1e9, Network::kNoCap, 0.0, 1, 0);
  net.add_flow(ab, 1e9, Network::kNoCap, 0.0, 2, 0);
  net.add_flow(b, 1e3, Network::kNoCap, 0.0, 3, 0);
  net.add_flow(b, 1e9, Network::kNoCap, 0.0, 4, 0);
  net.reshare(0);
  // Every link was touched: the window holds every flow, so the rates are the exact ones.
  CHECK(*net.rate_of(2) == rel_approx(100e9 / 3));
  CHECK(*net.rate_of(3) == rel_approx(100e9 / 3));
  CHECK(*net.rate_of(1) == rel_approx(200e9 / 3));
  // f3 (1 kB at 33.3 GB/s) ends at 30 ns. Exact max-min would now give f1, f2, f4 50 GB/s
  // each. The window is B's flows, f2 and f4: B is theirs (100 GB/s), but on A f1 keeps
  // its 66.7 GB/s and f2 may use only the 33.3 GB/s it leaves; so f2 stays at 33.3 and
  // f4 takes the other 66.7. Feasible (A and B full), not max-min.
  const SimTime end3 = *net.next_completion();
  CHECK(end3 == 30'000);
  std::vector<std::uint32_t> done;
  net.take_completed(end3, done);
  CHECK(done == std::vector<std::uint32_t>{3});
  net.reshare(end3);
  CHECK(net.approximate());
  CHECK(net.local_reshares() >= 1);
  CHECK(*net.rate_of(2) == rel_approx(100e9 / 3));
  CHECK(*net.rate_of(4) == rel_approx(200e9 / 3));
  CHECK(*net.rate_of(1) == rel_approx(200e9 / 3));
}

TEST_CASE("network: ends in a giant component wait until they free the slack") {
  // Link 0 (100 GB/s) carries five flows of 20 GB/s; link 1 joins them into one component
  // with a sixth flow. Slack 0.3: one end frees 20% of link 0 (wait), the second 40%.
  Network net({100e9, 1e12});
  const std::vector<LinkId> l0{0}, both{0, 1}, l1{1};
  net.set_window(1, 0.3);
  net.add_flow(l0, 1e3, Network::kNoCap, 0.0, 0, 0);   // 1 kB: ends first
  net.add_flow(l0, 2e3, Network::kNoCap, 0.0, 1, 0);   // 2 kB: ends second
  for (std::uint32_t t = 2; t < 4; ++t) net.add_flow(l0, 1e9, Network::kNoCap, 0.0, t, 0);
  net.add_flow(both, 1e9, Network::kNoCap, 0.0, 4, 0);
  net.add_flow(l1, 1e9, 500e9, 0.0, 5, 0);             // capped: link 1 has room left
  net.reshare(0);
  CHECK(*net.rate_of(2) == rel_approx(20e9));
  CHECK(*net.rate_of(5) == rel_approx(500e9));
  std::vector<std::uint32_t> done;
  SimTime t = *net.next_completion();  // flow 0: 1 kB at 20 GB/s = 50 ns
  CHECK(t == 50'000);
  net.take_completed(t, done);
  net.reshare(t);
  // 20% freed: deferred, every rate as it was (link 0 runs at 80%).
  CHECK(*net.rate_of(2) == rel_approx(20e9));
  CHECK(*net.rate_of(1) == rel_approx(20e9));
  t = *net.next_completion();  // flow 1: 2 kB at 20 GB/s = 100 ns
  CHECK(t == 100'000);
  net.take_completed(t, done);
  net.reshare(t);
  // 40% freed: link 0's three flows share it again, 33.3 GB/s each (exact here: flow 4's
  // other link has room).
  CHECK(*net.rate_of(2) == rel_approx(100e9 / 3));
  CHECK(*net.rate_of(4) == rel_approx(100e9 / 3));
}
