// SPDX-License-Identifier: Apache-2.0
// Reading Chakra execution traces (one <prefix>.<rank>.et per rank, as ASTRA-sim and other
// tools write them) into Tessera's per-rank execution graphs, to be simulated like a
// synthesized step.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "graph/chakra/comm_groups.h"
#include "graph/chakra/et_trace.h"
#include "graph/exec_graph.h"

namespace tessera::graph::chakra {

struct ImportOptions {
  // COMP_NODE timing: true = every compute node takes its duration_micros; false = nodes
  // with num_ops or tensor_size are timed by the roofline model (flops/bytes), the others
  // (and CPU ops) by duration_micros.
  bool use_durations = false;
  // 0: count the files <prefix>.0.et, <prefix>.1.et, ... until one is missing.
  std::int32_t num_ranks = 0;
};

// What read_chakra learnt about the traces' origin.
struct ImportInfo {
  bool tessera = false;                        // written by Tessera (tessera.producer)
  base::DType precision = base::DType::kBF16;  // tessera.precision, for peak FLOP/s
};

std::string et_path(const std::string& prefix, std::int32_t rank);  // "<prefix>.<rank>.et"

// One file in neutral form (gzip accepted). Throws base::InputError naming the file and the
// byte offset or node at fault; never crashes on arbitrary bytes.
EtTrace read_et_file(const std::string& path);

// Contract: reads every rank's file and <prefix>.groups.json when present, and returns an
// ExecGraph with one rank class per rank (class_of_rank[r] = class_rep[r] = r).
//  - COMP_NODE -> compute (num_ops -> flops, tensor_size -> bytes; see use_durations);
//    MEM_LOAD/MEM_STORE -> a copy of tensor_size bytes; METADATA_NODE -> a zero-time node.
//  - COMM_COLL_NODE -> collective: comm_type (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
//    REDUCE_SCATTER_BLOCK -> reduce-scatter, ALL_TO_ALL, BROADCAST, BARRIER -> 0-byte
//    all-reduce; REDUCE, GATHER, SCATTER are rejected), comm_size in bytes (all-gather: the
//    per-rank shard, so bytes = comm_size x group size), group from pg_name (GroupTable).
//  - COMM_SEND_NODE / COMM_RECV_NODE -> send (comm_dst) / recv (comm_src), comm_tag, comm_size.
//  - dependencies: data_deps and ctrl_deps (ASTRA-sim waits for both); nodes are put in a
//    topological order that keeps file order where possible. Compute nodes run on the
//    compute stream, collectives on the dp stream (both in that order); sends and receives
//    on the pipeline streams. A ctrl dep already implied by that stream order is dropped.
//  - every group's kind is GroupKind::kDP (the JSON does not say).
//  - Tessera's own traces (tessera_attrs.h) restore everything else the simulator reads:
//    op class, GEMM dims, dtype, exact FLOPs and bytes, fixed durations in ps, memory,
//    streams, phases, microbatches, layers; per rank its stage and static memory; group
//    kinds and ring order; the step's FLOPs and tokens. Simulated with rendezvous sends,
//    such a round trip gives the direct simulation's results exactly.
// Integer attributes may use any integer variant. Throws base::InputError naming the file
// and node on a missing or ill-typed attribute, an unknown node or collective type, a
// dependency on a missing node id, a cycle, or a peer outside the ranks.
ExecGraph read_chakra(const std::string& prefix, const ImportOptions& options = {},
                      ImportInfo* info = nullptr);

// The same for traces that are not files (the fuzz target's bytes): rank_trace(r) gives rank
// r's trace for r in [0, options.num_ranks), which must be > 0, and `groups` what
// read_comm_groups would have read, if anything. Throws what read_chakra throws.
ExecGraph import_chakra(const std::function<EtTrace(std::int32_t)>& rank_trace,
                        const ImportOptions& options,
                        std::optional<CommGroups> groups = std::nullopt);

}  // namespace tessera::graph::chakra
