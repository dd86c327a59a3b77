// SPDX-License-Identifier: Apache-2.0
// One rank's trace in neutral form -> its RankGraph (the mapping chakra_reader.h documents).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/chakra/chakra_reader.h"
#include "graph/chakra/comm_groups.h"
#include "graph/chakra/et_trace.h"
#include "graph/exec_graph.h"

namespace tessera::graph::chakra {

// Contract: options.num_ranks must be resolved (> 0). Node names are interned into
// `graph`. A collective's `group` is GroupTable's provisional index and an all-gather's
// bytes are its per-rank comm_size: read_chakra fixes both once every rank is read.
// `tessera.` attributes (tessera_attrs.h) override the standard reading; the nodes whose
// bytes came exact from tessera.bytes (no all-gather scaling) are appended to exact_bytes.
RankGraph convert_rank(const EtTrace& t, std::int32_t rank, GroupTable& groups, ExecGraph& graph,
                       const ImportOptions& options, std::vector<NodeId>* exact_bytes = nullptr);

}  // namespace tessera::graph::chakra
