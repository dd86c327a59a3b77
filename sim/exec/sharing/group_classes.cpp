// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/group_classes.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <tuple>
#include <utility>

namespace tessera::exec {

GroupClasses classify_groups(const graph::ExecGraph& graph) {
  return classify_groups(graph, graph.class_of_rank);
}

GroupClasses classify_groups(const graph::ExecGraph& graph,
                             const std::vector<std::int32_t>& class_of_rank) {
  GroupClasses gc;
  gc.class_of_group.assign(graph.groups.size(), -1);
  gc.groups_of_rank.resize(static_cast<std::size_t>(graph.num_ranks));
  // Kind, member offsets from the lowest member, member classes.
  using Key = std::tuple<int, std::vector<std::int32_t>, std::vector<std::int32_t>>;
  std::map<Key, std::int32_t> ids;
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    const graph::Group& group = graph.groups[g];
    std::vector<std::int32_t> classes;
    classes.reserve(group.ranks.size());
    for (std::int32_t r : group.ranks) {
      classes.push_back(class_of_rank[static_cast<std::size_t>(r)]);
      gc.groups_of_rank[static_cast<std::size_t>(r)].push_back(static_cast<std::int32_t>(g));
    }
    std::sort(classes.begin(), classes.end());
    std::vector<std::int32_t> offsets(group.ranks.begin(), group.ranks.end());
    std::sort(offsets.begin(), offsets.end());
    for (std::size_t i = offsets.size(); i-- > 0;) {
      offsets[i] -= offsets[0];
    }
    std::int32_t distinct = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      distinct += (i == 0 || classes[i] != classes[i - 1]) ? 1 : 0;
    }
    Key key{static_cast<int>(group.kind), std::move(offsets), std::move(classes)};
    auto [it, inserted] =
        ids.try_emplace(std::move(key), static_cast<std::int32_t>(gc.groups.size()));
    if (inserted) {
      gc.groups.emplace_back();
      gc.distinct_rank_classes.push_back(distinct);
    }
    gc.class_of_group[g] = it->second;
    gc.groups[static_cast<std::size_t>(it->second)].push_back(static_cast<std::int32_t>(g));
  }
  return gc;
}

std::int32_t position_in(const graph::Group& group, std::int32_t rank) {
  auto it = std::find(group.ranks.begin(), group.ranks.end(), rank);
  return it == group.ranks.end() ? -1 : static_cast<std::int32_t>(it - group.ranks.begin());
}

}  // namespace tessera::exec
