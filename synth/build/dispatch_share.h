// SPDX-License-Identifier: Apache-2.0
// Internal to synth/build: what a node-deduplicated token dispatch (DeepEP, HybridEP;
// model.moe.dispatcher: deepep) sends between the scale-up domains of an EP group
// (dispatch_share.cpp, docs/moe.md).
#pragma once

#include <cstdint>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::detail {

// The probability that a token's k routed experts include one of `domain_experts` of the
// `experts` (a mask, one entry per expert), under the scenario's routing: uniform k-subsets
// for balanced and skewed routing (of the experts of a uniform choice of router_group_topk
// groups with group-limited routing), k consecutive experts from t·k for round robin.
double domain_hit(const MoeConfig& m, const std::vector<char>& domain_experts);

// For an EP group of `ranks` (in EP order: member j holds experts [j·E/ep, (j+1)·E/ep)) on
// domains of `domain_size` consecutive devices: the share of a member's all-to-all payload
// (its k routed copies of T tokens) it sends to each other domain of the group, where each
// token goes once if any of its experts lives there: the largest over the domains of
// domain_hit / k. 0 when the group lies in one domain.
double dispatch_share(const MoeConfig& m, const std::vector<std::int32_t>& ranks, int domain_size);

}  // namespace tessera::synth::detail
