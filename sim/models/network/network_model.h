// SPDX-License-Identifier: Apache-2.0
// The network-model role: times transfers of bytes over registered paths while other
// transfers share the links. One implementation per file (flow_network_model.cpp: max-min
// fair flow sharing), registered by name in network_models.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "base/registry.h"
#include "sim/kernel/scheduler.h"
#include "sim/models/network/path_table.h"

namespace tessera::models {

// Told when a transfer it started has moved all its bytes.
class TransferListener {
 public:
  TransferListener() = default;
  TransferListener(const TransferListener&) = default;
  TransferListener& operator=(const TransferListener&) = default;
  TransferListener(TransferListener&&) = default;
  TransferListener& operator=(TransferListener&&) = default;
  virtual ~TransferListener() = default;
  virtual void on_transfer_done(std::uint64_t token) = 0;
};

// Contract: start() a transfer of `bytes` per flow on a path of the model's finalized
// PathTable with at least one link; the listener hears on_transfer_done(token) from inside the
// scheduler's run loop, at the time the bytes have moved. Deterministic.
class NetworkModel {
 public:
  NetworkModel() = default;
  NetworkModel(const NetworkModel&) = delete;
  NetworkModel& operator=(const NetworkModel&) = delete;
  NetworkModel(NetworkModel&&) = delete;
  NetworkModel& operator=(NetworkModel&&) = delete;
  virtual ~NetworkModel() = default;
  virtual void start(PathId path, double bytes, TransferListener& listener,
                     std::uint64_t token) = 0;
};

using NetworkModelFactory = std::unique_ptr<NetworkModel> (*)(kernel::Scheduler& scheduler,
                                                              const PathTable& paths);

using NetworkModelRegistry = base::Registry<NetworkModelFactory>;

// The built-in network models, registered once by register_builtin_network_models().
const NetworkModelRegistry& builtin_network_models();
void register_builtin_network_models(NetworkModelRegistry& registry);
void register_flow_network_model(NetworkModelRegistry& registry);

// The named model; base::InputError listing the names when it is unknown.
std::unique_ptr<NetworkModel> make_network_model(std::string_view name,
                                                 kernel::Scheduler& scheduler,
                                                 const PathTable& paths);

}  // namespace tessera::models
