// SPDX-License-Identifier: Apache-2.0
// Invariants every pipeline plan (the per-rank orders of one step) must keep
// (docs/pipeline_schedules.md 4.2, "dependency invariants on any generated plan").
#pragma once

#include <vector>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {

// The orders of ranks 0..ranks-1 (stage_order of each).
using Plan = std::vector<std::vector<Task>>;
Plan make_plan(const ScheduleConfig& cfg, int ranks, int microbatches);

// Checks `plan` for `place`, each pipe running `pipe_microbatches` microbatches
// (Placement::pipe_microbatches), and throws base::InternalError naming the rank, stage and
// microbatch of the first violation:
//  - one order per rank, each task on a stage its rank holds (Placement::rank_of, chunk_of),
//    with a microbatch in [0, pipe_microbatches);
//  - every (stage, microbatch) of every pipe has exactly one F and either one whole backward B
//    or one input-gradient backward b and one weight gradient w; F before B (or b before w)
//    on the rank;
//  - a paired task ("F&B") is a forward followed by a backward;
//  - the plan runs to the end without deadlock: a list schedule over the rank orders with
//    section 2.0's dependencies (F(s) <- F(prev_stage(s)); B or b(s) <- B or b of
//    next_stage(s), or <- F(s) at the pipe's last stage; w(s) <- b(s)), each pair starting
//    once both its tasks' inputs are there.
void check_plan(const Placement& place, const Plan& plan, int pipe_microbatches);

// Generates the plan of `cfg` (check_schedule must accept it) and checks it.
void check_plan(const ScheduleConfig& cfg, int ranks, int microbatches);

}  // namespace tessera::synth::schedule
