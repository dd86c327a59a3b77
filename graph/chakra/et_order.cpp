// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/et_order.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>

#include "base/error.h"

namespace tessera::graph::chakra {

namespace {

constexpr std::size_t kCycleNodesShown = 8;

[[noreturn]] void fail(const EtTrace& t, const std::string& message) {
  throw base::InputError(base::SourceLoc{t.path}, message);
}

std::unordered_map<std::uint64_t, std::size_t> index_ids(const EtTrace& t) {
  std::unordered_map<std::uint64_t, std::size_t> pos;
  pos.reserve(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    if (!pos.try_emplace(t.nodes[i].id, i).second) {
      fail(t, describe(t.nodes[i]) + ": node id " + std::to_string(t.nodes[i].id) +
                  " is used twice (also by " + describe(t.nodes[pos[t.nodes[i].id]]) + ")");
    }
  }
  return pos;
}

// Appends the deps in `ids`, skipping those already listed (stamp[p] == owner + 1).
void add_deps(const EtTrace& t, std::size_t owner, const std::vector<std::uint64_t>& ids, bool ctrl,
              const std::unordered_map<std::uint64_t, std::size_t>& pos,
              std::vector<std::size_t>& stamp, std::vector<TraceDep>& out) {
  for (std::uint64_t id : ids) {
    auto it = pos.find(id);
    if (it == pos.end()) {
      fail(t, describe(t.nodes[owner]) + " depends on node " + std::to_string(id) +
                  ", which is not in the trace");
    }
    if (stamp[it->second] != owner + 1) {
      stamp[it->second] = owner + 1;
      out.push_back(TraceDep{it->second, ctrl});
    }
  }
}

// Follows unresolved dependencies from `start` until a node repeats: that loop is a cycle.
[[noreturn]] void report_cycle(const EtTrace& t, const TraceOrder& o,
                               const std::vector<std::size_t>& pending, std::size_t start) {
  std::vector<std::size_t> path;
  std::vector<std::size_t> seen_at(t.nodes.size(), SIZE_MAX);
  std::size_t v = start;
  while (seen_at[v] == SIZE_MAX) {
    seen_at[v] = path.size();
    path.push_back(v);
    v = std::find_if(o.deps[v].begin(), o.deps[v].end(), [&](const TraceDep& d) {
          return pending[d.pos] > 0;
        })->pos;
  }
  std::string text;
  const std::size_t first = seen_at[v];
  for (std::size_t i = first; i < path.size() && i < first + kCycleNodesShown; ++i) {
    text += describe(t.nodes[path[i]]) + " -> ";
  }
  text += path.size() - first > kCycleNodesShown ? "... -> " : "";
  fail(t, "dependency cycle: " + text + describe(t.nodes[v]) + " (each waits for the next)");
}

// Resolves every node's deps to positions (o.deps); returns each node's dependents.
std::vector<std::vector<std::size_t>> link(const EtTrace& t, TraceOrder& o) {
  const auto pos = index_ids(t);
  const std::size_t n = t.nodes.size();
  o.deps.resize(n);
  std::vector<std::size_t> stamp(n, 0);
  std::vector<std::vector<std::size_t>> dependents(n);
  for (std::size_t i = 0; i < n; ++i) {
    add_deps(t, i, t.nodes[i].data_deps, false, pos, stamp, o.deps[i]);
    add_deps(t, i, t.nodes[i].ctrl_deps, true, pos, stamp, o.deps[i]);
    for (const TraceDep& d : o.deps[i]) {
      dependents[d.pos].push_back(i);
    }
  }
  return dependents;
}

}  // namespace

// Kahn's algorithm, always taking the ready node that comes first in the file.
TraceOrder order_trace(const EtTrace& t) {
  TraceOrder o;
  const auto dependents = link(t, o);
  const std::size_t n = t.nodes.size();
  std::vector<std::size_t> pending(n);  // unresolved dependencies per node
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = o.deps[i].size();
    if (pending[i] == 0) {
      ready.push(i);
    }
  }
  o.order.reserve(n);
  while (!ready.empty()) {
    o.order.push_back(ready.top());
    ready.pop();
    for (std::size_t w : dependents[o.order.back()]) {
      if (--pending[w] == 0) {
        ready.push(w);
      }
    }
  }
  if (o.order.size() != n) {
    auto stuck = std::find_if(pending.begin(), pending.end(), [](std::size_t p) { return p > 0; });
    report_cycle(t, o, pending, static_cast<std::size_t>(stuck - pending.begin()));
  }
  return o;
}

}  // namespace tessera::graph::chakra
