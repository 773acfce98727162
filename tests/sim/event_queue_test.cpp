#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sim/event_queue.h"

using namespace wiresim::sim;

TEST_CASE("event_queue: earliest first, equal times in the order pushed") {
  EventQueue q;
  q.push(30, 1, 0);
  q.push(10, 2, 0);
  q.push(30, 3, 1);
  q.push(10, 4, 0);
  q.push(20, 5, 0);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  // Times 10, 10, 20, 30, 30; ties keep push order (2 before 4, 1 before 3).
  CHECK(order == std::vector<std::uint32_t>{2, 4, 5, 1, 3});
}

TEST_CASE("event_queue: many random events come out sorted by (time, push order)") {
  std::mt19937 rng(7);
  EventQueue q;
  for (std::uint32_t i = 0; i < 10000; ++i) q.push(rng() % 100, i, 0);
  Event prev = q.pop();
  while (!q.empty()) {
    const Event e = q.pop();
    CHECK((e.time > prev.time || (e.time == prev.time && e.payload > prev.payload)));
    prev = e;
  }
}

TEST_CASE("event_queue: interleaved pushes and pops match a sorted reference") {
  // The reference: a list kept sorted by (time, push number); the queue must agree on
  // every pop, including events pushed at the time being drained.
  std::mt19937 rng(11);
  EventQueue q;
  std::vector<std::pair<SimTime, std::uint32_t>> ref;
  std::uint32_t pushed = 0;
  SimTime now = 0;
  for (int round = 0; round < 20000; ++round) {
    if (ref.empty() || rng() % 3 != 0) {
      const SimTime t = now + static_cast<SimTime>(rng() % 4);
      q.push(t, pushed, 0);
      // After every event of time <= t: the position (time, push number) order gives it.
      const auto at = std::upper_bound(ref.begin(), ref.end(), t,
                                       [](SimTime x, const auto& e) { return x < e.first; });
      ref.insert(at, {t, pushed++});
    } else {
      const Event e = q.pop();
      REQUIRE(e.time == ref.front().first);
      REQUIRE(e.payload == ref.front().second);
      now = e.time;
      ref.erase(ref.begin());
    }
    REQUIRE(q.size() == ref.size());
  }
}
