// SPDX-License-Identifier: Apache-2.0
// Writing Tessera's per-rank execution graphs as Chakra execution traces that ASTRA-sim
// (and every Chakra tool) reads: <prefix>.<rank>.et plus <prefix>.groups.json.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "graph/exec_graph.h"

namespace tessera::graph::chakra {

inline constexpr const char* kEtVersion = "0.0.4";

struct ExportOptions {
  // Adds each node's predecessor on its in-order stream (compute, tp, dp) as a ctrl dep
  // (unless it is already a data dep), so that tools without streams keep Tessera's order.
  bool stream_order_ctrl_deps = true;
  // For a rank whose RankGraph is its class's shared graph: maps the graph's group index /
  // peer rank to this rank's own. Empty: identity (the graph is the rank's own).
  std::function<std::int32_t(std::int32_t)> group_of;
  std::function<std::int32_t(std::int32_t)> peer_of;
  // Adds the `tessera.` attributes (tessera_attrs.h) that make a read-back trace simulate
  // exactly like the graph; `precision` is the step's compute precision they record.
  bool tessera_attrs = true;
  base::DType precision = base::DType::kBF16;
};

// Contract: writes <prefix>.<rank>.et: GlobalMetadata (version kEtVersion), then node i of
// `rg` as Chakra node id i, with data_deps = its dependencies. Attributes (integer variant
// in brackets; every node also carries is_cpu_op = false [bool]):
//   COMP_NODE       num_ops = flops [int64], tensor_size = bytes [uint64], each at least 1
//                   (ASTRA-sim's roofline divides 0 by 0 or hangs on 0; see the .cpp),
//                   duration_micros = fixed_duration in us (rounded) when set
//   COMM_COLL_NODE  comm_type [int64], comm_size [int64] (all-gather: bytes / group size,
//                   the per-rank shard), pg_name = group index + 1 [string]
//   COMM_SEND_NODE  comm_src = rank, comm_dst = peer, comm_tag [int32; int64 if larger],
//   COMM_RECV_NODE  comm_src = peer, comm_dst = rank, same tag; comm_size = bytes [int64]
// With options.tessera_attrs, nodes also carry what the simulator needs and Chakra has no
// field for (op class, GEMM dims, dtype, exact FLOPs/bytes, fixed duration in ps, memory,
// stream, phase, microbatch, layer), and the metadata the rank's stage, static memory, the
// step's FLOPs/tokens and, per group it uses, the group's kind and ring order
// (tessera_attrs.h); read_chakra applies them.
// `graph` supplies names and groups. Streams the file; throws base::InputError naming the
// path when it cannot be written.
void write_rank(const ExecGraph& graph, const RankGraph& rg, std::int32_t rank,
                const std::string& prefix, const ExportOptions& options = {});

// Every rank (each must be its class's representative: synthesize with
// share_rank_classes = false, or call write_rank with the relabelling) and, when the graph
// has groups, <prefix>.groups.json. Throws base::InternalError for a shared class.
void write_chakra(const ExecGraph& graph, const std::string& prefix,
                  const ExportOptions& options = {});

}  // namespace tessera::graph::chakra
