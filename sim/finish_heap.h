// FinishQueue: the network's predicted flow ends, by (time, push order), in one of two
// layouts with that same order. Exact runs predict ends in batches (a ring step's flows all
// end at one time): EventQueue's buckets of equal times (sim/event_queue.h) cost O(1) per
// end there. Windowed runs (Network::set_window) re-predict a few hundred flows at every
// event, at distinct times: each would open its own bucket, and FinishHeap, a plain 4-ary
// heap of (time, sequence, slot), does the same work with no bucket to open (30% of a
// windowed all-to-all's run time went to opening buckets).
//
//   FinishQueue q;
//   q.use_heap(true);
//   q.push(2'000, 7);  q.push(1'000, 3);
//   q.pop();           // 3
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"
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

class FinishQueue {
 public:
  // Chooses the layout; only while empty.
  void use_heap(bool on) {
    assert(empty());
    heap_mode_ = on;
  }
  void push(SimTime time, std::uint32_t slot) {
    if (heap_mode_) heap_.push(time, slot);
    else buckets_.push(time, slot, 0);
  }
  SimTime top_time() const { return heap_mode_ ? heap_.top_time() : buckets_.top_time(); }
  std::uint32_t top_slot() const { return heap_mode_ ? heap_.top().slot : buckets_.top().payload; }
  std::uint32_t pop() { return heap_mode_ ? heap_.pop().slot : buckets_.pop().payload; }
  bool empty() const { return heap_mode_ ? heap_.empty() : buckets_.empty(); }
  std::size_t size() const { return heap_mode_ ? heap_.size() : buckets_.size(); }
  void clear() {
    heap_.clear();
    buckets_.clear();
  }

 private:
  bool heap_mode_ = false;
  FinishHeap heap_;
  EventQueue buckets_;
};

}  // namespace wiresim::sim
