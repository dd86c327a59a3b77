// SPDX-License-Identifier: Apache-2.0
// The numeric per-rank execution graph of one training step: compute nodes with FLOPs and
// bytes, communication nodes with collective type, size and group, data dependencies in CSR
// form, and a stream per node. Hardware-independent: the simulator times it on any profile.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/dtype.h"
#include "base/units.h"
#include "graph/expert_loads.h"

namespace tessera::graph {

using base::DType;
using NodeId = std::uint32_t;

enum class NodeKind : unsigned char { kCompute, kCollective, kSend, kRecv };

// What a compute node does; the compute model picks its efficiency curve by this.
enum class OpClass : unsigned char {
  kGemm,         // einsum lowered to (batched) GEMM: uses `gemm` dims
  kAttention,    // fused (flash) attention core
  kElementwise,  // activation functions, dropout, residual adds, scaling
  kNorm,         // LayerNorm / RMSNorm
  kSoftmax,
  kEmbedding,  // gather of embedding rows (forward) or scatter-add (backward)
  kLoss,       // vocabulary softmax + cross-entropy
  kOptimizer,  // Adam update over the rank's parameter shard
  kCopy,       // memory copy / cast
};
constexpr int kNumOpClasses = 9;

// Payload convention (NCCL's): `bytes` is the size of the full buffer each member holds after
// the collective (all-reduce: the tensor; all-gather: the gathered output; reduce-scatter:
// the unreduced input; all-to-all: each member's send buffer; broadcast: the tensor;
// send-recv: the buffer each member sends).
// kSendRecv is a ring shift: every member sends its buffer to the next member of the group's
// ring order and receives the previous one's, all at once (ring attention's K/V exchange,
// TE's batched isend/irecv between CP neighbours).
enum class CollType : unsigned char {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};

// Streams execute their nodes in list order, like CUDA streams; different streams overlap.
// Pipeline messages use one stream per direction and side, so that each pair of ranks sees
// its sends and receives in one consistent order (forward activations, backward gradients).
enum class Stream : unsigned char {
  kCompute,
  kTP,
  kDP,
  kPPSendFwd,
  kPPSendBwd,
  kPPRecvFwd,
  kPPRecvBwd,
  kEP,        // expert-parallel all-to-alls (their own communicator beside TP's)
  kDPGather,  // ZeRO-3's parameter all-gathers (FSDP's all-gather stream beside the reductions')
  kCP,        // ring attention's K/V exchanges beside the attention blocks (cp_comm: p2p)
};
constexpr int kNumStreams = 10;

// Compute and collective streams run their nodes in list order. Pipeline sends and receives
// do not: like NCCL point-to-point operations, each one matches its partner by (peer, tag)
// and starts as soon as its dependencies allow, so no message waits behind another.
constexpr bool ordered_stream(Stream s) {
  return s < Stream::kPPSendFwd || s >= Stream::kEP;
}

// Which part of the step a node belongs to, for the breakdown.
enum class Phase : unsigned char { kForward, kBackward, kRecompute, kOptimizer };

// Which parallel dimension a group (and so a collective) serves.
enum class GroupKind : unsigned char { kTP, kDP, kPP, kCP, kEP };
constexpr int kNumGroupKinds = 5;

std::string_view op_class_name(OpClass c);
std::string_view coll_type_name(CollType c);
std::string_view stream_name(Stream s);
std::string_view phase_name(Phase p);
std::string_view group_kind_name(GroupKind k);

// GEMM dimensions as the kernel sees them: batch x (m x k) * (k x n).
struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
};

struct Node {
  double flops = 0.0;          // compute: FLOPs executed (2 per multiply-add)
  double bytes = 0.0;          // compute: HBM bytes read + written; comm: payload (above)
  std::int64_t mem_alloc = 0;  // bytes allocated when the node starts
  std::int64_t mem_free = 0;   // bytes released when the node ends
  // The parts of mem_alloc / mem_free that are communication buffers (collective outputs
  // read within their block); the rest are activations and their gradients.
  std::int64_t comm_alloc = 0;
  std::int64_t comm_free = 0;
  base::SimTime fixed_duration = -1;  // >= 0: use this duration instead of the models
  GemmDims gemm;
  std::uint32_t name = 0;   // index into ExecGraph::names
  std::int32_t group = -1;  // collective: index into ExecGraph::groups
  std::int32_t peer = -1;   // send: destination rank; recv: source rank
  std::int64_t tag = -1;    // send/recv: matching key, equal on both sides
  // Collectives: the SMs the issuer runs it on (TE's userbuffers choose theirs); 0: what the
  // collective library takes (sim/exec/interference.h).
  std::int32_t comm_sms = 0;
  std::int32_t microbatch = -1;
  std::int32_t layer = -1;
  NodeKind kind = NodeKind::kCompute;
  OpClass op = OpClass::kElementwise;
  CollType coll = CollType::kAllReduce;
  Stream stream = Stream::kCompute;
  Phase phase = Phase::kForward;
  DType dtype = DType::kBF16;
  // Attention (kAttention): the kernel skips masked blocks. Its shape is in `gemm`: m = query
  // length, n = key length, k = head dim, batch = sequences x local heads.
  bool causal = false;
  // The framework reads this node's result on the host (an MoE router's token counts, which
  // size the dispatch and the grouped GEMMs): the host thread issues nothing after it until it
  // has finished (sim/exec/host_thread.h).
  bool host_sync = false;
  // The local experts an op the framework runs expert by expert covers (Transformer Engine's
  // GroupedLinear: a GEMM call, a quantizer and a gradient hook per expert); the host pays
  // launch.host_expert for each. 0: one call for all.
  std::int32_t host_experts = 0;
  LoadScale load = LoadScale::kNone;  // skewed MoE routing: which per-rank factor applies
};

