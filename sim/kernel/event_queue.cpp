// SPDX-License-Identifier: Apache-2.0
#include "sim/kernel/event_queue.h"

#include <algorithm>

#include "base/error.h"

namespace tessera::kernel {

void EventQueue::push(Event e) {
  e.seq = next_seq_++;
  heap_.push_back(e);
  sift_up(heap_.size() - 1);
}

const Event& EventQueue::top() const {
  if (heap_.empty()) {
    throw base::InternalError("EventQueue::top on an empty queue");
  }
  return heap_.front();
}

Event EventQueue::pop() {
  Event first = top();
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    sift_down(0);
  }
  return first;
}

// A 4-ary heap: the children of i are 4i+1 .. 4i+4. Half the levels of a binary heap, and a
// node's children share a cache line or two, for two more comparisons per level.
void EventQueue::sift_up(std::size_t i) {
  Event moving = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / kArity;
    if (!runs_before(moving, heap_[parent])) {
      break;
    }
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
}

void EventQueue::sift_down(std::size_t i) {
  Event moving = heap_[i];
  const std::size_t n = heap_.size();
  while (true) {
    const std::size_t first = kArity * i + 1;
    if (first >= n) {
      break;
    }
    std::size_t child = first;
    const std::size_t last = std::min(first + kArity, n);
    for (std::size_t c = first + 1; c < last; ++c) {
      if (runs_before(heap_[c], heap_[child])) {
        child = c;
      }
    }
    if (!runs_before(heap_[child], moving)) {
      break;
    }
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = moving;
}

}  // namespace tessera::kernel
