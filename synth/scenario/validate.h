// SPDX-License-Identifier: Apache-2.0
// Cross-field validation of a typed Scenario, wherever it came from: a file (the loader maps
// each violation's key path to its file:line:col), --set, or code (test fixtures).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth {

// One broken constraint, named by the scenario key that breaks it.
struct Violation {
  Violation(std::string key_path, std::string what, std::string how = "", std::string alt = "")
      : key(std::move(key_path)),
        message(std::move(what)),
        hint(std::move(how)),
        alt_key(std::move(alt)) {}

  std::string key;      // key path: "parallelism.tp", "schedule.encoder_stages"
  std::string message;  // "tp=3 does not divide model.heads=4"
  std::string hint;     // "" or what to do about it
  // The same value's other spelling (the schedule's region form), tried when `key` is absent.
  std::string alt_key;
};

// Every violation, in the order a reader meets them; checks that need an earlier one to hold
// (dp for the batch, the batch for the schedule) are skipped while it does not. A scenario
// whose parallel.dp is 0 has not had its data-parallel size resolved (see devices_left_dp).
std::vector<Violation> validate(const Scenario& s);

// The cluster's checks alone: its devices fill whole nodes and fit in the topology.
std::vector<Violation> node_violations(const Scenario& s);

// Throws base::InputError for the first violation ("<file>: error: 'key': message"); for
// scenarios built in code, which have no positions.
void check_or_throw(const Scenario& s);

// The data-parallel size the devices leave after tp x cp x pp (and the encoder's own devices), or
// 0 when they do not divide.
std::int64_t devices_left_dp(const Scenario& s);

}  // namespace tessera::synth
