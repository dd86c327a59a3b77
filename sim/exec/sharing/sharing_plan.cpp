// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/sharing_plan.h"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "base/error.h"
#include "sim/exec/sharing/class_refinement.h"
#include "sim/exec/sharing/relabel.h"
#include "sim/exec/sharing/route_signature.h"
#include "sim/exec/sharing/route_symmetry.h"

namespace tessera::exec {

namespace {

std::vector<ClassRefs> all_class_refs(const graph::ExecGraph& graph) {
  std::vector<ClassRefs> refs;
  refs.reserve(graph.classes.size());
  for (const graph::RankGraph& g : graph.classes) {
    refs.push_back(class_refs(g));
  }
  return refs;
}

// One instance per rank, matched by group id; non-representatives relabelled.
SharingPlan per_rank_plan(const graph::ExecGraph& graph, const GroupClasses& gc) {
  SharingPlan plan;
  const std::vector<ClassRefs> refs = all_class_refs(graph);
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

// Instances stand for classes of ranks and meet by group class (over those classes).
void match_by_group_class(SharingPlan& plan, GroupClasses gc) {
  plan.shared = true;
  plan.match_of_group = std::move(gc.class_of_group);
  plan.match_groups = std::move(gc.groups);
  plan.required = std::move(gc.distinct_rank_classes);
}

// One instance per graph class (its representative), for graphs that cannot be relabelled.
SharingPlan per_class_plan(const graph::ExecGraph& graph, GroupClasses gc) {
  SharingPlan plan;
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    InstanceSpec spec;
    spec.rank = graph.class_rep[c];
    spec.cls = static_cast<std::int32_t>(c);
    plan.instances.push_back(std::move(spec));
  }
  plan.instance_of_rank = graph.class_of_rank;
  match_by_group_class(plan, std::move(gc));
  return plan;
}

// Every rank's sends, filed under the send of its subclass representative.
void add_send_copies(const graph::ExecGraph& graph, const std::vector<ClassRefs>& refs,
                     const Refinement& ref, SharingPlan& plan) {
  std::vector<std::vector<std::int32_t>> sends;
  for (std::size_t c = 0; c < graph.classes.size(); ++c) {
    sends.push_back(send_peers(graph.classes[c], refs[c]));
  }
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const std::int32_t s = ref.parts.rep[static_cast<std::size_t>(ref.parts.class_of_rank[ri])];
    const auto c = static_cast<std::size_t>(graph.class_of_rank[ri]);
    for (std::int32_t i : sends[c]) {
      const auto pi = static_cast<std::size_t>(i);
      plan.send_copies[{s, ref.mapped[static_cast<std::size_t>(s)].peers[pi]}].emplace_back(
          r, ref.mapped[ri].peers[pi]);
    }
  }
}

// One instance per subclass: its lowest rank, running its class graph relabelled to it.
SharingPlan per_subclass_plan(const graph::ExecGraph& graph, const GroupClasses& base,
                              const std::vector<ClassRefs>& refs, Refinement ref) {
  SharingPlan plan;
  for (std::int32_t rep : ref.parts.rep) {
    auto c = static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(rep)]);
    plan.instances.push_back(relabel_instance(graph, base, refs[c], rep));
  }
  add_send_copies(graph, refs, ref, plan);
  plan.instance_of_rank = std::move(ref.parts.class_of_rank);
  match_by_group_class(plan, std::move(ref.groups));
  return plan;
}

// Splits the classes by what their ranks see; "" when the split is used (then `plan` is
// set), otherwise why it is not.
std::string try_refined(const graph::ExecGraph& graph, RouteSignatures& sigs,
                        const GroupClasses& base, SharingPlan& plan) {
  const std::vector<ClassRefs> refs = all_class_refs(graph);
  Refinement ref = refine_classes(graph, sigs, base, refs);
  if (ref.parts.rep.size() == static_cast<std::size_t>(graph.num_ranks)) {
    return "splitting the classes by what their ranks see leaves every rank on its own";
  }
  std::string why = check_refinement(graph, sigs, ref, refs);
  if (!why.empty()) {
    return fmt::format("splitting the classes by what their ranks see is inconsistent: {}", why);
  }
  plan = per_subclass_plan(graph, base, refs, std::move(ref));
  return "";
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
  RouteSignatures sigs(graph, cluster, gc);
  const std::string asymmetry = find_asymmetry(sigs, graph_partition(graph), gc);
  SharingPlan plan;
  std::string why;
  try {
    why = try_refined(graph, sigs, gc, plan);
  } catch (const base::InputError&) {
    if (asymmetry.empty()) {
      return per_class_plan(graph, std::move(gc));  // symmetric, but not relabellable
    }
    throw;
  }
  if (why.empty()) {
    return plan;
  }
  plan = per_rank_plan(graph, gc);
  plan.fallback_reason = asymmetry.empty() ? why : fmt::format("{}; {}", asymmetry, why);
  return plan;
}

}  // namespace tessera::exec
