// SPDX-License-Identifier: Apache-2.0
#include "sim/exec/sharing/class_refinement.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

namespace tessera::exec {

namespace {

using Key = std::vector<std::int32_t>;

// Numbers distinct keys 0, 1, ... in order of first appearance.
class Interner {
 public:
  std::int32_t id(Key key) {
    auto next = static_cast<std::int32_t>(ids_.size());
    return ids_.try_emplace(std::move(key), next).first->second;
  }
  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  std::map<Key, std::int32_t> ids_;
};

// Skewed MoE routing: ranks whose expert and exchange factors agree at every layer and
// microbatch get one key (all ranks one key when routing is balanced).
std::vector<std::int32_t> load_keys(const graph::ExecGraph& graph) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(graph.num_ranks), 0);
  const graph::ExpertLoads& l = graph.expert_loads;
  if (l.empty()) {
    return out;
  }
  const auto n = static_cast<std::size_t>(l.layers) * static_cast<std::size_t>(l.microbatches);
  std::map<std::pair<std::vector<float>, std::vector<float>>, std::int32_t> ids;
  for (std::size_t r = 0; r < out.size(); ++r) {
    const auto first = static_cast<std::ptrdiff_t>(r * n);
    const auto last = static_cast<std::ptrdiff_t>((r + 1) * n);
    auto key =
        std::make_pair(std::vector<float>(l.expert.begin() + first, l.expert.begin() + last),
                       std::vector<float>(l.exchange.begin() + first, l.exchange.begin() + last));
    out[r] = ids.try_emplace(std::move(key), static_cast<std::int32_t>(ids.size())).first->second;
  }
  return out;
}

// What refining never changes: the graph class, the expert loads and the routes to and from
// the named peers.
std::size_t split_by_peer_routes(const graph::ExecGraph& graph, RouteSignatures& sigs,
                                 const std::vector<ClassRefs>& mapped, Key& sub) {
  Interner ids;
  const std::vector<std::int32_t> loads = load_keys(graph);
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    Key key{graph.class_of_rank[static_cast<std::size_t>(r)], loads[static_cast<std::size_t>(r)]};
    for (std::int32_t q : mapped[static_cast<std::size_t>(r)].peers) {
      key.push_back(sigs.route(r, q));
      key.push_back(sigs.route(q, r));
    }
    sub[static_cast<std::size_t>(r)] = ids.id(std::move(key));
  }
  return ids.size();
}

// One round: a rank's key is its subclass, its network signature under the current group
// classes, the group classes of its named groups and the subclasses of its named peers.
// Ranks of one subclass share a class graph, so they name equally many groups and peers;
// the signature, whose length is the rank's group count, is length-prefixed.
std::size_t split_once(const RouteSignatures& sigs, const GroupClasses& gc,
                       const std::vector<ClassRefs>& mapped, Key& sub) {
  Interner ids;
  Key next(sub.size());
  for (std::size_t r = 0; r < sub.size(); ++r) {
    const RankSignature sig = rank_signature(sigs, gc, static_cast<std::int32_t>(r));
    Key key{sub[r], static_cast<std::int32_t>(sig.size())};
    for (const auto& e : sig) {
      key.insert(key.end(), e.begin(), e.end());
    }
    for (std::int32_t g : mapped[r].groups) {
      key.push_back(gc.class_of_group[static_cast<std::size_t>(g)]);
    }
    for (std::int32_t q : mapped[r].peers) {
      key.push_back(sub[static_cast<std::size_t>(q)]);
    }
    next[r] = ids.id(std::move(key));
  }
  sub = std::move(next);
  return ids.size();
}

// Renumbers subclasses by (graph class, lowest rank) and names their lowest ranks.
RankPartition canonical(const graph::ExecGraph& graph, const Key& sub) {
  std::vector<std::int32_t> lowest;
  for (std::size_t r = 0; r < sub.size(); ++r) {
    auto s = static_cast<std::size_t>(sub[r]);
    if (s >= lowest.size()) {
      lowest.resize(s + 1, -1);
    }
    lowest[s] = lowest[s] < 0 ? static_cast<std::int32_t>(r) : lowest[s];
  }
  std::vector<std::int32_t> order = lowest;
  auto cls = [&graph](std::int32_t r) { return graph.class_of_rank[static_cast<std::size_t>(r)]; };
  std::sort(order.begin(), order.end(), [&cls](std::int32_t a, std::int32_t b) {
    return std::make_pair(cls(a), a) < std::make_pair(cls(b), b);
  });
  std::vector<std::int32_t> renumber(lowest.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    auto old = static_cast<std::size_t>(sub[static_cast<std::size_t>(order[i])]);
    renumber[old] = static_cast<std::int32_t>(i);
  }
  RankPartition parts{{}, std::move(order)};
  parts.class_of_rank.reserve(sub.size());
  for (std::int32_t s : sub) {
    parts.class_of_rank.push_back(renumber[static_cast<std::size_t>(s)]);
  }
  return parts;
}

}  // namespace

Refinement refine_classes(const graph::ExecGraph& graph, RouteSignatures& sigs,
                          const GroupClasses& base, const std::vector<ClassRefs>& refs) {
  Refinement ref;
  ref.mapped.reserve(static_cast<std::size_t>(graph.num_ranks));
  for (std::int32_t r = 0; r < graph.num_ranks; ++r) {
    const auto c = static_cast<std::size_t>(graph.class_of_rank[static_cast<std::size_t>(r)]);
    ref.mapped.push_back(map_refs(graph, base, refs[c], r));
  }
  Key sub(static_cast<std::size_t>(graph.num_ranks));
  std::size_t count = split_by_peer_routes(graph, sigs, ref.mapped, sub);
  for (;;) {
    const GroupClasses gc = classify_groups(graph, sub);
    const std::size_t n = split_once(sigs, gc, ref.mapped, sub);
    if (n == count) {
      break;  // every key includes the subclass, so an equal count is the same partition
    }
    count = n;
  }
  ref.parts = canonical(graph, sub);
  ref.groups = classify_groups(graph, ref.parts.class_of_rank);
  return ref;
}

}  // namespace tessera::exec
