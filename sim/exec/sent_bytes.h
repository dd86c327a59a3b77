// SPDX-License-Identifier: Apache-2.0
// The bytes each rank sends in one step, per group kind, from the graph alone (the same on
// every hardware): a collective counts the bytes one member puts on the wire in a ring
// algorithm, a pipeline send its payload.
#pragma once

#include <array>
#include <vector>

#include "graph/exec_graph.h"

namespace tessera::exec {

using SentBytes = std::array<double, graph::kNumGroupKinds>;

// Bytes one member of an n-rank group sends for a collective of payload `bytes` (NCCL's
// convention, graph/exec_graph.h): all-reduce 2(n-1)/n, all-gather, reduce-scatter and
// all-to-all (n-1)/n, broadcast 1 (each rank but the last forwards the whole buffer),
// send-recv 1 (each member sends its buffer to the next).
double ring_sent_bytes(graph::CollType c, int n, double bytes);

// Per rank class (ExecGraph::classes), what one of its ranks sends.
std::vector<SentBytes> sent_bytes_per_class(const graph::ExecGraph& g);

}  // namespace tessera::exec
