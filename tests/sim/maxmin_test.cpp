#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/maxmin.h"
#include "tests/approx.h"

using namespace wiresim::sim;

namespace {
constexpr double kNone = std::numeric_limits<double>::infinity();
using Routes = std::vector<std::vector<std::uint32_t>>;
}  // namespace

TEST_CASE("maxmin: flows alone on a link get all of it; two get half each") {
  // One flow on a 100 GB/s link takes the whole link.
  CHECK(max_min_rates({100e9}, {{0}}) == std::vector<double>{100e9});
  // Two flows on it get 100 / 2 = 50 GB/s each.
  CHECK(max_min_rates({100e9}, {{0}, {0}}) == std::vector<double>{50e9, 50e9});
}

TEST_CASE("maxmin: a capped flow leaves the rest to the other") {
  // Two flows share a 100 GB/s link, one is capped at 30 GB/s, so the other gets 70 GB/s.
  const auto r = max_min_rates({100e9}, {{0}, {0}}, {kNone, 30e9});
  CHECK(r[0] == rel_approx(70e9));
  CHECK(r[1] == 30e9);
}

TEST_CASE("maxmin: parking lot") {
  // Three links of capacity 1 in a row; the long flow 0 crosses all three, flows 1, 2, 3
  // each cross one. Every link has two flows, so every flow gets 1/2.
  const auto r = max_min_rates({1, 1, 1}, {{0, 1, 2}, {0}, {1}, {2}});
  for (double x : r) CHECK(x == rel_approx(0.5));
}

TEST_CASE("maxmin: parking lot with a wider last link") {
  // Links of capacity 1, 1, 3; flow 0 crosses all, flows 1, 2, 3 one each. Links 0 and 1
  // fill first at 1/2 (fixing flows 0, 1, 2); link 2 then has 3 - 1/2 = 2.5 left for flow 3.
  const auto r = max_min_rates({1, 1, 3}, {{0, 1, 2}, {0}, {1}, {2}});
  CHECK(r[0] == rel_approx(0.5));
  CHECK(r[1] == rel_approx(0.5));
  CHECK(r[2] == rel_approx(0.5));
  CHECK(r[3] == rel_approx(2.5));
}

TEST_CASE("maxmin: Bertsekas and Gallager's four sessions (Data Networks, sec. 6.5.2)") {
  // Link X (capacity 1) carries sessions 0, 1, 2; link Y (capacity 1) carries 0 and 3.
  // X fills first at 1/3 (fixing 0, 1, 2); Y has 1 - 1/3 = 2/3 left for session 3.
  const auto r = max_min_rates({1, 1}, {{0, 1}, {0}, {0}, {1}});
  CHECK(r[0] == rel_approx(1.0 / 3));
  CHECK(r[1] == rel_approx(1.0 / 3));
  CHECK(r[2] == rel_approx(1.0 / 3));
  CHECK(r[3] == rel_approx(2.0 / 3));
}

TEST_CASE("maxmin: Keshav's demands on one link (An Engineering Approach..., ch. 9)") {
  // Capacity 10 shared by demands 2, 2.6, 4, 5 (demands act as caps). Fair share 2.5:
  // demand 2 is met, leaving 8 for three (2.67 each): 2.6 is met, leaving 5.4 for two: 2.7.
  const auto r = max_min_rates({10}, {{0}, {0}, {0}, {0}}, {2, 2.6, 4, 5});
  CHECK(r[0] == rel_approx(2));
  CHECK(r[1] == rel_approx(2.6));
  CHECK(r[2] == rel_approx(2.7));
  CHECK(r[3] == rel_approx(2.7));
}

TEST_CASE("maxmin: a flow whose bottleneck is elsewhere leaves capacity on its shared link") {
  // Flow 0 crosses link 0 (100) and link 1 (10); flow 1 only link 0. Link 1 holds flow 0
  // at 10, so flow 1 gets 100 - 10 = 90 rather than half.
  const auto r = max_min_rates({100, 10}, {{0, 1}, {0}});
  CHECK(r[0] == rel_approx(10));
  CHECK(r[1] == rel_approx(90));
}

TEST_CASE("maxmin: a multicast tree is one flow on every link of it") {
  // Uplink 0 (capacity 100) feeds downlinks 1, 2, 3 (100 each). The multicast uses all
  // four; a unicast on downlink 2 shares that link, so both get 50.
  const auto r = max_min_rates({100, 100, 100, 100}, {{0, 1, 2, 3}, {2}});
  CHECK(r[0] == rel_approx(50));
  CHECK(r[1] == rel_approx(50));
}

TEST_CASE("maxmin: degenerate inputs") {
  // No flows: no rates.
  CHECK(max_min_rates({1, 2}, {}).empty());
  // No links and no cap: nothing limits it; a cap alone sets the rate.
  const auto r = max_min_rates({1}, {{}, {}}, {kNone, 7});
  CHECK(r[0] == kNone);
  CHECK(r[1] == 7);
  CHECK_THROWS(max_min_rates({1}, {{1}}));
  CHECK_THROWS(max_min_rates({1}, {{0}}, {1, 2}));
}

TEST_CASE("maxmin: random problems are max-min fair and within capacity") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const int links = 1 + static_cast<int>(rng() % 8);
    const int flows = 1 + static_cast<int>(rng() % 12);
    std::vector<double> capacity(links);
    for (double& c : capacity) c = 1 + rng() % 100;
    Routes routes(flows);
    std::vector<double> caps(flows, kNone);
    for (int f = 0; f < flows; ++f) {
      for (int l = 0; l < links; ++l)
        if (rng() % 3 == 0) routes[f].push_back(l);
      if (routes[f].empty()) routes[f].push_back(rng() % links);
      if (rng() % 4 == 0) caps[f] = 1 + rng() % 50;
    }
    const auto r = max_min_rates(capacity, routes, caps);
    std::vector<double> load(links, 0), top(links, 0);
    for (int f = 0; f < flows; ++f)
      for (auto l : routes[f]) {
        load[l] += r[f];
        top[l] = std::max(top[l], r[f]);
      }
    // No link is over capacity.
    for (int l = 0; l < links; ++l) CHECK(load[l] <= capacity[l] * (1 + 1e-12));
    // Every flow is at its cap, or on a full link where nobody gets more than it.
    for (int f = 0; f < flows; ++f) {
      bool bottleneck = r[f] >= caps[f] * (1 - 1e-12);
      for (auto l : routes[f])
        bottleneck |= load[l] >= capacity[l] * (1 - 1e-12) && r[f] >= top[l] * (1 - 1e-12);
      CHECK(bottleneck);
    }
  }
}
