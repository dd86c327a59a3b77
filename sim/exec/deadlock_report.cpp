// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/deadlock_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tessera::exec {

namespace {

std::string node_name(const graph::ExecGraph& g, const graph::Node& n) {
  return n.name < g.names.size() ? g.names[n.name] : fmt::format("#{}", n.name);
}

std::string kind_text(const graph::Node& n) {
  switch (n.kind) {
    case graph::NodeKind::kCompute:
      return fmt::format("compute {}", graph::op_class_name(n.op));
    case graph::NodeKind::kCollective:
      return fmt::format("collective {}", graph::coll_type_name(n.coll));
    case graph::NodeKind::kSend:
      return "send";
    case graph::NodeKind::kRecv:
      return "recv";
  }
  return "?";
}

std::string join_limited(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kMaxReportedNames; ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  if (items.size() > kMaxReportedNames) {
    out += fmt::format(" and {} more", items.size() - kMaxReportedNames);
  }
  return out;
}

std::string waiting_deps(const graph::ExecGraph& g, const InstanceState& s, graph::NodeId n) {
  std::vector<std::string> names;
  auto [b, e] = s.graph->deps_of(n);
  for (const graph::NodeId* d = b; d != e; ++d) {
    bool finished = s.index->pos_in_stream[*d] <
                    s.head[static_cast<std::size_t>(stream_index(s.node(*d).stream))];
    if (!finished) {
      names.push_back(fmt::format("'{}'", node_name(g, s.node(*d))));
    }
  }
  return "waits for unfinished dependencies " + join_limited(names);
}

std::string waiting_collective(const graph::ExecGraph& g, const SharingPlan& plan,
                               const Executor& ex, const InstanceState& s, graph::NodeId n) {
  const graph::Node& node = s.node(n);
  const std::int32_t group = s.spec->group(node.group);
  const std::int32_t match = plan.match_of_group[static_cast<std::size_t>(group)];
  const CommOp* op = ex.rendezvous().pending_collective(match, s.index->coll_seq[n]);
  std::vector<std::string> missing;
  for (std::int32_t r : g.groups[static_cast<std::size_t>(group)].ranks) {
    auto inst = static_cast<std::uint32_t>(plan.instance_of_rank[static_cast<std::size_t>(r)]);
    bool arrived =
        op != nullptr && std::any_of(op->waiters.begin(), op->waiters.end(),
                                     [inst](const Waiter& w) { return w.instance == inst; });
    if (!arrived) {
      missing.push_back(fmt::format("{}", r));
    }
  }
  return fmt::format("waits for ranks {} to reach it ({} group {}, occurrence {})",
                     join_limited(missing),
                     graph::group_kind_name(g.groups[static_cast<std::size_t>(group)].kind), group,
                     s.index->coll_seq[n]);
}

std::string waiting_p2p(const InstanceState& s, const graph::Node& node) {
  const std::int32_t peer = s.spec->peer(node.peer);
  if (node.kind == graph::NodeKind::kSend) {
    return fmt::format("waits for a matching recv on rank {} (tag {})", peer, node.tag);
  }
  return fmt::format("waits for a matching send from rank {} (tag {})", peer, node.tag);
}

std::string stream_line(const graph::ExecGraph& g, const SharingPlan& plan, const Executor& ex,
                        const InstanceState& s, graph::NodeId n) {
  const graph::Node& node = s.node(n);
  std::string why;
  if (s.pending[n] > 0) {
    why = waiting_deps(g, s, n);
  } else if (node.kind == graph::NodeKind::kCollective) {
    why = waiting_collective(g, plan, ex, s, n);
  } else if (node.kind != graph::NodeKind::kCompute) {
    why = waiting_p2p(s, node);
  } else {
    why = "was never started";
  }
  return fmt::format("    {} head '{}' ({}, microbatch {}) {}\n", graph::stream_name(node.stream),
                     node_name(g, node), kind_text(node), node.microbatch, why);
}

}  // namespace

std::string deadlock_report(const graph::ExecGraph& graph, const SharingPlan& plan,
                            const Executor& executor, base::SimTime now) {
  const auto& instances = executor.instances();
  auto stuck = std::count_if(instances.begin(), instances.end(),
                             [](const InstanceState& s) { return !s.done(); });
  std::string msg = fmt::format(
      "deadlock: the step cannot finish; at {:.3f} us no event is left and {} of {} simulated "
      "ranks have unfinished nodes{}:\n",
      base::to_us(now), stuck, instances.size(),
      plan.shared ? " (rank-class representatives)" : "");
  int shown = 0;
  for (const InstanceState& s : instances) {
    if (s.done() || shown == kMaxReportedRanks) {
      continue;
    }
    ++shown;
    msg += fmt::format("  rank {}: {} of {} nodes finished\n", s.spec->rank, s.finished,
                       s.graph->size());
    for (std::size_t st = 0; st < graph::kNumStreams; ++st) {
      const auto& list = s.index->stream_nodes[st];
      if (s.head[st] < list.size()) {
        msg += stream_line(graph, plan, executor, s, list[s.head[st]]);
      }
    }
  }
  return msg;
}

}  // namespace tessera::exec
