// SPDX-License-Identifier: Apache-2.0
// How long a met communication op takes: a fixed latency part (launch, per-step protocol
// cost, hop latency) and a bandwidth part that the network model times, or a fixed duration
// that the graph imposes.
#pragma once

#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "hwprofiles/hw_profile.h"
#include "sim/exec/comm_paths.h"
#include "sim/exec/instance_state.h"
#include "sim/exec/rendezvous.h"
#include "sim/exec/sharing/sharing_plan.h"

namespace tessera::exec {

// What a collective occupies while it runs, for models of its interference with concurrent
// kernels: the algorithm (index in models::builtin_collectives()), the protocol, and the SMs
// its kernel holds on each member (NCCL: one CTA per channel). sms = 0 for sends and
// fixed-duration ops.
struct CommResources {
  std::size_t algorithm = 0;
  models::Protocol protocol = models::Protocol::kSimple;
  int sms = 0;
};

struct CommTiming {
  base::SimTime fixed = -1;  // >= 0: the op takes exactly this, no network
  models::PathId path = models::kNoPath;
  double bytes_per_flow = 0.0;  // the network part (0: none)
  base::SimTime latency = 0;    // added after the network part
  CommResources resources;
  std::vector<StageTransfer> later;  // a staged collective: its later stages' network parts,
                                     // each started when the one before has moved its bytes
};

// Contract: a collective of n members runs with the algorithm and protocol the tuner
// (models/collective/tuner.h) chooses for its type, size and group among the paths
// CommPaths registered; it costs that choice's latency plus its bytes over the network; a
// group of one member costs nothing. A send/recv costs models::p2p_latency plus its bytes.
// When any member node has fixed_duration >= 0 the op takes the largest of those instead.
// A staged algorithm's stages run one after another: `path`/`bytes_per_flow` is the first,
// `later` the rest, and `latency` (all stages') comes after the last.
// time() is what the executor calls per op; its `resources` say what the collective holds.
class CommTimer {
 public:
  CommTimer(const graph::ExecGraph& graph, const SharingPlan& plan, const CommPaths& paths,
            const hw::Profile& profile, const models::TunerOptions& options)
      : graph_(graph), plan_(plan), paths_(paths), profile_(profile), options_(options) {}

  [[nodiscard]] CommTiming time(const CommOp& op,
                                const std::vector<InstanceState>& instances) const;

 private:
  [[nodiscard]] CommTiming collective(const CommOp& op,
                                      const std::vector<InstanceState>& instances) const;
  [[nodiscard]] CommTiming p2p(const CommOp& op, const std::vector<InstanceState>& instances) const;

  const graph::ExecGraph& graph_;
  const SharingPlan& plan_;
  const CommPaths& paths_;
  const hw::Profile& profile_;
  models::TunerOptions options_;
};

}  // namespace tessera::exec
