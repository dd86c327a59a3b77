// SPDX-License-Identifier: Apache-2.0
// The latency part of a send/recv (alpha of the alpha-beta model), added after the part the
// network model times from bytes and bandwidth: collective_step + the path's latency.
// A collective's is its algorithm's (CollectiveAlgorithm::latency: by default the protocol's
// launch + steps * (its step + the slowest hop's latency)).
#pragma once

#include "base/units.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::models {

inline base::SimTime p2p_latency(const hw::Profile& profile, base::SimTime path_latency) {
  return profile.collective_step + path_latency;
}

}  // namespace tessera::models
