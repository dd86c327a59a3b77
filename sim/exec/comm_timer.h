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

struct CommTiming {
  base::SimTime fixed = -1;  // >= 0: the op takes exactly this, no network
  models::PathId path = models::kNoPath;
  double bytes_per_flow = 0.0;  // the network part (0: none)
  base::SimTime latency = 0;    // added after the network part
};

// Contract: a collective of n members costs its algorithm's latency (models/collective/
// latency.h) plus its bytes over the network (the algorithm the registry selects for its
// type: models/collective/algorithm.h); a group of one member costs nothing. A send/recv
// costs models::p2p_latency plus its bytes.
// When any member node has fixed_duration >= 0 the op takes the largest of those instead.
class CommTimer {
 public:
  CommTimer(const graph::ExecGraph& graph, const SharingPlan& plan, const CommPaths& paths,
            const hw::Profile& profile)
      : graph_(graph), plan_(plan), paths_(paths), profile_(profile) {}

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
};

}  // namespace tessera::exec
