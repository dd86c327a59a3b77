// SPDX-License-Identifier: Apache-2.0
// One point of a search space as a scenario: the base with the point's values applied, the
// layers split over the point's pipeline stages, the data-parallel size the devices leave, and
// the scenario's own validation; or why the point is not a run of its own.
#pragma once

#include <optional>

#include "experiments/search/search.h"
#include "experiments/search/space.h"
#include "synth/scenario/scenario.h"

namespace tessera::experiments::search {

// Point `index` of `space` applied to `base` (whose devices are the search's): the scenario,
// or nullopt with `out` saying why it is invalid or a duplicate. Fills out.index, dp and
// microbatches.
std::optional<synth::Scenario> make_point(const synth::Scenario& base, const Space& space,
                                          std::uint64_t index, PointResult& out);

}  // namespace tessera::experiments::search