struct Group {
  GroupKind kind = GroupKind::kTP;
  std::vector<std::int32_t> ranks;  // in ring order
  // A node-deduplicated token dispatch's group (DeepEP, HybridEP: model.moe.dispatcher
  // deepep, docs/moe.md): its all-to-alls send each other scale-up domain of the group this
  // share of a member's payload, once, to the member there on the sender's rail. 0: plain
  // all-to-alls (or a group inside one domain).
  double domain_share = 0.0;

  // Whether a `c` collective of this group is a node-deduplicated dispatch.
  [[nodiscard]] bool deduplicates(CollType c) const {
    return c == CollType::kAllToAll && domain_share > 0.0;
  }
};

// One rank's nodes in issue order plus dependencies (node i depends on
// deps[dep_begin[i] .. dep_begin[i+1])). Every dependency precedes its dependent.
struct RankGraph {
  std::vector<Node> nodes;
  std::vector<std::uint32_t> dep_begin{0};
  std::vector<NodeId> deps;
  std::int64_t static_memory = 0;  // weights, gradients, optimizer states: held all step
  std::int64_t weight_memory = 0;  // the weights' part of static_memory
  std::int64_t grad_memory = 0;    // the gradients' part (the rest is optimizer state)
  std::int32_t stage = 0;          // pipeline stage, for reports

  NodeId add(const Node& n, std::initializer_list<NodeId> on = {}) {
    return add(n, std::span<const NodeId>(on.begin(), on.size()));
  }
  NodeId add(const Node& n, const std::vector<NodeId>& on) {
    return add(n, std::span<const NodeId>(on));
  }
  NodeId add(const Node& n, std::span<const NodeId> on);
  [[nodiscard]] std::size_t size() const { return nodes.size(); }
  [[nodiscard]] std::pair<const NodeId*, const NodeId*> deps_of(NodeId i) const {
    return {deps.data() + dep_begin[i], deps.data() + dep_begin[i + 1]};
  }
};

// The training setup the step was synthesized for, for the report's configuration fields
// (zero / empty when unknown, as for an imported trace).
struct StepConfig {
  std::int64_t tp = 0, pp = 0, dp = 0;
  std::int64_t cp = 0;  // context parallelism
  bool sp = false;
  std::int64_t micro_batch = 0;   // sequences per microbatch
  std::int64_t global_batch = 0;  // sequences per step
  std::int64_t seq_len = 0;
  std::string recompute;  // "none" | "selective" | "full"
  std::string attention;  // "flash" | "unfused"
};

// What the report needs to turn times into MFU and throughput.
struct StepInfo {
  double model_flops = 0.0;     // per step, all devices, MFU convention (no recompute)
  double hardware_flops = 0.0;  // per step, all devices, including recompute
  double tokens = 0.0;          // tokens per step (global batch x sequence)
  // The part of model_flops spent in causally masked attention (scores and context, forward
  // and backward), counted in full; the causal convention counts it half.
  double causal_attention_flops = 0.0;
  std::string flops_convention;    // how model_flops was counted, for the report
  std::vector<std::string> notes;  // what the reader should know about the setup, one line each
  StepConfig config;
  // Kernels are replayed from captured CUDA graphs (training.cuda_graphs) rather than
  // launched eagerly by the framework, op by op.
  bool cuda_graphs = false;
  // Fused attention runs FlashAttention-2's kernels (training.attention: flash2), timed by the
  // profile's attention.fa2 tables, rather than the platform's best.
  bool attention_fa2 = false;
  // FP8 GEMMs apply MX block scales in the MMA (training.fp8_recipe: mxfp8), timed at the
  // profile's gemm.mxfp8_rate of the per-tensor FP8 rate.
  bool fp8_block_scaled = false;
};

// The graphs of one step. Ranks whose graphs are identical up to relabelling of groups and
// peers share one RankGraph ("rank class"); class_of_rank maps each rank to it.
struct ExecGraph {
  std::int32_t num_ranks = 0;
  std::vector<Group> groups;
  std::vector<RankGraph> classes;
  std::vector<std::int32_t> class_of_rank;
  std::vector<std::int32_t> class_rep;  // class -> the rank whose graph classes[c] literally is
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> name_index;
  StepInfo info;
  ExpertLoads expert_loads;  // skewed MoE routing; empty: every rank at its balanced load

  std::uint32_t intern(std::string_view name);
  [[nodiscard]] const RankGraph& graph_of(std::int32_t rank) const {
    return classes[static_cast<std::size_t>(class_of_rank[static_cast<std::size_t>(rank)])];
  }
};

}  // namespace tessera::graph
