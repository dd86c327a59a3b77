// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/comm_timer.h"

#include <algorithm>
#include <cstddef>

#include "sim/models/collective/algorithm.h"
#include "sim/models/collective/latency.h"
#include "sim/models/collective/tuner.h"

namespace tessera::exec {

namespace {

base::SimTime fixed_duration(const CommOp& op, const std::vector<InstanceState>& instances) {
  base::SimTime fixed = -1;
  for (const Waiter& w : op.waiters) {
    fixed = std::max(fixed, instances[w.instance].node(w.node).fixed_duration);
  }
  return fixed;
}

// The largest payload among the members (with skewed MoE routing, each member's own: the
// all-to-all moves at the pace of the rank that sends or receives most).
double max_bytes(const CommOp& op, const std::vector<InstanceState>& instances,
                 const graph::ExpertLoads& loads) {
  double bytes = 0.0;
  for (const Waiter& w : op.waiters) {
    const InstanceState& s = instances[w.instance];
    const graph::Node& n = s.node(w.node);
    bytes = std::max(bytes, n.bytes * load_factor(s, loads, n));
  }
  return bytes;
}

}  // namespace

CommTiming CommTimer::time(const CommOp& op, const std::vector<InstanceState>& instances) const {
  CommTiming t;
  t.fixed = fixed_duration(op, instances);
  if (t.fixed >= 0) {
    return t;
  }
  return op.p2p ? p2p(op, instances) : collective(op, instances);
}

CommTiming CommTimer::collective(const CommOp& op,
                                 const std::vector<InstanceState>& instances) const {
  const Waiter& first = op.waiters.front();
  const InstanceState& inst = instances[first.instance];
  const graph::Node& node = inst.node(first.node);
  const std::int32_t group = inst.spec->group(node.group);
  const auto n = static_cast<int>(graph_.groups[static_cast<std::size_t>(group)].ranks.size());
  CommTiming t;
  if (n <= 1) {
    t.fixed = 0;
    return t;
  }
  const std::int32_t match = plan_.match_of_group[static_cast<std::size_t>(group)];
  // A node-deduplicated dispatch sends each other domain its share of the payload.
  const graph::Group& grp = graph_.groups[static_cast<std::size_t>(group)];
  const double payload = max_bytes(op, instances, graph_.expert_loads) *
                         (grp.deduplicates(node.coll) ? grp.domain_share : 1.0);
  const models::Choice choice = models::tuner_choose(
      node.coll, n, payload, paths_.candidates(match, node.coll), profile_, options_);
  t.latency = choice.latency;
  t.resources = {choice.algorithm, choice.protocol, choice.sms};
  if (choice.later_bytes.empty()) {
    const CollectivePath& path = paths_.collective(match, choice.algorithm);
    t.path = path.path;
    t.bytes_per_flow = path.path == models::kNoPath ? 0.0 : choice.bytes_per_flow;
    return t;
  }
  const auto& stages = paths_.stage_paths(match, node.coll, choice.algorithm);
  for (std::size_t i = 0; i < stages.size(); ++i) {  // stages that cross no link take no time
    const double bytes = i == 0 ? choice.bytes_per_flow : choice.later_bytes[i - 1];
    if (stages[i].path == models::kNoPath || bytes <= 0.0) {
      continue;
    }
    if (t.path == models::kNoPath) {
      t.path = stages[i].path;
      t.bytes_per_flow = bytes;
    } else {
      t.later.push_back({stages[i].path, bytes});
    }
  }
  return t;
}

CommTiming CommTimer::p2p(const CommOp& op, const std::vector<InstanceState>& instances) const {
  const Waiter& send = op.waiters.front();  // the rendezvous lists the send first
  const InstanceState& inst = instances[send.instance];
  const graph::Node& node = inst.node(send.node);
  const P2PPath& path = paths_.p2p(inst.spec->rank, inst.spec->peer(node.peer));
  CommTiming t;
  t.path = path.path;
  t.bytes_per_flow =
      path.path == models::kNoPath ? 0.0 : max_bytes(op, instances, graph_.expert_loads);
  t.latency = models::p2p_latency(profile_, path.latency);
  return t;
}

}  // namespace tessera::exec
