// SPDX-License-Identifier: Apache-2.0
// Achieved fraction of a device's dense peak for one GEMM shape, from the profile's
// GemmModel: tile quantization, wave quantization and mainloop fill/drain over k.
#pragma once

#include <cstdint>

#include "base/error.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

// Contract: m, n, k, batch >= 1 (a base::InternalError otherwise). Returns a value in
// (0, g.max_fraction]:
//   eff       = max_fraction * tile_eff * wave_eff * k / (k + k_half)
//   tile_eff  = m*n / (ceil(m/tm)*tm * ceil(n/tn)*tn)      partial tiles do full work
//   tiles     = ceil(m/tm) * ceil(n/tn) * batch
//   wave_eff  = tiles / (ceil(tiles/units) * units)        the last wave leaves units idle
double gemm_efficiency(const GemmModel& g, std::int64_t m, std::int64_t n, std::int64_t k,
                       std::int64_t batch);

}  // namespace tessera::hw
