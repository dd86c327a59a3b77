// SPDX-License-Identifier: Apache-2.0
#include "sim/timeline_pick.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.h"

namespace tessera::sim {

namespace {

std::vector<std::int32_t> default_ranks(const graph::ExecGraph& g, const exec::SharingPlan& plan,
                                        std::size_t max_ranks) {
  std::vector<std::int32_t> reps;
  for (const exec::InstanceSpec& spec : plan.instances) {
    reps.push_back(spec.rank);
  }
  std::sort(reps.begin(), reps.end());
  if (reps.size() <= max_ranks) {
    return reps;
  }
  std::vector<std::int32_t> out;
  std::set<std::int32_t> stages;
  for (std::int32_t r : reps) {  // the first rank of each stage
    if (out.size() < max_ranks && stages.insert(g.graph_of(r).stage).second) {
      out.push_back(r);
    }
  }
  for (std::int32_t r : reps) {
    if (out.size() < max_ranks && std::find(out.begin(), out.end(), r) == out.end()) {
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TimelinePick pick_timeline(const graph::ExecGraph& g, const exec::SharingPlan& plan,
                           const std::vector<std::int32_t>& wanted, std::size_t max_default) {
  std::vector<std::int32_t> ranks = wanted.empty() ? default_ranks(g, plan, max_default) : wanted;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  TimelinePick pick;
  pick.recorded.assign(plan.instances.size(), 0);
  for (std::int32_t r : ranks) {
    if (r < 0 || r >= g.num_ranks) {
      throw base::InputError(
          fmt::format("timeline rank {} is not in the run (ranks 0..{})", r, g.num_ranks - 1));
    }
    auto inst = static_cast<std::size_t>(plan.instance_of_rank[static_cast<std::size_t>(r)]);
    pick.recorded[inst] = 1;
    pick.ranks.push_back({r, plan.instances[inst].rank});
  }
  // Each stage's first rank is recorded (not shown) for analyses that read its spans.
  std::set<std::int32_t> stages;
  for (std::int32_t r = 0; r < g.num_ranks; ++r) {
    if (stages.insert(g.graph_of(r).stage).second) {
      pick.recorded[static_cast<std::size_t>(plan.instance_of_rank[static_cast<std::size_t>(r)])] =
          1;
    }
  }
  return pick;
}

}  // namespace tessera::sim
