// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/gemm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace tessera::hw {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

double reuse(const GemmTile& t) {
  return static_cast<double>(t.m) * t.n / (t.m + t.n);
}

// Relative mainloop rate of a tile against the main one: less operand reuse per k-step.
double tile_rate(const GemmModel& g, const GemmTile& t) {
  double ratio = reuse(t) / reuse(g.tiles.front());
  return ratio >= 1.0 ? 1.0 : std::pow(ratio, g.small_tile_exponent);
}

double kernel_seconds(const GemmModel& g, const GemmShape& s, const GemmTile& t, int split,
                      double rate, double hbm_rate) {
  std::int64_t tiles = ceil_div(s.m, t.m) * ceil_div(s.n, t.n) * s.batch;
  std::int64_t waves = ceil_div(tiles * split, g.compute_units);
  double depth = static_cast<double>(ceil_div(s.k, split));
  double per_unit = rate / g.compute_units * tile_rate(g, t);
  double seconds = static_cast<double>(waves) * 2.0 * t.m * t.n * (depth + g.k_half) / per_unit;
  if (split > 1) {
    double partials = 8.0 * static_cast<double>(s.m * s.n * s.batch) * split;
    seconds += base::to_seconds(g.split_k_overhead) + partials / hbm_rate;
  }
  return seconds;
}

void check(const GemmShape& s, double rate) {
  if (s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1 || rate <= 0.0) {
    throw base::InternalError(fmt::format("gemm model: bad shape m={} n={} k={} batch={} rate={}",
                                          s.m, s.n, s.k, s.batch, rate));
  }
}

}  // namespace

double GemmModel::fraction(base::DType d) const {
  double f = d == base::DType::kFP8    ? max_fraction_fp8
             : d == base::DType::kFP32 ? max_fraction_fp32
                                       : max_fraction;
  return f > 0.0 ? f : max_fraction;
}

double GemmModel::sustained(base::DType d) const {
  return d == base::DType::kFP8 ? sustained_fp8 : d == base::DType::kFP32 ? 0.0 : sustained_bf16;
}

GemmKernel gemm_kernel(const GemmModel& g, const GemmShape& shape, double rate, double hbm_rate,
                       const GemmOptions& options) {
  check(shape, rate);
  if (!options.quantization) {
    double flops = 2.0 * static_cast<double>(shape.m * shape.n) * shape.k * shape.batch;
    return {g.tiles.front(), 1, flops / rate};
  }
  GemmKernel best{g.tiles.front(), 1, kernel_seconds(g, shape, g.tiles.front(), 1, rate, hbm_rate)};
  if (!options.kernel_choice) {
    return best;
  }
  for (const GemmTile& t : g.tiles) {
    for (int split = 1; split <= kMaxSplitK; ++split) {
      if (split > 1 && shape.k / split < kMinSplitDepth) {
        break;
      }
      double seconds = kernel_seconds(g, shape, t, split, rate, hbm_rate);
      if (seconds < best.seconds) {
        best = {t, split, seconds};
      }
    }
  }
  return best;
}

double gemm_seconds(const GemmModel& g, const GemmShape& shape, double rate, double bytes,
                    double hbm_rate, const GemmOptions& options, double ceiling) {
  double math = gemm_kernel(g, shape, rate, hbm_rate, options).seconds;
  double memory = bytes > 0.0 ? bytes / hbm_rate : 0.0;
  double fixed = options.latency ? base::to_seconds(g.latency) : 0.0;
  // The ceiling is a whole kernel's rate, as MAMF times it (latency included).
  double floor = ceiling > 0.0 ? 2.0 * static_cast<double>(shape.m * shape.n) *
                                     static_cast<double>(shape.k * shape.batch) / ceiling
                               : 0.0;
  return std::max(fixed + std::max(math, memory), floor);
}

double gemm_bytes(const GemmShape& s, base::DType in, base::DType out) {
  double operands = static_cast<double>(s.m * s.k + s.k * s.n) * base::dtype_bytes(in);
  double result = static_cast<double>(s.m * s.n) * base::dtype_bytes(out);
  return (operands + result) * static_cast<double>(s.batch);
}

}  // namespace tessera::hw
