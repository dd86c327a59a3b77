// SPDX-License-Identifier: Apache-2.0
#include "sim/kernel/scheduler.h"

#include <fmt/format.h>

#include "sim/base/error.h"

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
