// SPDX-License-Identifier: Apache-2.0
// Device time of one GEMM from the profile's GemmModel: the kernel a heuristic-driven library
// (cuBLAS/CUTLASS) would pick among its CTA tiles and split-K factors, each with tile and
// wave quantization and the mainloop's fill over k, bounded below by the HBM traffic.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

// batch x (m x k) * (k x n).
struct GemmShape {
  std::int64_t m = 1, n = 1, k = 1, batch = 1;
};

// Which parts of the model apply (each one an effect the simulator can switch off).
struct GemmOptions {
  bool quantization = true;   // tile/wave quantization and k-fill; off: flat max fraction
  bool kernel_choice = true;  // every candidate tile and split-K; off: the main tile only
  bool latency = true;        // the fixed device time per GEMM (GemmModel::latency)
};

// The kernel chosen for one shape and its math time (no latency, no HBM bound).
struct GemmKernel {
  GemmTile tile;
  int split_k = 1;
  double seconds = 0.0;
};

constexpr int kMaxSplitK = 16;  // cuBLAS/CUTLASS heuristics stay at or below 16 slices
constexpr std::int64_t kMinSplitDepth = 128;  // and keep >= 2 k-blocks of 64 per slice

// Contract: shape dims >= 1 and rate > 0 (a base::InternalError otherwise). For a tile (tm,tn)
// of reuse I = tm*tn/(tm+tn) and a split s (slices of ks = ceil(k/s)):
//   tiles  = ceil(m/tm) * ceil(n/tn) * batch;  waves = ceil(tiles*s / compute_units)
//   t_tile = 2*tm*tn*(ks + k_half) / (rate/compute_units * min(1, (I/I_main)^small_tile_exponent))
//   t      = waves * t_tile + [s > 1] (split_k_overhead + 8*m*n*batch*s / hbm_rate)
// minimised over the candidates; `rate` is peak(dtype) * fraction(dtype), `hbm_rate` the
// achieved HBM bytes/s for the split-K partial sums (fp32, written and read once each).
GemmKernel gemm_kernel(const GemmModel& g, const GemmShape& shape, double rate, double hbm_rate,
                       const GemmOptions& options = {});

// Seconds for the whole GEMM: max(latency + max(gemm_kernel().seconds, bytes / hbm_rate),
// flops / ceiling), where hbm_rate is the plateau HBM rate (the latency term is the GEMM's
// fixed cost), `bytes` is its HBM traffic (A, B and C), `rate` as above and `ceiling` the
// sustained rate no kernel exceeds, latency included (GemmModel::sustained; 0: none).
double gemm_seconds(const GemmModel& g, const GemmShape& shape, double rate, double bytes,
                    double hbm_rate, const GemmOptions& options = {}, double ceiling = 0.0);

// A, B and C bytes of `shape` with elements of `in` (A, B) and `out` (C), read once each.
double gemm_bytes(const GemmShape& shape, base::DType in, base::DType out);

}  // namespace tessera::hw
