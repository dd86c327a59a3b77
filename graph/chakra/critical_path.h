// SPDX-License-Identifier: Apache-2.0
// The critical path of one Chakra trace: the longest dependency chain by node count, by
// recorded durations, and the chain with the most compute num_ops (compute on the critical
// path when compute dominates). Data and control dependencies both count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph/chakra/et_order.h"
#include "graph/chakra/et_trace.h"

namespace tessera::graph::chakra {

// Each figure is the maximum over chains on its own: the three chains may differ.
struct CriticalPath {
  std::size_t nodes = 0;     // the longest chain's node count
  std::uint64_t micros = 0;  // the most duration_micros along one chain
  std::int64_t num_ops = 0;  // the most COMP_NODE num_ops along one chain (negative: 0)
};

// `order` is order_trace(t). base::InputError when a num_ops attribute is not an integer.
CriticalPath critical_path(const EtTrace& t, const TraceOrder& order);

}  // namespace tessera::graph::chakra
