// SPDX-License-Identifier: Apache-2.0
// The framework's host thread of one simulated rank (docs/compute_model.md, "The host
// thread"): it issues the rank's nodes in graph order (graph::RankGraph keeps issue order),
// paying each node's host cost, and runs ahead of the device as far as it likes, except after
// a node that returns a value to the host (graph::Node::host_sync: an MoE router's token
// counts, which size the dispatch and the grouped GEMMs): there it waits until the device has
// finished that node, and the device then waits for the host's next issues.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "base/units.h"
#include "graph/exec_graph.h"
#include "sim/models/compute/compute_model.h"

namespace tessera::exec {

class HostThread {
 public:
  static constexpr base::SimTime kNotIssued = std::numeric_limits<base::SimTime>::max();

  // The host starts at time 0; `compute` prices each node's issue (ComputeModel::host_cost).
  void start(const graph::RankGraph& graph, const models::ComputeModel& compute);
  // When node n is issued: kNotIssued while the host waits at an unfinished sync before it.
  [[nodiscard]] base::SimTime issued(graph::NodeId n) const {
    return n < next_ ? issued_[n] : kNotIssued;
  }
  // Node n finished at `now`; if the host waits on it, it goes on from `now`. Returns whether
  // the host issued more nodes.
  bool finished(graph::NodeId n, base::SimTime now);

 private:
  void advance();

  const graph::RankGraph* graph_ = nullptr;
  const models::ComputeModel* compute_ = nullptr;
  std::vector<base::SimTime> issued_;  // per node, valid below next_
  graph::NodeId next_ = 0;             // the first node not issued yet
  base::SimTime clock_ = 0;            // when the host issued its last node
  bool waiting_ = false;               // at the sync node next_ - 1
};

}  // namespace tessera::exec
