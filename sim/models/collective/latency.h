// SPDX-License-Identifier: Apache-2.0
// The latency part of communication (alpha of the alpha-beta model), added after the part the
// network model times from bytes and bandwidth:
//   collective of n > 1 members: collective_launch + steps * (collective_step + hop latency),
//     the hop latency being the slowest ring hop's path latency;
//   send/recv: collective_step + the path's latency.
#pragma once

#include "base/units.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::models {

inline base::SimTime collective_latency(const hw::Profile& profile, int steps,
                                        base::SimTime hop_latency) {
  return profile.collective_launch + steps * (profile.collective_step + hop_latency);
}

inline base::SimTime p2p_latency(const hw::Profile& profile, base::SimTime path_latency) {
  return profile.collective_step + path_latency;
}

}  // namespace tessera::models
