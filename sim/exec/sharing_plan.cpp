// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing_plan.h"

#include <fmt/format.h>

#include <cstddef>

#include "sim/base/error.h"
#include "sim/exec/relabel.h"
#include "sim/exec/route_symmetry.h"

namespace tessera::exec {

namespace {

// One instance per rank, matched by group id; non-representatives relabelled.
SharingPlan per_rank_plan(const graph::ExecGraph& graph, const GroupClasses& gc) {
  SharingPlan plan;
  std::vector<ClassRefs> refs;
  refs.reserve(graph.classes.size());
  for (const graph::RankGraph& g : graph.classes) {
    refs.push_back(class_refs(g));
  }
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    auto c = static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(r)]);
    plan.instances.push_back(relabel_instance(graph, gc, refs[c], r));
    plan.instance_of_rank.push_back(r);
  }
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    plan.match_of_group.push_back(static_cast<std::int32_t>(g));
    plan.match_groups.push_back({static_cast<std::int32_t>(g)});
    plan.required.push_back(static_cast<std::int32_t>(graph.groups[g].ranks.size()));
  }
  return plan;
}

// One instance per class (its representative), matched by group class.
SharingPlan per_class_plan(const graph::ExecGraph& graph, GroupClasses gc) {
  SharingPlan plan;
  plan.shared = true;
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    InstanceSpec spec;
    spec.rank = graph.class_rep[c];
    spec.cls = static_cast<std::int32_t>(c);
    plan.instances.push_back(std::move(spec));
  }
  for (std::int32_t c : graph.class_of_rank) {
    plan.instance_of_rank.push_back(c);
  }
  plan.match_of_group = std::move(gc.class_of_group);
  plan.match_groups = std::move(gc.groups);
  plan.required = std::move(gc.distinct_rank_classes);
  return plan;
}

}  // namespace

SharingPlan plan_sharing(const graph::ExecGraph& graph, const topology::Cluster& cluster,
                         bool share) {
  const bool one_rank_per_class = graph.classes.size() == static_cast<std::size_t>(graph.num_ranks);
  if (!share && !one_rank_per_class) {
    throw base::InputError(fmt::format(
        "the execution graph shares {} rank classes among {} ranks, but rank-class sharing is "
        "off; synthesize it with one class per rank or turn sharing on",
        graph.classes.size(), graph.num_ranks));
  }
  GroupClasses gc = classify_groups(graph);
  if (one_rank_per_class) {
    return per_rank_plan(graph, gc);
  }
  std::string reason = find_asymmetry(graph, cluster, gc);
  if (reason.empty()) {
    return per_class_plan(graph, std::move(gc));
  }
  SharingPlan plan = per_rank_plan(graph, gc);
  plan.fallback_reason = std::move(reason);
  return plan;
}

}  // namespace tessera::exec
