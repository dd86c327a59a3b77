// SPDX-License-Identifier: Apache-2.0
// The schedules `tessera compare --schedules` names ("1f1b", "interleaved:3",
// "transpose:min:owner", ...) as schedule configs, and why one cannot run a given workload.
#pragma once

#include <string>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::experiments {

// One spec: 1f1b, gpipe, zb-h1, zb-h2, dualpipev, dualpipe, interleaved[:chunks],
// transpose[:round_robin|min|greedy][:recompute|owner], encoder-stages[:k] or
// encoder-separate[:devices]. base::InputError names --schedules and the spec.
synth::ScheduleConfig parse_schedule(const std::string& spec);

// A comma-separated list of specs, in order; base::InputError when it names none.
std::vector<std::string> split_schedules(const std::string& list);

// Why `cfg` cannot run scenario `s` (whose devices already include the encoder's), or "".
std::string unsupported(const synth::Scenario& s, const synth::ScheduleConfig& cfg);

}  // namespace tessera::experiments
