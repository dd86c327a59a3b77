// SPDX-License-Identifier: Apache-2.0
// The `tessera.`-prefixed attributes the writer adds beside Chakra's standard ones, so that a
// Tessera trace read back simulates exactly like the graph it came from (other tools ignore
// unknown attributes). Names, and the enum <-> text mapping both sides use.
#pragma once

#include <optional>
#include <string_view>

#include "synth/graph/exec_graph.h"

namespace tessera::graph::chakra::tattr {

// Node attributes. Exact values where the standard ones round: flops/bytes only when
// num_ops/tensor_size/comm_size do not already carry them exactly.
inline constexpr const char* kOp = "tessera.op";                   // string, op_class_name
inline constexpr const char* kGemm = "tessera.gemm";               // int64 list m, n, k, batch
inline constexpr const char* kDType = "tessera.dtype";             // string, dtype_name
inline constexpr const char* kFlops = "tessera.flops";             // double
inline constexpr const char* kBytes = "tessera.bytes";             // double (Node::bytes)
inline constexpr const char* kDurationPs = "tessera.duration_ps";  // int64, fixed_duration
inline constexpr const char* kMemAlloc = "tessera.mem_alloc";      // int64
inline constexpr const char* kMemFree = "tessera.mem_free";        // int64
inline constexpr const char* kStream = "tessera.stream";           // string, stream_name
inline constexpr const char* kPhase = "tessera.phase";             // string, phase_name
inline constexpr const char* kMicrobatch = "tessera.microbatch";   // int64
inline constexpr const char* kLayer = "tessera.layer";             // int64

// GlobalMetadata attributes.
inline constexpr const char* kProducer = "tessera.producer";                 // string "tessera"
inline constexpr const char* kRank = "tessera.rank";                         // int64
inline constexpr const char* kStage = "tessera.stage";                       // int64
inline constexpr const char* kStaticMemory = "tessera.static_memory";        // int64 bytes
inline constexpr const char* kPrecision = "tessera.precision";               // string, dtype_name
inline constexpr const char* kModelFlops = "tessera.model_flops";            // double
inline constexpr const char* kHardwareFlops = "tessera.hardware_flops";      // double
inline constexpr const char* kTokens = "tessera.tokens";                     // double
inline constexpr const char* kFlopsConvention = "tessera.flops_convention";  // string
// Per group the rank uses, <pg> its pg_name: kind (group_kind_name) and ranks in ring order.
inline constexpr std::string_view kGroupKindPrefix = "tessera.group_kind.";    // string
inline constexpr std::string_view kGroupRanksPrefix = "tessera.group_ranks.";  // int64 list

std::optional<OpClass> parse_op_class(std::string_view name);
std::optional<Stream> parse_stream(std::string_view name);
std::optional<Phase> parse_phase(std::string_view name);
std::optional<GroupKind> parse_group_kind(std::string_view name);
std::optional<base::DType> parse_dtype(std::string_view name);

}  // namespace tessera::graph::chakra::tattr
