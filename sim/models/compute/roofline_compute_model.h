// SPDX-License-Identifier: Apache-2.0
// Roofline timing of one compute node on one device: the slower of its math (at the achieved
// fraction of the dtype's peak) and its HBM traffic (at the achieved rate for its size), then
// the cost of launching it (docs/compute_model.md).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/gemm_model.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/compute/compute_model.h"

namespace tessera::models {

// Contract: duration() is deterministic and >= 0; a node with fixed_duration >= 0 takes
// exactly that. Device time by op class:
//   kGemm       hw::gemm_seconds (kernel choice, quantization, latency, sustained ceiling,
//               HBM bound)
//   kAttention  flops / (peak(dtype) * hw::attention_fraction(pass, seq, head dim, causal)),
//               from the profile's attention.fa2 tables for FlashAttention-2 kernels
//   otherwise   max(flops / vector_flops, bytes / hw::memory_rate(bytes))
// where peak(dtype) falls back to the fp32 peak, then to vector_flops, when it is 0. Then
//   eager:       device + launch.stream, each node issued by the host thread at launch.host
//                (host_cost; sim/exec/host_thread.h)
//   CUDA graphs: device + launch.graph, no host cost
// Effects (sim/models/effects.h): kernel-launch (the device floor), host-launch (the eager
// host thread), gemm-quantization, gemm-kernel-choice, gemm-latency, gemm-sustained (off: no
// best-shape ceiling), attention-tables (off:
// the flat profile.attention_fraction), memory-bound-ramp (off: the plateau rate).
// Not thread-safe: GEMM times are cached per shape. Registered as "roofline".
class RooflineComputeModel final : public ComputeModel {
 public:
  explicit RooflineComputeModel(const hw::Profile& profile, const Effects& effects = {},
                                const KernelChoice& kernels = {});
  [[nodiscard]] base::SimTime duration(const graph::Node& node) const override;
  // launch.host for a kernel the framework issues, and launch.host_expert per local expert
  // of an op it runs expert by expert; 0 for an imported node's measured time and for
  // communication, whose call cost is the collective and p2p models' launch term.
  [[nodiscard]] base::SimTime host_cost(const graph::Node& node) const override {
    return node.kind == graph::NodeKind::kCompute && node.fixed_duration < 0
               ? host_ + host_expert_ * node.host_experts
               : 0;
  }
  [[nodiscard]] bool host_bound() const override { return host_ > 0; }
  // Device seconds of a modelled node, before launch costs.
  [[nodiscard]] double device_seconds(const graph::Node& node) const;

 private:
  struct ShapeKey {
    std::int64_t m, n, k, batch;
    double bytes;
    base::DType dtype;
    bool operator==(const ShapeKey&) const = default;
  };
  struct ShapeHash {
    std::size_t operator()(const ShapeKey& s) const;
  };

  [[nodiscard]] double matrix_peak(base::DType d) const;
  [[nodiscard]] double memory_seconds(double bytes) const;
  [[nodiscard]] double gemm_seconds(const graph::Node& node) const;
  [[nodiscard]] double attention_seconds(const graph::Node& node) const;
  [[nodiscard]] base::SimTime launched(double device_s) const;

  const hw::Profile& profile_;
  hw::GemmOptions gemm_options_;
  bool sustained_ = true;  // gemm-sustained: the profile's best-shape ceiling
  bool attention_tables_ = true;
  bool memory_ramp_ = true;
  double math_scale_ = 1.0;  // under_load.math x the power cap's clock factor
  double fp8_scale_ = 1.0;   // FP8 GEMMs' rate: gemm.mxfp8_rate with MX block scales, else 1
  const hw::AttentionModel* attention_ = nullptr;  // the fused attention kernel's tables
  base::SimTime floor_ = 0;                        // device-side launch floor per kernel
  base::SimTime host_ = 0;         // eager host dispatch per op (0 with CUDA graphs)
  base::SimTime host_expert_ = 0;  // and per expert of a per-expert op
  mutable std::unordered_map<ShapeKey, double, ShapeHash> gemm_cache_;
};

}  // namespace tessera::models
