// SPDX-License-Identifier: Apache-2.0
#include "sim/kernel/scheduler.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/units.h"

namespace tessera::kernel {

std::uint32_t Scheduler::add_handler(EventHandler& handler) {
  handlers_.push_back(&handler);
  return static_cast<std::uint32_t>(handlers_.size() - 1);
}

void Scheduler::schedule(SimTime at, std::uint32_t handler, std::uint32_t type,
                         std::uint64_t payload, std::int32_t priority) {
  if (at < now_) {
    throw base::InternalError(
        fmt::format("event scheduled in the past: at {} ps, now {} ps", at, now_));
  }
  if (at > kHorizon) {
    throw base::SimulationError(fmt::format(
        "the simulated time would pass {} (at {} ps): a duration in the input is too long to "
        "simulate",
        base::format_seconds(static_cast<double>(kHorizon) / 1e12), at));
  }
  if (handler >= handlers_.size()) {
    throw base::InternalError(fmt::format("event for unknown handler {}", handler));
  }
  Event e;
  e.time = at;
  e.priority = priority;
  e.handler = handler;
  e.payload = payload;
  e.type = type;
  queue_.push(e);
}

void Scheduler::schedule_after(SimTime delay, std::uint32_t handler, std::uint32_t type,
                               std::uint64_t payload, std::int32_t priority) {
  if (delay < 0) {
    throw base::InternalError(fmt::format("negative delay {} ps", delay));
  }
  schedule(delay > kHorizon - now_ ? kHorizon + 1 : now_ + delay, handler, type, payload, priority);
}

std::uint64_t Scheduler::run() {
  std::uint64_t count = 0;
  while (!queue_.empty()) {
    Event e = queue_.pop();
    now_ = e.time;
    ++count;
    ++processed_;
    handlers_[e.handler]->handle(e);
  }
  return count;
}

}  // namespace tessera::kernel
