// SPDX-License-Identifier: Apache-2.0
// First-in-first-out queues of communication op ids, one per (source, destination, tag) key:
// the sends (or recvs) that wait for their partner, and the eager sends in flight before
// their recv is posted. An op waits in at most one queue of a set, so the queues are linked
// through the op ids: a queue costs one table entry and allocates nothing of its own, where a
// container per key cost two allocations per message of a pipeline.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tessera::exec {

struct P2PKey {
  std::uint32_t src = 0;  // instances
  std::uint32_t dst = 0;
  std::int64_t tag = 0;
  bool operator==(const P2PKey&) const = default;
};

struct P2PKeyHash {
  std::size_t operator()(const P2PKey& k) const;
};

// Contract: an id is pushed under one key at a time; remove() takes an id its key holds.
class OpQueues {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  void push(const P2PKey& key, std::uint32_t id);
  // The oldest id under `key`, or kNone.
  [[nodiscard]] std::uint32_t front(const P2PKey& key) const;
  // Takes `id` out of the queue of `key` (the front, in the common case); a queue that
  // empties leaves the table.
  void remove(const P2PKey& key, std::uint32_t id);

 private:
  struct Ends {
    std::uint32_t head = kNone;
    std::uint32_t tail = kNone;
  };
  std::unordered_map<P2PKey, Ends, P2PKeyHash> ends_;
  std::vector<std::uint32_t> next_;  // per id: the id behind it in its queue
};

}  // namespace tessera::exec
