// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/op_queues.h"

#include "base/error.h"

namespace tessera::exec {

std::size_t P2PKeyHash::operator()(const P2PKey& k) const {
  std::uint64_t h = (static_cast<std::uint64_t>(k.src) << 32U) ^ k.dst;
  h ^= static_cast<std::uint64_t>(k.tag) + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U);
  return std::hash<std::uint64_t>{}(h);
}

void OpQueues::push(const P2PKey& key, std::uint32_t id) {
  if (next_.size() <= id) {
    next_.resize(static_cast<std::size_t>(id) + 1, kNone);
  }
  next_[id] = kNone;
  Ends& e = ends_[key];
  if (e.tail == kNone) {
    e.head = id;
  } else {
    next_[e.tail] = id;
  }
  e.tail = id;
}

std::uint32_t OpQueues::front(const P2PKey& key) const {
  auto it = ends_.find(key);
  return it == ends_.end() ? kNone : it->second.head;
}

void OpQueues::remove(const P2PKey& key, std::uint32_t id) {
  auto it = ends_.find(key);
  if (it == ends_.end()) {
    throw base::InternalError("OpQueues::remove: no queue under the key");
  }
  Ends& e = it->second;
  std::uint32_t before = kNone;
  std::uint32_t at = e.head;
  while (at != id) {
    if (at == kNone) {
      throw base::InternalError("OpQueues::remove: the op is not in the key's queue");
    }
    before = at;
    at = next_[at];
  }
  (before == kNone ? e.head : next_[before]) = next_[id];
  if (e.tail == id) {
    e.tail = before;
  }
  if (e.head == kNone) {
    ends_.erase(it);
  }
}

}  // namespace tessera::exec
