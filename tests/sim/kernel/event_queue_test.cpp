// SPDX-License-Identifier: Apache-2.0
#include "sim/kernel/event_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "base/error.h"
#include "sim/kernel/scheduler.h"

namespace tessera::kernel {
namespace {

Event at(SimTime t, std::int32_t prio, std::uint64_t payload) {
  Event e;
  e.time = t;
  e.priority = prio;
  e.payload = payload;
  return e;
}

TEST(EventQueue, PopsByTimeThenPriorityThenInsertion) {
  EventQueue q;
  q.push(at(5, 0, 0));
  q.push(at(3, 1, 1));
  q.push(at(3, 0, 2));
  q.push(at(3, 1, 3));
  q.push(at(1, 9, 4));
  q.push(at(3, 0, 5));
  std::vector<std::uint64_t> order;
  while (!q.empty()) {
    order.push_back(q.pop().payload);
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{4, 2, 5, 1, 3, 0}));
}

TEST(EventQueue, ManyTiesComeOutInInsertionOrderEveryRun) {
  auto drain = [] {
    EventQueue q;
    std::mt19937 rng(7);
    for (std::uint64_t i = 0; i < 2000; ++i) {
      q.push(at(static_cast<SimTime>(rng() % 10), static_cast<std::int32_t>(rng() % 3), i));
    }
    std::vector<Event> out;
    while (!q.empty()) {
      out.push_back(q.pop());
    }
    return out;
  };
  std::vector<Event> a = drain();
  std::vector<Event> b = drain();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].payload, b[i].payload);
    if (i > 0) {
      EXPECT_TRUE(runs_before(a[i - 1], a[i]));
    }
  }
}

TEST(EventQueue, TopOnEmptyQueueIsABug) {
  EventQueue q;
  EXPECT_THROW((void)q.top(), base::InternalError);
}

// Records (time, payload) and schedules a follow-up for payload 1.
class Recorder : public EventHandler {
 public:
  explicit Recorder(Scheduler& s) : s_(s), id_(s.add_handler(*this)) {}
  void handle(const Event& e) override {
    seen.emplace_back(s_.now(), e.payload);
    if (e.payload == 1) {
      s_.schedule(s_.now(), id_, 0, 3);  // same time, runs after what is already queued
    }
  }
  [[nodiscard]] std::uint32_t id() const { return id_; }
  std::vector<std::pair<SimTime, std::uint64_t>> seen;

 private:
  Scheduler& s_;
  std::uint32_t id_;
};

TEST(Scheduler, RunsEventsInOrderAndAdvancesTime) {
  Scheduler s;
  Recorder r(s);
  s.schedule(10, r.id(), 0, 1);
  s.schedule(10, r.id(), 0, 2);
  s.schedule(4, r.id(), 0, 0);
  EXPECT_EQ(s.run(), 4U);
  EXPECT_EQ(r.seen,
            (std::vector<std::pair<SimTime, std::uint64_t>>{{4, 0}, {10, 1}, {10, 2}, {10, 3}}));
  EXPECT_EQ(s.now(), 10);
  EXPECT_THROW(s.schedule(9, r.id(), 0, 0), base::InternalError);
  EXPECT_THROW(s.schedule(11, 99, 0, 0), base::InternalError);
}

// A duration from corrupt input cannot overflow the clock: past the horizon is an error.
TEST(Scheduler, HorizonIsASimulationError) {
  Scheduler s;
  Recorder r(s);
  s.schedule(Scheduler::kHorizon, r.id(), 0, 7);
  EXPECT_THROW(s.schedule(Scheduler::kHorizon + 1, r.id(), 0, 0), base::SimulationError);
  s.schedule_after(5, r.id(), 0, 0);
  EXPECT_THROW(s.schedule_after(INT64_MAX, r.id(), 0, 0), base::SimulationError);
  EXPECT_THROW(s.schedule_after(-1, r.id(), 0, 0), base::InternalError);
}

}  // namespace
}  // namespace tessera::kernel
