// SPDX-License-Identifier: Apache-2.0
// The collective tuner: which algorithm and protocol a collective runs with, the way NCCL's
// tuner (src/graph/tuning.cc) and HCCL choose: every algorithm that applies to the group on
// this topology is a candidate, each with the protocols it runs; the tuner estimates each
// pair's time as latency + bytes / (the path's uncontended rate x the protocol's bandwidth
// fraction) and takes the fastest (ties: registration order, then LL, LL128, Simple).
// Rules and sources: docs/collectives.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/models/collective/algorithm.h"
#include "sim/models/effects.h"
#include "topology/cluster.h"

namespace tessera::models {

// The switches the per-effect breakdown turns off (effects "collective-tuner" and
// "rail-alignment", sim/models/effects.h). collective_tuner off: rings (the first registered
// algorithm that runs the type) with the Simple protocol, as before the tuner;
// rail_alignment off: inter-node rings and all-to-alls go straight across rails (through
// the spine);
// ring_local_step off: the rings' last, local step per loop costs nothing.
struct TunerOptions {
  bool collective_tuner = true;
  bool rail_alignment = true;
  bool ring_local_step = true;
};

// The options the effects leave on.
TunerOptions tuner_options(const Effects& effects);

// One stage of a staged candidate (algorithm.h Stage): its algorithm and type, the members
// of each of its subgroups, its share of the payload, and what its registered path offers.
struct StageCandidate {
  std::size_t algorithm = 0;
  graph::CollType type = graph::CollType::kAllReduce;
  int members = 0;
  double bytes_fraction = 1.0;
  double rate = 0.0;
  base::SimTime hop_latency = 0;
  int channels = 1;
};

// One candidate as the tuner sees it: the algorithm and what its registered path offers.
struct Candidate {
  std::size_t algorithm = 0;  // index in builtin_collectives()
  double rate = 0.0;          // bytes/ps of the path's bottleneck link per flow, uncontended
                              // by other collectives (0: nothing crosses a link)
  base::SimTime hop_latency = 0;
  int channels = 1;
  std::vector<StageCandidate> stages;  // a staged algorithm's, in order (the fields above are
                                       // its first stage's); empty for a single-stage one
};

// What the tuner chose, and what the collective occupies while it runs: NCCL runs one CTA
// (on one SM) per channel, so `sms` is the SMs a concurrent GEMM loses (overheads.yaml
// nccl-sm-usage).
struct Choice {
  std::size_t algorithm = 0;
  Protocol protocol = Protocol::kSimple;
  int sms = 0;
  base::SimTime latency = 0;        // the part the network does not time: the call's fixed
                                    // cost and the ring's local last step
  double bytes_per_flow = 0.0;      // the network part, protocol overhead included (a staged
                                    // algorithm: its first stage's)
  std::vector<double> later_bytes;  // a staged algorithm: the later stages' bytes per flow
};

// The algorithms (indices in builtin_collectives()) the tuner may choose for a collective of
// type `c` on `ranks`, in registration order; never empty for a type some algorithm runs.
std::vector<std::size_t> tuner_candidates(graph::CollType c, const std::vector<std::int32_t>& ranks,
                                          const topology::Cluster& cluster,
                                          const hw::Profile& profile, const TunerOptions& options);

// The fastest (algorithm, protocol) among `candidates` for `bytes` over `n` members.
Choice tuner_choose(graph::CollType c, int n, double bytes,
                    const std::vector<Candidate>& candidates, const hw::Profile& profile,
                    const TunerOptions& options);

}  // namespace tessera::models
