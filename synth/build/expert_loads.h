// SPDX-License-Identifier: Apache-2.0
// Internal to synth/build: skewed MoE routing's per-rank loads (expert_loads.cpp).
#pragma once

#include "graph/exec_graph.h"
#include "synth/parallel/mesh.h"
#include "synth/scenario/scenario.h"

namespace tessera::synth::detail {

// Every rank's expert and exchange factors per MoE layer and microbatch under the scenario's
// skewed routing (model.moe.routing), with its mean and largest load over the layers its graph
// holds and the token copies it drops at the capacity factor. `g`: the synthesized step.
graph::ExpertLoads expert_loads(const Scenario& s, const parallel::Mesh& mesh,
                                const graph::ExecGraph& g);

}  // namespace tessera::synth::detail
