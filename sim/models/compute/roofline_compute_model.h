// SPDX-License-Identifier: Apache-2.0
// Roofline timing of one compute node on one device: the slower of its math (at the achieved
// fraction of the dtype's peak) and its HBM traffic, plus a fixed kernel launch cost.
#pragma once

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/compute/compute_model.h"

namespace tessera::models {

// Contract: duration() is deterministic, >= 0 and >= kernel_launch for modelled nodes; a node
// with fixed_duration >= 0 takes exactly that. Math rates by op class:
//   kGemm       peak(dtype) * hw::gemm_efficiency(gemm dims)
//   kAttention  peak(dtype) * profile.attention_fraction
//   otherwise   vector_flops (memory-bound kernels: the HBM term usually wins)
// where peak(dtype) falls back to the fp32 peak, then to vector_flops, when it is 0.
// Effects (sim/models/effects.h): "kernel-launch" adds kernel_launch to every modelled node;
// "gemm-quantization" applies gemm_efficiency (off: every GEMM at gemm.max_fraction).
// Registered as "roofline".
class RooflineComputeModel final : public ComputeModel {
 public:
  explicit RooflineComputeModel(const hw::Profile& profile, const Effects& effects = {});
  [[nodiscard]] base::SimTime duration(const graph::Node& node) const override;
  [[nodiscard]] double math_rate(const graph::Node& node) const;     // achieved FLOP/s
  [[nodiscard]] double memory_rate() const { return memory_rate_; }  // achieved bytes/s

 private:
  [[nodiscard]] double matrix_peak(base::DType d) const;

  const hw::Profile& profile_;
  double memory_rate_ = 0.0;
  base::SimTime launch_ = 0;
  bool gemm_quantization_ = true;
};

}  // namespace tessera::models
