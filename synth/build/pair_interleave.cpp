// SPDX-License-Identifier: Apache-2.0
#include "synth/build/pair_interleave.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "base/error.h"

namespace tessera::synth::detail {

using graph::NodeId;
using graph::RankGraph;
using graph::Stream;

namespace {

// Per node of [lo, hi): whether it is a compute node that waits for an expert-parallel
// all-to-all, directly or through communication that follows one (the expert-tensor
// all-gather after the dispatch).
std::vector<char> a2a_waits(const RankGraph& g, NodeId lo, NodeId hi) {
  std::vector<char> after_a2a(hi - lo, 0);
  std::vector<char> waits(hi - lo, 0);
  for (NodeId n = lo; n < hi; ++n) {
    bool after = false;
    for (auto [d, e] = g.deps_of(n); d != e; ++d) {
      after = after || (*d >= lo && after_a2a[*d - lo] != 0);
    }
    const graph::Node& node = g.nodes[n];
    if (node.stream == Stream::kCompute) {
      waits[n - lo] = after ? 1 : 0;
    } else {
      after_a2a[n - lo] = (after || node.stream == Stream::kEP) ? 1 : 0;
    }
  }
  return waits;
}

bool any_in(const std::vector<char>& v, std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) {
    if (v[i] != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<NodeId> interleaved_order(const RankGraph& g, const TaskPair& p) {
  const std::vector<char> waits = a2a_waits(g, p.lo, p.hi);
  const std::size_t mid = p.mid - p.lo;
  if (!any_in(waits, 0, mid) || !any_in(waits, mid, waits.size())) {
    return {};
  }
  std::array<NodeId, 2> head = {p.mid, p.lo};  // the backward's segment first
  const std::array<NodeId, 2> end = {p.hi, p.mid};
  std::vector<char> done(p.hi - p.lo, 0);
  std::vector<NodeId> order;
  order.reserve(p.hi - p.lo);
  auto ready = [&](NodeId n) {
    for (auto [d, e] = g.deps_of(n); d != e; ++d) {
      if (*d >= p.lo && done[*d - p.lo] == 0) {
        return false;
      }
    }
    return true;
  };
  std::size_t cur = 0;
  std::size_t run = 0;  // nodes taken from `cur` since the last switch
  while (order.size() < done.size()) {
    const NodeId n = head[cur];
    const bool other_left = head[cur ^ 1U] != end[cur ^ 1U];
    // Switch at the end of a task, at a segment boundary, or when a dependency is the other
    // task's (the smaller head is always ready, so this cannot loop).
    const bool at_end = n == end[cur];
    const bool issuable = !at_end && ready(n);
    if (at_end || (other_left && ((waits[n - p.lo] != 0 && run > 0) || !issuable))) {
      cur ^= 1U;
      run = 0;
      continue;
    }
    if (!issuable) {
      throw base::InternalError("interleaved_order: a node waits for one not yet issued");
    }
    order.push_back(n);
    done[n - p.lo] = 1;
    ++head[cur];
    ++run;
  }
  return order;
}

void interleave_pairs(RankGraph& g, const std::vector<TaskPair>& pairs) {
  std::vector<NodeId> order(g.size());
  std::iota(order.begin(), order.end(), NodeId{0});
  bool changed = false;
  for (const TaskPair& p : pairs) {
    std::vector<NodeId> o = interleaved_order(g, p);
    if (!o.empty()) {
      std::copy(o.begin(), o.end(), order.begin() + p.lo);
      changed = true;
    }
  }
  if (!changed) {
    return;
  }
  std::vector<NodeId> new_id(g.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    new_id[order[i]] = static_cast<NodeId>(i);
  }
  std::vector<graph::Node> nodes;
  nodes.reserve(g.size());
  std::vector<std::uint32_t> dep_begin{0};
  dep_begin.reserve(g.size() + 1);
  std::vector<NodeId> deps;
  deps.reserve(g.deps.size());
  for (NodeId old : order) {
    nodes.push_back(g.nodes[old]);
    for (auto [d, e] = g.deps_of(old); d != e; ++d) {
      deps.push_back(new_id[*d]);
    }
    dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
  }
  g.nodes = std::move(nodes);
  g.dep_begin = std::move(dep_begin);
  g.deps = std::move(deps);
}

}  // namespace tessera::synth::detail
