// SPDX-License-Identifier: Apache-2.0
#include "sim/models/network/flow_network_model.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>

#include "base/error.h"

namespace tessera::models {

namespace {

// Prediction horizon guard: a finish past this is a broken rate, not a long run.
constexpr double kMaxHorizonPs = 1e18;

std::uint64_t pack(std::uint32_t slot, std::uint32_t version) {
  return (static_cast<std::uint64_t>(slot) << 32U) | version;
}

}  // namespace

FlowNetworkModel::FlowNetworkModel(kernel::Scheduler& scheduler, const PathTable& paths)
    : scheduler_(scheduler), paths_(paths), solver_(paths) {
  if (!paths.finalized()) {
    throw base::InternalError("FlowNetworkModel needs a finalized PathTable");
  }
  handler_id_ = scheduler_.add_handler(*this);
}

void FlowNetworkModel::start(PathId path, double bytes, TransferListener& listener,
                             std::uint64_t token) {
  if (path < 0 || static_cast<std::size_t>(path) >= paths_.num_paths() || !(bytes > 0.0)) {
    throw base::InternalError("FlowNetworkModel::start: bad path or byte count");
  }
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Transfer& t = slots_[slot];
  std::uint32_t version = t.version + 1;
  t = Transfer{path, bytes, 0.0, scheduler_.now(), version, &listener, token};
  active_.push_back(slot);
  request_recompute();
}

void FlowNetworkModel::request_recompute() {
  if (!recompute_pending_) {
    recompute_pending_ = true;
    scheduler_.schedule(scheduler_.now(), handler_id_, kRecompute, 0, kRecomputePriority);
  }
}

void FlowNetworkModel::handle(const kernel::Event& e) {
  if (e.type == kRecompute) {
    recompute_pending_ = false;
    recompute();
    return;
  }
  auto slot = static_cast<std::uint32_t>(e.payload >> 32U);
  auto version = static_cast<std::uint32_t>(e.payload & 0xffffffffU);
  if (slot < slots_.size() && slots_[slot].version == version && slots_[slot].listener) {
    complete(slot);
  }
}

void FlowNetworkModel::complete(std::uint32_t slot) {
  Transfer& t = slots_[slot];
  TransferListener* listener = t.listener;
  std::uint64_t token = t.token;
  t.listener = nullptr;
  ++t.version;  // any other prediction for this slot is now stale
  active_.erase(std::find(active_.begin(), active_.end(), slot));
  free_slots_.push_back(slot);
  request_recompute();
  listener->on_transfer_done(token);
}

void FlowNetworkModel::recompute() {
  ++recomputes_;
  const base::SimTime now = scheduler_.now();
  scratch_paths_.clear();
  for (std::uint32_t slot : active_) {
    Transfer& t = slots_[slot];
    t.remaining -= t.rate * static_cast<double>(now - t.updated);
    t.updated = now;
    scratch_paths_.push_back(t.path);
  }
  if (active_.empty()) {
    return;
  }
  solver_.solve(scratch_paths_, scratch_rates_);
  for (std::size_t i = 0; i < active_.size(); ++i) {
    Transfer& t = slots_[active_[i]];
    if (scratch_rates_[i] != t.rate) {  // unchanged rate: the old prediction still holds
      t.rate = scratch_rates_[i];
      ++t.version;
      predict(active_[i]);
    }
  }
}

void FlowNetworkModel::predict(std::uint32_t slot) {
  const Transfer& t = slots_[slot];
  double left_ps = std::max(t.remaining, 0.0) / t.rate;
  if (!(left_ps < kMaxHorizonPs)) {
    throw base::SimulationError("a network transfer would never finish (rate underflow)");
  }
  base::SimTime at = scheduler_.now() + static_cast<base::SimTime>(std::llround(left_ps));
  scheduler_.schedule(at, handler_id_, kDone, pack(slot, t.version));
}

void register_flow_network_model(NetworkModelRegistry& registry) {
  registry.add(
      "max-min",
      [](kernel::Scheduler& scheduler, const PathTable& paths) -> std::unique_ptr<NetworkModel> {
        return std::make_unique<FlowNetworkModel>(scheduler, paths);
      });
}

}  // namespace tessera::models
