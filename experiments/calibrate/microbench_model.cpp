// SPDX-License-Identifier: Apache-2.0
// A microbenchmark row as the simulator times the kernel (hwprofiles/*_model.h): the rate the
// profile's model gives, in the row's unit.
#include "experiments/calibrate/microbench.h"
#include "hwprofiles/memory_model.h"

namespace tessera::experiments::calibrate {

namespace {

// TFLOP/s of a GEMM in `m.dtype` with bf16 output, as the simulator times a GEMM node: peak x
// fraction, A+B+C bytes at the plateau HBM rate, the sustained ceiling.
double gemm_tflops(const hw::Profile& p, const Measurement& m) {
  const double bytes = hw::gemm_bytes(m.gemm, m.dtype, base::DType::kBF16);
  const double seconds =
      hw::gemm_seconds(p.gemm, m.gemm, p.peak(m.dtype) * p.gemm.fraction(m.dtype), bytes,
                       hw::memory_rate(p, bytes, false), {}, p.gemm.sustained(m.dtype));
  return 2.0 * static_cast<double>(m.gemm.m * m.gemm.n) * static_cast<double>(m.gemm.k) *
         static_cast<double>(m.gemm.batch) / seconds / 1e12;
}

// GB/s of a memory-bound kernel: the stream launch floor plus its bytes at the ramped rate.
double memory_gbps(const hw::Profile& p, double bytes) {
  return bytes / (base::to_seconds(p.launch.stream) + bytes / hw::memory_rate(p, bytes)) / 1e9;
}

// TFLOP/s of fused attention; forward + backward together weighs the backward's 2.5x FLOPs.
double attention_tflops(const hw::Profile& p, const Measurement& m) {
  const double f = hw::attention_fraction(p.attention, hw::AttentionPass::kForward, m.attention);
  const double b = hw::attention_fraction(p.attention, hw::AttentionPass::kBackward, m.attention);
  const double fraction = m.passes == AttentionPasses::kForward    ? f
                          : m.passes == AttentionPasses::kBackward ? b
                                                                   : 3.5 / (1.0 / f + 2.5 / b);
  return p.peak(base::DType::kBF16) * fraction / 1e12;
}

}  // namespace

double predict(const hw::Profile& p, const Measurement& m) {
  switch (m.model) {
    case KernelModel::kGemm:
      return gemm_tflops(p, m);
    case KernelModel::kMemory:
      return memory_gbps(p, m.bytes);
    case KernelModel::kAttention:
      return attention_tflops(p, m);
  }
  return 0.0;
}

}  // namespace tessera::experiments::calibrate
