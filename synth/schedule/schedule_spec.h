// SPDX-License-Identifier: Apache-2.0
// The one text form of a pipeline schedule, shared by a scenario's `schedule:` scalar,
// `--set schedule=...` and `tessera compare --schedules`.
#pragma once

#include <string>
#include <string_view>

#include "synth/scenario/scenario.h"

namespace tessera::synth::schedule {

// A schedule as its spec string gives it: the skeleton and, for the encoder placements, where
// the encoder runs (with a 1F1B body).
using ScheduleSpec = ScheduleConfig;

// Parses one spec:
//   gpipe | 1f1b | zb-h1 | zb-h2 | dualpipev | dualpipe | interleaved[:chunks] (default 2)
//   transpose[:round_robin|min|greedy][:recompute|owner]       Mpipe, the encoder replicated
//   encoder-stages[:k]                                          the encoder as k first stages
//   encoder-separate[:n]                                        the encoder on n devices more
// Throws base::InputError (without a position) naming what was expected.
ScheduleSpec parse_schedule_spec(std::string_view text);

// "gpipe, 1f1b, ..., encoder-separate[:n]": every form, for --help and error messages.
std::string schedule_spec_forms();

}  // namespace tessera::synth::schedule
