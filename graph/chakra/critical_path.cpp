// SPDX-License-Identifier: Apache-2.0
#include "graph/chakra/critical_path.h"

#include <algorithm>
#include <vector>

namespace tessera::graph::chakra {

namespace {

// The compute a node adds to a chain: its num_ops when it is a COMP_NODE, never negative.
std::int64_t compute_ops(const EtTrace& t, const EtNode& n) {
  if (n.type != static_cast<int>(EtNodeType::kComp)) {
    return 0;
  }
  return std::max<std::int64_t>(int_attr(t, n, "num_ops").value_or(0), 0);
}

}  // namespace

CriticalPath critical_path(const EtTrace& t, const TraceOrder& order) {
  std::vector<std::size_t> len(t.nodes.size(), 0);
  std::vector<std::uint64_t> time(t.nodes.size(), 0);
  std::vector<std::int64_t> ops(t.nodes.size(), 0);
  CriticalPath best;
  for (std::size_t pos : order.order) {
    std::size_t l = 0;
    std::uint64_t d = 0;
    std::int64_t f = 0;
    for (const TraceDep& dep : order.deps[pos]) {
      l = std::max(l, len[dep.pos]);
      d = std::max(d, time[dep.pos]);
      f = std::max(f, ops[dep.pos]);
    }
    const EtNode& n = t.nodes[pos];
    len[pos] = l + 1;
    time[pos] = d + n.duration_micros;
    ops[pos] = f + compute_ops(t, n);
    best.nodes = std::max(best.nodes, len[pos]);
    best.micros = std::max(best.micros, time[pos]);
    best.num_ops = std::max(best.num_ops, ops[pos]);
  }
  return best;
}

}  // namespace tessera::graph::chakra
