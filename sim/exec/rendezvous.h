// SPDX-License-Identifier: Apache-2.0
// Where communication nodes wait for their partners: collectives meet under (match key,
// sequence number) until every required instance has arrived; a send meets the recv with the
// same (source, destination, tag). A met set becomes one CommOp that starts and ends as one.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "sim/exec/op_queues.h"

namespace tessera::exec {

struct Waiter {
  std::uint32_t instance = 0;
  graph::NodeId node = 0;
};

// One later stage of a staged collective: `bytes` per flow on network path `path`.
struct StageTransfer {
  std::int32_t path = -1;
  double bytes = 0.0;
};

// One collective or send/recv pair, from the first arrival until it completes.
struct CommOp {
  std::vector<Waiter> waiters;  // arrival order; a p2p op lists its send first once met
  std::uint32_t required = 0;
  bool p2p = false;
  bool first_is_send = false;  // p2p: which side arrived first
  bool eager = false;          // p2p: a send in flight before its recv was posted
  base::SimTime latency = 0;   // fixed part, added after the bandwidth part
  int sms = 0;                 // collective: the SMs its kernel holds (the tuner's choice)
  base::SimTime started = 0;   // when the met op started
  std::string_view algorithm;  // collective: the tuner's choice, for the timeline
  std::string_view protocol;
  std::vector<StageTransfer> later;  // a staged collective's stages after the first
  std::size_t next_stage = 0;        // index in `later` of the stage still to start
};

// Contract: arrive_*() returns the op id when this arrival completes the op, else kNotReady.
// Sends and recvs under one (source, destination, tag) key match in arrival order, as
// NCCL and MPI match messages on one channel. Lookups never depend on hash-table iteration
// order; pending_* are for the deadlock report.
class Rendezvous {
 public:
  static constexpr std::uint32_t kNotReady = UINT32_MAX;

  std::uint32_t arrive_collective(Waiter w, std::int32_t match, std::uint32_t seq,
                                  std::uint32_t required);
  std::uint32_t arrive_p2p(Waiter w, bool is_send, const P2PKey& key);
  // Eager sends: whether a recv waits under `key` (the next send would complete it).
  [[nodiscard]] bool recv_waiting(const P2PKey& key) const;
  // A one-sided op for a send that starts before its recv is posted.
  std::uint32_t open_eager(Waiter send);
  [[nodiscard]] CommOp& op(std::uint32_t id) { return ops_[id]; }
  void release(std::uint32_t id);

  [[nodiscard]] const CommOp* pending_collective(std::int32_t match, std::uint32_t seq) const;
  [[nodiscard]] const CommOp* pending_p2p(const P2PKey& key) const;

 private:
  std::uint32_t allocate();
  static std::uint64_t coll_key(std::int32_t match, std::uint32_t seq) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(match)) << 32U) | seq;
  }

  std::vector<CommOp> ops_;
  std::vector<std::uint32_t> free_;
  std::unordered_map<std::uint64_t, std::uint32_t> collectives_;
  OpQueues p2p_;  // ops of the side that arrived first, per key
};

}  // namespace tessera::exec
