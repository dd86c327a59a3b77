// SPDX-License-Identifier: Apache-2.0
#include "sim/models/compute/roofline_compute_model.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>

#include "base/error.h"
#include "hwprofiles/attention_model.h"
#include "hwprofiles/memory_model.h"

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

// The matrix rate for `d` at full clocks: its tensor peak, else fp32's, else the vector units'.
double full_clock_peak(const hw::Profile& profile, base::DType d) {
  double p = profile.peak_flops[static_cast<std::size_t>(d)];
  if (p <= 0.0) {
    p = profile.peak_flops[static_cast<std::size_t>(base::DType::kFP32)];
  }
  return p > 0.0 ? p : profile.vector_flops;
}

bool has_shape(const graph::GemmDims& g) {
  return g.m >= 1 && g.n >= 1 && g.k >= 1 && g.batch >= 1;
}

}  // namespace

std::size_t RooflineComputeModel::ShapeHash::operator()(const ShapeKey& s) const {
  std::size_t h = std::hash<std::int64_t>{}(s.m);
  for (std::int64_t v : {s.n, s.k, s.batch, static_cast<std::int64_t>(s.dtype)}) {
    h = h * 1000003u ^ std::hash<std::int64_t>{}(v);
  }
  return h * 1000003u ^ std::hash<double>{}(s.bytes);
}

RooflineComputeModel::RooflineComputeModel(const hw::Profile& profile, const Effects& effects,
                                           const KernelChoice& kernels)
    : profile_(profile),
      gemm_options_{.quantization = effects.on("gemm-quantization"),
                    .kernel_choice = effects.on("gemm-kernel-choice"),
                    .latency = effects.on("gemm-latency")},
      sustained_(effects.on("gemm-sustained")),
      attention_tables_(effects.on("attention-tables")),
      memory_ramp_(effects.on("memory-bound-ramp")),
      math_scale_(profile.under_load.math * profile.power.clock_scale()),
      fp8_scale_(kernels.fp8_block_scaled ? profile.gemm.mxfp8_rate : 1.0),
      attention_(kernels.attention_fa2 && profile.attention_fa2 ? &*profile.attention_fa2
                                                                : &profile.attention),
      floor_(!effects.on("kernel-launch") ? 0
             : kernels.cuda_graphs        ? profile.launch.graph
                                          : profile.launch.stream),
      host_(kernels.cuda_graphs || !effects.on("host-launch") ? 0 : profile.launch.host),
      host_expert_(host_ > 0 ? profile.launch.host_expert : 0) {}

// Math rates are the microbenchmarked ones times math_scale_: under_load.math, what the part
// sustains through a training run (clocks at the power limit), and a power cap's clock factor;
// HBM rates are not clock-bound.
double RooflineComputeModel::matrix_peak(base::DType d) const {
  return full_clock_peak(profile_, d) * math_scale_;
}

double RooflineComputeModel::memory_seconds(double bytes) const {
  return bytes > 0.0 ? bytes / hw::memory_rate(profile_, bytes, memory_ramp_) : 0.0;
}

double RooflineComputeModel::gemm_seconds(const graph::Node& node) const {
  // MX block-scaled FP8 GEMMs run at gemm.mxfp8_rate of the per-tensor ones, ceiling too.
  const double fp8_rate = node.dtype == base::DType::kFP8 ? fp8_scale_ : 1.0;
  double rate = matrix_peak(node.dtype) * profile_.gemm.fraction(node.dtype) * fp8_rate;
  if (!has_shape(node.gemm)) {
    return std::max(time_at(node.flops, rate), memory_seconds(node.bytes));
  }
  const graph::GemmDims& g = node.gemm;
  ShapeKey key{g.m, g.n, g.k, g.batch, node.bytes, node.dtype};
  auto it = gemm_cache_.find(key);
  if (it != gemm_cache_.end()) {
    return it->second;
  }
  // The plateau rate: the GEMM's fixed cost is its own latency term.
  double hbm = hw::memory_rate(profile_, node.bytes, false);
  const double ceiling =
      sustained_ ? profile_.gemm.sustained(node.dtype) * math_scale_ * fp8_rate : 0.0;
  double s = hw::gemm_seconds(profile_.gemm, {g.m, g.n, g.k, g.batch}, rate, node.bytes, hbm,
                              gemm_options_, ceiling);
  gemm_cache_.emplace(key, s);
  return s;
}

double RooflineComputeModel::attention_seconds(const graph::Node& node) const {
  double fraction = profile_.attention_fraction;
  if (attention_tables_ && has_shape(node.gemm)) {
    hw::AttentionPass pass = node.phase == graph::Phase::kBackward ? hw::AttentionPass::kBackward
                                                                   : hw::AttentionPass::kForward;
    fraction = hw::attention_fraction(*attention_, pass, {node.gemm.n, node.gemm.k, node.causal});
  }
  // A fused-attention kernel keeps the tensor units less busy than a GEMM at the sustained
  // rate, so it draws less power and a cap slows it less (hw::PowerModel); in a run it holds
  // under_load.attention of what the GEMMs hold of their microbenchmarks.
  const double full_clocks = full_clock_peak(profile_, node.dtype) * fraction;
  const double sustained = profile_.gemm.sustained(node.dtype);
  const double activity = sustained > 0.0 ? full_clocks / sustained : 1.0;
  const double rate = full_clocks * profile_.under_load.math * profile_.under_load.attention *
                      profile_.power.clock_scale(activity);
  return std::max(time_at(node.flops, rate), memory_seconds(node.bytes));
}

double RooflineComputeModel::device_seconds(const graph::Node& node) const {
  switch (node.op) {
    case graph::OpClass::kGemm:
      return gemm_seconds(node);
    case graph::OpClass::kAttention:
      return attention_seconds(node);
    default:
      return std::max(time_at(node.flops, profile_.vector_flops * math_scale_),
                      memory_seconds(node.bytes));
  }
}

base::SimTime RooflineComputeModel::launched(double device_s) const {
  return floor_ + base::from_seconds(device_s);
}

base::SimTime RooflineComputeModel::duration(const graph::Node& node) const {
  if (node.fixed_duration >= 0) {
    return node.fixed_duration;
  }
  return launched(device_seconds(node));
}

void register_roofline_compute_model(ComputeModelRegistry& registry) {
  registry.add("roofline",
               [](const hw::Profile& profile, const Effects& effects,
                  const KernelChoice& kernels) -> std::unique_ptr<ComputeModel> {
                 return std::make_unique<RooflineComputeModel>(profile, effects, kernels);
               });
}

}  // namespace tessera::models
