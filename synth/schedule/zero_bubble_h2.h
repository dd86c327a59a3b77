// SPDX-License-Identifier: Apache-2.0
// Zero-bubble ZB-H2 (Qi et al., ICLR 2024; docs/pipeline_schedules.md 2.5): up to 2p-1
// microbatches in flight per rank (extra warmup forwards), weight gradients filling the tail.
#pragma once

#include <vector>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {

// The per-rank orders of ZB-H2 on p ranks (flat placement) for m microbatches, every
// backward split into "b" and "w". No canonical order was ported (section 2.5), so the orders
// are those of the simple greedy list scheduler the reference checked: whenever a rank is
// free it runs, by priority, the next input-gradient backward b whose gradient (or, on the
// last stage, forward) is there, else the next forward when its input is there and fewer than
// 2p-1 microbatches are in flight (forward run, weight gradient not yet), else the oldest
// deferred weight gradient w. Schedules never embed costs, so the greedy runs once with unit
// costs F = b = w = 1 to decide the order; the simulator then times that order with the real
// costs. (With unit costs it reaches section 2.5's bound m(F+B+W) + (p-1)F when m >= p.)
std::vector<std::vector<Task>> zb_h2_orders(int p, int m);

}  // namespace tessera::synth::schedule
