// SPDX-License-Identifier: Apache-2.0
#include "sim/models/compute/roofline_compute_model.h"

#include <algorithm>
#include <cstddef>
#include <memory>

#include "base/error.h"
#include "hwprofiles/gemm_model.h"

namespace tessera::models {

namespace {

// Seconds to run `amount` at `rate`; zero work is free, positive work at rate 0 is a bug.
double time_at(double amount, double rate) {
  if (amount <= 0.0) {
    return 0.0;
  }
  if (rate <= 0.0) {
    throw base::InputError(
        "hardware profile has a zero compute or memory rate for a node that needs it");
  }
  return amount / rate;
}

}  // namespace

RooflineComputeModel::RooflineComputeModel(const hw::Profile& profile, const Effects& effects)
    : profile_(profile),
      memory_rate_(profile.hbm_bandwidth * profile.hbm_efficiency),
      launch_(effects.on("kernel-launch") ? profile.kernel_launch : 0),
      gemm_quantization_(effects.on("gemm-quantization")) {}

double RooflineComputeModel::matrix_peak(base::DType d) const {
  double p = profile_.peak_flops[static_cast<std::size_t>(d)];
  if (p <= 0.0) {
    p = profile_.peak_flops[static_cast<std::size_t>(base::DType::kFP32)];
  }
  return p > 0.0 ? p : profile_.vector_flops;
}

double RooflineComputeModel::math_rate(const graph::Node& node) const {
  switch (node.op) {
    case graph::OpClass::kGemm: {
      const graph::GemmDims& g = node.gemm;
      if (!gemm_quantization_ || g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1) {
        return matrix_peak(node.dtype) * profile_.gemm.max_fraction;
      }
      return matrix_peak(node.dtype) * hw::gemm_efficiency(profile_.gemm, g.m, g.n, g.k, g.batch);
    }
    case graph::OpClass::kAttention:
      return matrix_peak(node.dtype) * profile_.attention_fraction;
    default:
      return profile_.vector_flops;
  }
}

base::SimTime RooflineComputeModel::duration(const graph::Node& node) const {
  if (node.fixed_duration >= 0) {
    return node.fixed_duration;
  }
  double math_s = node.flops > 0.0 ? time_at(node.flops, math_rate(node)) : 0.0;
  double memory_s = time_at(node.bytes, memory_rate_);
  return launch_ + base::from_seconds(std::max(math_s, memory_s));
}

void register_roofline_compute_model(ComputeModelRegistry& registry) {
  registry.add(
      "roofline",
      [](const hw::Profile& profile, const Effects& effects) -> std::unique_ptr<ComputeModel> {
        return std::make_unique<RooflineComputeModel>(profile, effects);
      });
}

}  // namespace tessera::models
