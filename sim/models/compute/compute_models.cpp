// SPDX-License-Identifier: Apache-2.0
#include "sim/models/compute/compute_model.h"

namespace tessera::models {

// Adding a compute model: one file with its class and register_<name>(), and one line here.
void register_builtin_compute_models(ComputeModelRegistry& registry) {
  register_roofline_compute_model(registry);
}

const ComputeModelRegistry& builtin_compute_models() {
  static const ComputeModelRegistry registry = [] {
    ComputeModelRegistry r;
    register_builtin_compute_models(r);
    return r;
  }();
  return registry;
}

std::unique_ptr<ComputeModel> make_compute_model(std::string_view name, const hw::Profile& profile,
                                                 const Effects& effects,
                                                 const KernelChoice& kernels) {
  return builtin_compute_models().get("compute model", name)(profile, effects, kernels);
}

}  // namespace tessera::models
