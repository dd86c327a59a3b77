// SPDX-License-Identifier: Apache-2.0
// Flow-level network: concurrent transfers share link bandwidth max-min fairly; rates are
// recomputed only when the set of transfers changes, and each transfer's completion is
// predicted from its rate (stale predictions are recognised by a version number).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/kernel/scheduler.h"
#include "sim/models/network/max_min_solver.h"
#include "sim/models/network/network_model.h"
#include "sim/models/network/path_table.h"

namespace tessera::models {

// Contract: start() a transfer of `bytes` per flow on a path with at least one link; the
// listener hears on_transfer_done(token) from inside the scheduler's run loop, at the time the
// bytes have moved. All transfers started at one instant are rated together once, after the
// other events of that instant (priority kRecomputePriority). Rates are bytes per picosecond.
// Registered as "max-min".
class FlowNetworkModel final : public NetworkModel, public kernel::EventHandler {
 public:
  static constexpr std::int32_t kRecomputePriority = 1000;

  FlowNetworkModel(kernel::Scheduler& scheduler, const PathTable& paths);
  void start(PathId path, double bytes, TransferListener& listener, std::uint64_t token) override;
  void handle(const kernel::Event& e) override;

  [[nodiscard]] std::size_t active() const { return active_.size(); }
  [[nodiscard]] std::uint64_t recomputes() const { return recomputes_; }

 private:
  enum EventType : std::uint32_t { kDone = 0, kRecompute = 1 };
  struct Transfer {
    PathId path = kNoPath;
    double remaining = 0.0;  // bytes per flow still to move
    double rate = 0.0;       // bytes per ps per flow; 0 until first rated
    base::SimTime updated = 0;
    std::uint32_t version = 0;
    TransferListener* listener = nullptr;
    std::uint64_t token = 0;
  };

  void request_recompute();
  void recompute();
  void complete(std::uint32_t slot);
  void predict(std::uint32_t slot);

  kernel::Scheduler& scheduler_;
  const PathTable& paths_;
  MaxMinSolver solver_;
  std::uint32_t handler_id_ = 0;
  std::vector<Transfer> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> active_;  // slots in start order
  std::vector<PathId> scratch_paths_;
  std::vector<double> scratch_rates_;
  bool recompute_pending_ = false;
  std::uint64_t recomputes_ = 0;
};

}  // namespace tessera::models
