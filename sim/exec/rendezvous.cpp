// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/rendezvous.h"

#include <fmt/format.h>

#include <utility>

#include "base/error.h"

namespace tessera::exec {

std::uint32_t Rendezvous::allocate() {
  if (free_.empty()) {
    ops_.emplace_back();
    return static_cast<std::uint32_t>(ops_.size() - 1);
  }
  std::uint32_t id = free_.back();
  free_.pop_back();
  return id;
}

void Rendezvous::release(std::uint32_t id) {
  ops_[id].waiters.clear();  // keeps its capacity for the next op
  free_.push_back(id);
}

std::uint32_t Rendezvous::arrive_collective(Waiter w, std::int32_t match, std::uint32_t seq,
                                            std::uint32_t required) {
  auto [it, inserted] = collectives_.try_emplace(coll_key(match, seq), 0);
  if (inserted) {
    it->second = allocate();
    CommOp& fresh = ops_[it->second];
    fresh.required = required;
    fresh.p2p = false;
  }
  std::uint32_t id = it->second;
  CommOp& op = ops_[id];
  op.waiters.push_back(w);
  if (op.waiters.size() < op.required) {
    return kNotReady;
  }
  collectives_.erase(it);
  return id;
}

std::uint32_t Rendezvous::arrive_p2p(Waiter w, bool is_send, const P2PKey& key) {
  const std::uint32_t first = p2p_.front(key);
  if (first == OpQueues::kNone || ops_[first].first_is_send == is_send) {
    std::uint32_t id = allocate();
    CommOp& fresh = ops_[id];
    fresh.required = 2;
    fresh.p2p = true;
    fresh.eager = false;
    fresh.waiters.push_back(w);
    fresh.first_is_send = is_send;
    p2p_.push(key, id);
    return kNotReady;
  }
  p2p_.remove(key, first);
  CommOp& op = ops_[first];
  op.waiters.push_back(w);
  if (is_send) {
    std::swap(op.waiters[0], op.waiters[1]);  // send first
  }
  return first;
}

bool Rendezvous::recv_waiting(const P2PKey& key) const {
  const std::uint32_t first = p2p_.front(key);
  return first != OpQueues::kNone && !ops_[first].first_is_send;
}

std::uint32_t Rendezvous::open_eager(Waiter send) {
  std::uint32_t id = allocate();
  CommOp& op = ops_[id];
  op.required = 1;
  op.p2p = true;
  op.eager = true;
  op.first_is_send = true;
  op.waiters.push_back(send);
  return id;
}

const CommOp* Rendezvous::pending_collective(std::int32_t match, std::uint32_t seq) const {
  auto it = collectives_.find(coll_key(match, seq));
  return it == collectives_.end() ? nullptr : &ops_[it->second];
}

const CommOp* Rendezvous::pending_p2p(const P2PKey& key) const {
  const std::uint32_t first = p2p_.front(key);
  return first == OpQueues::kNone ? nullptr : &ops_[first];
}

}  // namespace tessera::exec
