// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/gemm_model.h"

#include <fmt/format.h>

namespace tessera::hw {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

double tile_efficiency(const GemmModel& g, std::int64_t m, std::int64_t n) {
  double padded_m = static_cast<double>(ceil_div(m, g.tile_m) * g.tile_m);
  double padded_n = static_cast<double>(ceil_div(n, g.tile_n) * g.tile_n);
  return static_cast<double>(m) / padded_m * (static_cast<double>(n) / padded_n);
}

double wave_efficiency(const GemmModel& g, std::int64_t tiles) {
  std::int64_t waves = ceil_div(tiles, g.compute_units);
  return static_cast<double>(tiles) / static_cast<double>(waves * g.compute_units);
}

}  // namespace

double gemm_efficiency(const GemmModel& g, std::int64_t m, std::int64_t n, std::int64_t k,
                       std::int64_t batch) {
  if (m < 1 || n < 1 || k < 1 || batch < 1) {
    throw base::InternalError(
        fmt::format("gemm_efficiency: bad shape m={} n={} k={} batch={}", m, n, k, batch));
  }
  std::int64_t tiles = ceil_div(m, g.tile_m) * ceil_div(n, g.tile_n) * batch;
  double fill = static_cast<double>(k) / (static_cast<double>(k) + g.k_half);
  return g.max_fraction * tile_efficiency(g, m, n) * wave_efficiency(g, tiles) * fill;
}

}  // namespace tessera::hw
