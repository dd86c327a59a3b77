// SPDX-License-Identifier: Apache-2.0
// Dependency resolution for one trace: node ids -> positions, and a topological order.
#pragma once

#include <cstddef>
#include <vector>

#include "graph/chakra/et_trace.h"

namespace tessera::graph::chakra {

struct TraceDep {
  std::size_t pos = 0;  // index into EtTrace::nodes
  bool ctrl = false;    // from ctrl_deps (and not also a data dep)
};

struct TraceOrder {
  std::vector<std::vector<TraceDep>> deps;  // per node (file position): data deps first
  std::vector<std::size_t> order;           // positions, dependencies before dependents
};

// Contract: duplicates within a node's deps are removed (first occurrence kept); the order
// keeps file order wherever the dependencies allow, so an already ordered trace keeps its
// order. Throws base::InputError naming the file and node on a duplicate node id, a
// dependency on a missing id, or a cycle (the message spells the cycle out).
TraceOrder order_trace(const EtTrace& t);

}  // namespace tessera::graph::chakra
