// SPDX-License-Identifier: Apache-2.0
// The compute-model role: how long one compute node takes on one device. One implementation
// per file (roofline_compute_model.cpp today), registered by name in compute_models.cpp.
#pragma once

#include <memory>
#include <string_view>

#include "base/registry.h"
#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/effects.h"

namespace tessera::models {

// Contract: duration() is deterministic and >= 0; a node with fixed_duration >= 0 takes
// exactly that.
class ComputeModel {
 public:
  ComputeModel() = default;
  ComputeModel(const ComputeModel&) = delete;
  ComputeModel& operator=(const ComputeModel&) = delete;
  ComputeModel(ComputeModel&&) = delete;
  ComputeModel& operator=(ComputeModel&&) = delete;
  virtual ~ComputeModel() = default;
  [[nodiscard]] virtual base::SimTime duration(const graph::Node& node) const = 0;
  // The host time the framework spends issuing the node (sim/exec/host_thread.h); 0 for
  // every node: the host never holds the device back.
  [[nodiscard]] virtual base::SimTime host_cost(const graph::Node& /*node*/) const { return 0; }
  [[nodiscard]] virtual bool host_bound() const { return false; }
};

// The step's kernel choices (graph::StepInfo): kernels replayed from CUDA graphs, fused
// attention as FlashAttention-2, FP8 GEMMs with MX block scales.
struct KernelChoice {
  bool cuda_graphs = false;
  bool attention_fa2 = false;
  bool fp8_block_scaled = false;
};

using ComputeModelFactory = std::unique_ptr<ComputeModel> (*)(const hw::Profile& profile,
                                                              const Effects& effects,
                                                              const KernelChoice& kernels);

using ComputeModelRegistry = base::Registry<ComputeModelFactory>;

// The built-in compute models, registered once by register_builtin_compute_models().
const ComputeModelRegistry& builtin_compute_models();
void register_builtin_compute_models(ComputeModelRegistry& registry);
void register_roofline_compute_model(ComputeModelRegistry& registry);

// The named model for `profile` with `effects`; base::InputError listing the names when it is
// unknown.
std::unique_ptr<ComputeModel> make_compute_model(std::string_view name, const hw::Profile& profile,
                                                 const Effects& effects = {},
                                                 const KernelChoice& kernels = {});

}  // namespace tessera::models
