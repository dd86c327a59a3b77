// SPDX-License-Identifier: Apache-2.0
// The pending-event set of the engine: a 4-ary min-heap ordered by (time, priority, sequence
// number), so that every run pops events in the same order whatever the heap does with ties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/units.h"

namespace tessera::kernel {

using base::SimTime;

// One scheduled occurrence. `handler` and `type` say who handles it and how; `payload` is the
// handler's own data (ids packed into 64 bits), so scheduling never allocates per event.
struct Event {
  SimTime time = 0;
  std::int32_t priority = 0;  // among events at the same time, lower runs first
  std::uint32_t handler = 0;
  std::uint64_t seq = 0;  // set by the queue: insertion order breaks the remaining ties
  std::uint64_t payload = 0;
  std::uint32_t type = 0;
};

// True when `a` must run before `b`.
inline bool runs_before(const Event& a, const Event& b) {
  if (a.time != b.time) {
    return a.time < b.time;
  }
  if (a.priority != b.priority) {
    return a.priority < b.priority;
  }
  return a.seq < b.seq;
}

// Contract: pop() and top() need a non-empty queue (base::InternalError otherwise); push()
// stamps the event with the next sequence number, so two pushes never compare equal.
class EventQueue {
 public:
  void push(Event e);
  Event pop();
  [[nodiscard]] const Event& top() const;
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace tessera::kernel
