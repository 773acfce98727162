// EventQueue: what happens next, in simulated time.
//
// Events are (time, sequence, payload): time in integer picoseconds, the sequence number
// given at push, so that events at equal times come out in the order they went in and a
// run is reproducible bit for bit (ns-3's EventKey, htsim's integer picoseconds). The
// payload is a plain 32-bit value plus a small tag the caller interprets (a DAG node and
// what to do with it), which keeps the hot path free of allocations and indirect calls.
//
//   EventQueue q;
//   q.push(1'000'000, 7, 0);                 // node 7 at 1 us
//   while (!q.empty()) { Event e = q.pop(); /* ... */ }
#pragma once

#include <cstdint>
#include <vector>

#include "sim/units.h"

namespace wiresim::sim {

struct Event {
  SimTime time = 0;
  std::uint64_t sequence = 0;
  std::uint32_t payload = 0;
  std::uint8_t tag = 0;
};

// A 4-ary min-heap on (time, sequence): shallower than a binary heap, and the four
// children of a node share a cache line or two.
class EventQueue {
 public:
  void push(SimTime time, std::uint32_t payload, std::uint8_t tag);
  Event pop();
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.sequence < b.sequence);
  }
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace wiresim::sim
