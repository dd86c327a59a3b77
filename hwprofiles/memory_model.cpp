// SPDX-License-Identifier: Apache-2.0
#include "hwprofiles/memory_model.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tessera::hw {

double memory_rate(const Profile& p, double bytes, bool ramp) {
  double plateau = p.hbm_bandwidth * p.hbm_efficiency;
  if (!ramp || p.hbm_half_bytes <= 0.0) {
    return plateau;
  }
  if (bytes <= 0.0) {
    throw base::InternalError(fmt::format("memory_rate: bytes must be > 0, got {}", bytes));
  }
  return plateau * bytes / (bytes + p.hbm_half_bytes);
}

}  // namespace tessera::hw
