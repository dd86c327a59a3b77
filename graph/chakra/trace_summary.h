// SPDX-License-Identifier: Apache-2.0
// What one Chakra trace holds, by the numbers `tessera inspect` prints: node counts per type,
// compute totals (num_ops, tensor_size) and, for Tessera's own traces, compute nodes per op
// class (from tessera.node), collectives per type with their comm_size and groups, and the
// point-to-point messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "graph/chakra/et_trace.h"

namespace tessera::graph::chakra {

struct CommVolume {
  std::size_t count = 0;
  std::int64_t bytes = 0;        // comm_size summed
  std::set<std::string> groups;  // pg_name values (collectives; "0" without one)
};

struct TraceSummary {
  std::map<std::string, std::size_t> node_types;  // "COMP_NODE" -> count
  std::map<std::string, std::size_t> op_classes;  // "gemm" -> count (tessera.node only)
  std::map<std::string, CommVolume> collectives;  // "ALL_REDUCE" -> volume
  CommVolume sends;
  CommVolume recvs;
  std::int64_t num_ops = 0;       // COMP_NODE num_ops summed
  std::int64_t tensor_bytes = 0;  // COMP_NODE tensor_size summed
};

// base::InputError naming the file and node when an attribute has the wrong type.
TraceSummary summarize_trace(const EtTrace& t);

}  // namespace tessera::graph::chakra
