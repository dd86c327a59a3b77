// SPDX-License-Identifier: Apache-2.0
// The `tessera.`-prefixed attributes the writer adds beside Chakra's standard ones, so that a
// Tessera trace read back simulates exactly like the graph it came from (other tools ignore
// unknown attributes). Names, layouts, and the text -> enum mapping of the metadata.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "graph/exec_graph.h"

namespace tessera::graph::chakra::tattr {

// Node attributes. `tessera.node` packs what every node has into one int64 list (one
// attribute name per node keeps traces ~1.5x, not 3x, the size of plain Chakra):
//   [stream, phase, microbatch + 1, layer + 1, mem_alloc, mem_free]      every node
//   [..., op, dtype]                                                     compute nodes
//   [..., op, dtype, m, n, k, batch]                                     GEMMs, attention
// enums as their exec_graph.h / dtype.h values. The others appear only where needed: exact
// flops/bytes where num_ops/tensor_size/comm_size do not carry them, the fixed duration,
// the causal mask of an attention node.
inline constexpr const char* kNode = "tessera.node";    // int64 list, above
inline constexpr const char* kFlops = "tessera.flops";  // double
inline constexpr const char* kBytes = "tessera.bytes";  // double (Node::bytes)
// [comm_alloc, comm_free] where either is nonzero: the communication-buffer part of memory.
inline constexpr const char* kCommMemory = "tessera.comm_memory";  // int64 list
inline constexpr const char* kDurationPs = "tessera.duration_ps";  // int64, fixed_duration
inline constexpr const char* kCommSms = "tessera.comm_sms";        // int64, Node::comm_sms > 0
inline constexpr const char* kCausal = "tessera.causal";           // int64 1, causal attention
inline constexpr std::size_t kNodeCommon = 6;                      // entries every node has
inline constexpr std::size_t kNodeCompute = 8;
inline constexpr std::size_t kNodeGemm = 12;

// GlobalMetadata attributes.
inline constexpr const char* kProducer = "tessera.producer";             // string "tessera"
inline constexpr const char* kRank = "tessera.rank";                     // int64
inline constexpr const char* kStage = "tessera.stage";                   // int64
inline constexpr const char* kStaticMemory = "tessera.static_memory";    // int64 bytes
inline constexpr const char* kWeightMemory = "tessera.weight_memory";    // int64 bytes
inline constexpr const char* kGradMemory = "tessera.grad_memory";        // int64 bytes
inline constexpr const char* kPrecision = "tessera.precision";           // string, dtype_name
inline constexpr const char* kModelFlops = "tessera.model_flops";        // double
inline constexpr const char* kHardwareFlops = "tessera.hardware_flops";  // double
inline constexpr const char* kTokens = "tessera.tokens";                 // double
inline constexpr const char* kCausalAttentionFlops = "tessera.causal_attention_flops";  // double
inline constexpr const char* kFlopsConvention = "tessera.flops_convention";             // string
inline constexpr const char* kCudaGraphs = "tessera.cuda_graphs";  // int64 1: CUDA-graph launches
inline constexpr const char* kAttentionFa2 = "tessera.attention_fa2";       // int64 1: FA2 kernels
inline constexpr const char* kFp8BlockScaled = "tessera.fp8_block_scaled";  // int64 1: MXFP8
// Per group the rank uses, <pg> its pg_name: kind (group_kind_name) and ranks in ring order.
inline constexpr std::string_view kGroupKindPrefix = "tessera.group_kind.";    // string
inline constexpr std::string_view kGroupRanksPrefix = "tessera.group_ranks.";  // int64 list

std::optional<GroupKind> parse_group_kind(std::string_view name);
std::optional<base::DType> parse_dtype(std::string_view name);

}  // namespace tessera::graph::chakra::tattr
