// EventQueue: what happens next, in simulated time.
//
// Events come out by time (integer picoseconds), and events at equal times in the order
// they were pushed, so a run is reproducible bit for bit (ns-3's EventKey, htsim's integer
// picoseconds). The payload is a plain 32-bit value plus a small tag the caller interprets
// (a DAG node and what to do with it): no allocation and no indirect call per event.
//
// Simulations push events in runs with one time (a ring step's 4,096 sends all start at
// once), so events sit in buckets: a push at the time of the most recently opened bucket
// appends to it, anything else opens a bucket. Buckets are ordered in a 4-ary min-heap on
// (time, order opened), which equals push order for equal times; a bucket's events pop
// in O(1), and drained buckets are recycled with their memory.
//
//   EventQueue q;
//   q.push(1'000'000, 7, 0);                 // node 7 at 1 us
//   while (!q.empty()) { Event e = q.pop(); /* ... */ }
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/units.h"

namespace wiresim::sim {

struct Event {
  SimTime time = 0;
  std::uint32_t payload = 0;
  std::uint8_t tag = 0;
};

class EventQueue {
 public:
  // Inline, as is pop's common path: they run for every event and every predicted end.
  void push(SimTime time, std::uint32_t payload, std::uint8_t tag) {
    // Appending to the newest bucket keeps push order: every other bucket of this time was
    // opened, and filled, before it.
    const std::uint32_t b = (last_ != kNone && last_time_ == time) ? last_ : open_bucket(time);
    buckets_[b].items.push_back({payload, tag});
    ++size_;
  }
  Event pop() {
    assert(!heap_.empty());
    const Key k = heap_.front();
    Bucket& b = buckets_[k.bucket];
    const Item it = b.items[b.next++];
    --size_;
    if (b.next == b.items.size()) drain(k.bucket);
    return {k.time, it.payload, it.tag};
  }
  SimTime top_time() const { return heap_.front().time; }
  Event top() const {
    const Key& k = heap_.front();
    const Bucket& b = buckets_[k.bucket];
    const Item& it = b.items[b.next];
    return {k.time, it.payload, it.tag};
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return size_; }
  void clear();

 private:
  struct Item {
    std::uint32_t payload;
    std::uint8_t tag;
  };
  struct Bucket {
    std::vector<Item> items;
    std::size_t next = 0;  // first item not popped yet
  };
  struct Key {
    SimTime time;
    std::uint64_t opened;
    std::uint32_t bucket;
    bool operator<(const Key& o) const {
      return time < o.time || (time == o.time && opened < o.opened);
    }
  };
  static constexpr std::uint32_t kNone = 0xffffffffu;

  std::uint32_t open_bucket(SimTime time);
  void drain(std::uint32_t bucket);  // the top bucket is empty: recycle it, pop its key
  void pop_key();

  std::vector<Key> heap_;  // 4-ary min-heap of open buckets
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> spare_;  // drained buckets, memory kept
  std::uint32_t last_ = kNone;        // the most recently opened bucket, while open
  SimTime last_time_ = 0;
  std::uint64_t opened_ = 0;
  std::size_t size_ = 0;
};

}  // namespace wiresim::sim
