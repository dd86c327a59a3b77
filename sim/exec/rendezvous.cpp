// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/rendezvous.h"

#include <fmt/format.h>

#include <utility>

#include "sim/base/error.h"

namespace tessera::exec {

std::size_t P2PKeyHash::operator()(const P2PKey& k) const {
  std::uint64_t h = (static_cast<std::uint64_t>(k.src) << 32U) ^ k.dst;
  h ^= static_cast<std::uint64_t>(k.tag) + 0x9e3779b97f4a7c15ULL + (h << 6U) + (h >> 2U);
  return std::hash<std::uint64_t>{}(h);
}

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
  auto [it, inserted] = p2p_.try_emplace(key, 0);
  if (inserted) {
    it->second = allocate();
    CommOp& fresh = ops_[it->second];
    fresh.required = 2;
    fresh.p2p = true;
    fresh.waiters.push_back(w);
    fresh.first_is_send = is_send;
    return kNotReady;
  }
  std::uint32_t id = it->second;
  CommOp& op = ops_[id];
  if (op.first_is_send == is_send) {
    throw base::SimulationError(
        fmt::format("two {}s from rank instance {} to {} with tag {} are pending at once",
                    is_send ? "send" : "recv", key.src, key.dst, key.tag));
  }
  op.waiters.push_back(w);
  if (is_send) {
    std::swap(op.waiters[0], op.waiters[1]);  // send first
  }
  p2p_.erase(it);
  return id;
}

const CommOp* Rendezvous::pending_collective(std::int32_t match, std::uint32_t seq) const {
  auto it = collectives_.find(coll_key(match, seq));
  return it == collectives_.end() ? nullptr : &ops_[it->second];
}

const CommOp* Rendezvous::pending_p2p(const P2PKey& key) const {
  auto it = p2p_.find(key);
  return it == p2p_.end() ? nullptr : &ops_[it->second];
}

}  // namespace tessera::exec
