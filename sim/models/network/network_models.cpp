// SPDX-License-Identifier: Apache-2.0
#include "sim/models/network/network_model.h"

namespace tessera::models {

// Adding a network model: one file with its class and register_<name>(), and one line here.
void register_builtin_network_models(NetworkModelRegistry& registry) {
  register_flow_network_model(registry);
}

const NetworkModelRegistry& builtin_network_models() {
  static const NetworkModelRegistry registry = [] {
    NetworkModelRegistry r;
    register_builtin_network_models(r);
    return r;
  }();
  return registry;
}

std::unique_ptr<NetworkModel> make_network_model(std::string_view name,
                                                 kernel::Scheduler& scheduler,
                                                 const PathTable& paths) {
  return builtin_network_models().get("network model", name)(scheduler, paths);
}

}  // namespace tessera::models
