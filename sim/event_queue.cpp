#include "sim/event_queue.h"

namespace wiresim::sim {

std::uint32_t EventQueue::open_bucket(SimTime time) {
  std::uint32_t b;
  if (!spare_.empty()) {
    b = spare_.back();
    spare_.pop_back();
  } else {
    b = static_cast<std::uint32_t>(buckets_.size());
    buckets_.emplace_back();
  }
  const Key key{time, opened_++, b};
  std::size_t i = heap_.size();
  heap_.push_back(key);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(key < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = key;
  last_ = b;
  last_time_ = time;
  return b;
}

void EventQueue::drain(std::uint32_t bucket) {
  Bucket& b = buckets_[bucket];
  b.items.clear();
  b.next = 0;
  spare_.push_back(bucket);
  if (last_ == bucket) last_ = kNone;
  pop_key();
}

void EventQueue::pop_key() {
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c)
      if (heap_[c] < heap_[best]) best = c;
    if (!(heap_[best] < last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

void EventQueue::clear() {
  for (const Key& k : heap_) {
    buckets_[k.bucket].items.clear();
    buckets_[k.bucket].next = 0;
    spare_.push_back(k.bucket);
  }
  heap_.clear();
  last_ = kNone;
  size_ = 0;
}

}  // namespace wiresim::sim
