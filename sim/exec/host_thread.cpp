// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/host_thread.h"

#include <algorithm>

namespace tessera::exec {

void HostThread::start(const graph::RankGraph& graph, const models::ComputeModel& compute) {
  graph_ = &graph;
  compute_ = &compute;
  issued_.assign(graph.size(), 0);
  next_ = 0;
  clock_ = 0;
  waiting_ = false;
  advance();
}

// Issues nodes in order until the host reaches a sync node (issued, then waited on) or the end.
void HostThread::advance() {
  const auto size = static_cast<graph::NodeId>(graph_->size());
  while (!waiting_ && next_ < size) {
    const graph::Node& node = graph_->nodes[next_];
    clock_ += compute_->host_cost(node);
    issued_[next_] = clock_;
    waiting_ = node.host_sync;
    ++next_;
  }
}

bool HostThread::finished(graph::NodeId n, base::SimTime now) {
  if (!waiting_ || n + 1 != next_) {
    return false;
  }
  clock_ = std::max(clock_, now);
  waiting_ = false;
  advance();
  return true;
}

}  // namespace tessera::exec
