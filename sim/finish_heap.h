// FinishHeap: the network's predicted flow ends, by (time, push order).
//
// The same order as EventQueue (sim/event_queue.h), for a different traffic: predicted
// ends are mostly at distinct times and re-predicted often (every re-share pushes one per
// re-rated flow), so EventQueue's buckets of equal times would hold one event each. A
// plain 4-ary heap of (time, sequence, slot) does the same work with no bucket to open.
//
//   FinishHeap h;
//   h.push(2'000, 7);  h.push(1'000, 3);
//   h.top().slot;      // 3
#pragma once

#include <cstdint>
#include <vector>

#include "sim/units.h"

namespace wiresim::sim {

class FinishHeap {
 public:
  struct Entry {
    SimTime time;
    std::uint64_t sequence;
    std::uint32_t slot;
    bool operator<(const Entry& o) const { return time < o.time || (time == o.time && sequence < o.sequence); }
  };

  void push(SimTime time, std::uint32_t slot) {
    const Entry e{time, next_++, slot};
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(e < heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  const Entry& top() const { return heap_.front(); }
  SimTime top_time() const { return heap_.front().time; }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void clear() { heap_.clear(); }
  Entry pop() {
    const Entry first = heap_.front();
    const Entry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return first;
    std::size_t i = 0;
    for (;;) {
      const std::size_t child = 4 * i + 1;
      if (child >= n) break;
      std::size_t best = child;
      const std::size_t end = child + 4 < n ? child + 4 : n;
      for (std::size_t c = child + 1; c < end; ++c)
        if (heap_[c] < heap_[best]) best = c;
      if (!(heap_[best] < last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return first;
  }

 private:
  std::vector<Entry> heap_;
  std::uint64_t next_ = 0;
};

}  // namespace wiresim::sim
