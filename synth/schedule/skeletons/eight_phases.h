// SPDX-License-Identifier: Apache-2.0
// The eight-phase program DualPipe and DualPipeV share (DeepSeek's step()), as data.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {

// The eight-phase program of DeepSeek's DualPipe and DualPipeV step() (DualPipe repository,
// dualpipe.py and dualpipev.py; docs/pipeline_schedules.md 2.7 and 2.8). Both run the same program
// over a "half pipeline" of n ranks, in which this rank sits h ranks from the end where its
// chunk-0 microbatches enter, with m microbatches per chunk:
//  - DualPipeV: n = N, h = r, m = M; chunk 0 is the V's ascending leg, chunk 1 the other.
//  - DualPipe: n = N/2, h = min(r, N-1-r), m = M/2; chunk 0 is pipe A and chunk 1 pipe B on
//    the first half of the ranks, swapped on the second half ("phase ^= is_in_second_half").
// `stage` gives the virtual stage of each (actual) chunk; `swap` maps logical chunk c to
// actual chunk c ^ 1.
std::vector<Task> eight_phase_order(int n, int h, int m, bool swap, std::array<int, 2> stage);

}  // namespace tessera::synth::schedule
