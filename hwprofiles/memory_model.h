// SPDX-License-Identifier: Apache-2.0
// Achieved HBM rate of a memory-bound kernel by size: small kernels cannot keep enough
// requests in flight to fill the device, large ones run at the profile's plateau.
#pragma once

#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

// Bytes/s for a kernel that moves `bytes` (read + written):
//   hbm_bandwidth * hbm_efficiency * bytes / (bytes + hbm_half_bytes)
// `ramp` false: the plateau hbm_bandwidth * hbm_efficiency whatever the size.
// Contract: bytes > 0 when ramp is on (a base::InternalError otherwise).
double memory_rate(const Profile& p, double bytes, bool ramp = true);

}  // namespace tessera::hw
