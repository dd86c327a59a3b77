// SPDX-License-Identifier: Apache-2.0
// The run loop: owns simulated time and the event queue, and hands each event to the handler
// that scheduled it. Knows nothing about what the handlers model.
#pragma once

#include <cstdint>
#include <vector>

#include "base/units.h"
#include "sim/kernel/event_queue.h"

namespace tessera::kernel {

// A model or executor that receives its own events back from the scheduler.
class EventHandler {
 public:
  EventHandler() = default;
  EventHandler(const EventHandler&) = default;
  EventHandler& operator=(const EventHandler&) = default;
  EventHandler(EventHandler&&) = default;
  EventHandler& operator=(EventHandler&&) = default;
  virtual ~EventHandler() = default;
  virtual void handle(const Event& e) = 0;
};

// Contract: time never goes backwards. schedule() at a time before now() is a bug
// (base::InternalError). run() returns when no event is left; handlers may schedule more
// events while it runs. Handlers are not owned and must outlive run().
class Scheduler {
 public:
  std::uint32_t add_handler(EventHandler& handler);
  // The latest time an event may have (base::kMaxSimTime); scheduling beyond it throws
  // base::SimulationError instead of overflowing the clock.
  static constexpr SimTime kHorizon = base::kMaxSimTime;

  void schedule(SimTime at, std::uint32_t handler, std::uint32_t type, std::uint64_t payload,
                std::int32_t priority = 0);
  // schedule(now() + delay, ...), with the horizon checked before the addition.
  void schedule_after(SimTime delay, std::uint32_t handler, std::uint32_t type,
                      std::uint64_t payload, std::int32_t priority = 0);
  [[nodiscard]] SimTime now() const { return now_; }
  std::uint64_t run();  // returns the number of events processed by this call
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  std::vector<EventHandler*> handlers_;
  SimTime now_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace tessera::kernel
