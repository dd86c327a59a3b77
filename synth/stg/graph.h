// SPDX-License-Identifier: Apache-2.0
// The symbolic tensor graph of one model block (embedding, decoder layer, or head): tensors
// with distributed layouts and the operations between them. Adding an operation checks the
// full shape of every operand and inserts the collectives that turn each producer's layout
// into the layout its consumer needs (the producer/consumer matcher); no collective is placed
// by hand. The backward graph is derived from the forward one (autodiff.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/stg/layout.h"

namespace tessera::synth::stg {

using base::DType;
using TensorId = std::int32_t;
using OpId = std::int32_t;

enum class OpKind : unsigned char {
  kEinsum,
  kNorm,
  kGelu,
  kSwiglu,
  kDropout,
  kDropoutAdd,
  kAdd,
  kSoftmax,
  kAttention,
  kEmbedding,
  kLoss,
  kSplit,
  kExpand,
  kBiasAdd,  // a bias added in a kernel of its own (Megatron's local linear layers)
  kCollective,
  kFp8Cast,    // quantization to FP8 (docs/fp8.md); its gradient passes straight through
  kFp8Amax,    // an amax pass (current scaling) or an amax-history and scale update
  kRouter,     // MoE router: expert scores, top-k, aux-loss terms (moe_ops.cpp)
  kPermute,    // MoE dispatch: each token's row copied once per chosen expert
  kUnpermute,  // MoE combine: the experts' rows weighted by their probabilities, summed
  kConcat,     // parts copied side by side along the last dimension (MLA's keys)
  kGradient,   // kGradient: backward kernels
};

struct Tensor {
  std::string name;
  Layout layout;
  DType dtype = DType::kBF16;
  bool weight = false;       // a parameter (static memory)
  bool weight_grad = false;  // the gradient of a parameter (accumulated in static memory)
  bool expert = false;       // a routed expert's parameter: reduced over EDP, not DP
  TensorId alias_of = -1;    // shares storage with this tensor (views, in-place collectives)
  OpId producer = -1;
};

// What one FP8 quantization writes besides the row-wise copy: a column-wise (transposed) copy
// when the backward GEMMs need one, and the scales, in bytes per element of each copy.
struct Fp8CastSpec {
  bool columnwise = false;
  double scale_bytes_per_element = 0.0;
};

struct Op {
  OpKind kind = OpKind::kEinsum;
  std::string name;
  std::vector<TensorId> in;
  std::vector<TensorId> out;
  graph::Phase phase = graph::Phase::kForward;
  // Costs, filled when the op is created from the local (per-device) shapes.
  graph::OpClass cls = graph::OpClass::kElementwise;
  double flops = 0.0;        // executed by the kernel
  double model_flops = 0.0;  // MFU convention: matrix FLOPs, attention without causal halving
  double bytes = 0.0;        // HBM traffic
  graph::GemmDims gemm;
  // Collectives.
  graph::CollType coll = graph::CollType::kAllReduce;
  std::uint8_t axis = kReplicated;
  // Forward bookkeeping for autodiff and recompute.
  std::string spec;             // einsum "ab,bc->ac"
  bool causal = false;          // attention masking
  bool attention_core = false;  // recomputed under selective recompute
  AxisMask query_share = 0;     // kAttention: see Graph::attention
  // Ring attention (Graph::ring_attention) and its backward kernel: the keys and values go
  // around the ring of `ring` (a mesh axis) in `ring_size` steps; lowering unrolls them.
  std::uint8_t ring = kReplicated;
  int ring_size = 1;
  // FP8 linear layers: the GEMM runs in FP8 (its node carries fp8), and the weight gradient
  // reads `fp8_col`, the forward input's column-wise FP8 copy (docs/fp8.md).
  // The backward quantizes the output gradient with `fp8_grad` (after an amax pass when
  // `fp8_grad_amax`: current scaling).
  bool fp8 = false;
  TensorId fp8_col = -1;
  Fp8CastSpec fp8_grad;
  bool fp8_grad_amax = false;
  // A bias is added to in[0] here (kBiasAdd, or fused into a GeLU or bias-dropout-add):
  // backward reduces in[0]'s gradient over the tokens in a kernel of its own.
  bool bias = false;
  // kLoss: Megatron's unfused vocabulary-parallel cross-entropy, pass by pass (fp32 copy of
  // the logits, max, subtract, exp, sum, divide; backward: scale, cast back).
  bool unfused_loss = false;
  // kNorm, kSwiglu: run as PyTorch eager's op-by-op chain (Graph::norm); backward too.
  bool eager = false;
};

// The HBM traffic PyTorch eager mode adds to a norm (RMSNorm, per element of its input) or a
// SwiGLU (per element of its output), forward or backward, over the one fused kernel's
// (docs/eager_elementwise.md): the chain of single-op kernels and its fp32 intermediates.
double eager_extra_bytes(OpKind kind, bool backward, DType dtype, std::int64_t elements);

struct EinsumSpec;

class Graph {
 public:
  explicit Graph(SymbolTable sym) : sym_(std::move(sym)) {}

  [[nodiscard]] const SymbolTable& symbols() const { return sym_; }
  [[nodiscard]] const Tensor& tensor(TensorId t) const {
    return tensors_[static_cast<std::size_t>(t)];
  }
  [[nodiscard]] const Op& op(OpId o) const { return ops_[static_cast<std::size_t>(o)]; }
  Op& mutable_op(OpId o) { return ops_[static_cast<std::size_t>(o)]; }
  [[nodiscard]] const std::vector<Op>& ops() const { return ops_; }
  [[nodiscard]] const std::vector<Tensor>& tensors() const { return tensors_; }
  [[nodiscard]] std::int64_t bytes_of(TensorId t) const;
  [[nodiscard]] std::int64_t elements_of(TensorId t) const;

  // Leaves.
  TensorId input(const std::string& name, Layout layout, DType dtype);
  TensorId weight(const std::string& name, Layout layout, DType dtype);
  // A routed expert's weight (model.moe): its gradient is summed over expert data parallelism.
  TensorId expert_weight(const std::string& name, Layout layout, DType dtype);

  // Forward operations. Each returns its output tensor.
  TensorId einsum(const std::string& name, const std::string& spec, TensorId a, TensorId b);
  // `eager`: PyTorch eager mode's chain of single-op kernels with fp32 intermediates in place
  // of one fused kernel (norms and SwiGLU; docs/eager_elementwise.md), counted as one kernel
  // whose HBM traffic is the whole chain's.
  TensorId norm(const std::string& name, TensorId x, TensorId gamma, char normalized,
                bool eager = false);
  TensorId unary(OpKind kind, const std::string& name, TensorId x, char reduced = 0);
  TensorId swiglu(const std::string& name, TensorId x, char out_label, bool eager = false);
  std::pair<TensorId, TensorId> dropout(const std::string& name, TensorId x);  // (out, mask)
  // Fused bias-dropout-add onto the residual stream; `x` is brought to the residual's layout.
  TensorId dropout_add(const std::string& name, TensorId x, TensorId residual, bool dropout);
  TensorId add(const std::string& name, TensorId a, TensorId b);
  // x + a bias over x's last dimension, in a kernel of its own (reads x, writes the sum).
  TensorId bias_add(const std::string& name, TensorId x);
  // The main-gradient accumulation of a weight gradient `dw` (main_grad.add_: reads dw and
  // the buffer, writes the buffer), a tensor of `main` type with dw's layout.
  TensorId accumulate_grad(const std::string& name, TensorId dw, DType main);
  // `query_share`: the queries are this rank's share of the sequence over these axes (context
  // parallelism's gathered keys): the key and value gradients are partial sums over them.
  // `window` > 0: causal sliding-window attention, each query attending to the `window`
  // latest keys, itself included (docs/sliding_window.md).
  TensorId attention(const std::string& name, TensorId q, TensorId k, TensorId v, bool causal,
                     AxisMask query_share = 0, std::int64_t window = 0);
  // Ring attention over `axis` (context parallelism's p2p, docs/context_parallel.md §4): q,
  // k and v are this rank's share of the sequence (`ranks` shares in all, load-balanced);
  // the keys and values visit every rank of the ring, so the op computes the local queries
  // against the whole sequence, `ranks` times attention(q, k, v)'s work.
  TensorId ring_attention(const std::string& name, TensorId q, TensorId k, TensorId v, bool causal,
                          std::uint8_t axis, int ranks);
  TensorId embedding(const std::string& name, TensorId ids, TensorId table, Layout out);
  // `fused`: one kernel each way (Megatron-Core's cross_entropy_loss_fusion); otherwise
  // Megatron's unfused cross-entropy, pass by pass (docs/formulas.md §4.2).
  TensorId loss(const std::string& name, TensorId logits, char vocab, bool fused);
  std::vector<TensorId> split(const std::string& name, TensorId x,
                              const std::vector<Layout>& parts);
  TensorId expand(const std::string& name, TensorId x, Layout out);
  // A view of x under other dimension labels and shards holding the same local elements
  // (the MoE tokens [b, s, h] as [edp, ep, tokens, h], moe.cpp); its gradient is relabelled
  // back.
  TensorId relabel(const std::string& name, TensorId x, Layout out);
  // `parts` copied side by side along their last dimension into `out` (one kernel).
  TensorId concat(const std::string& name, const std::vector<TensorId>& parts, Layout out);
  // FP8 GEMM: a and b are read as FP8 (weights through their FP8 copy, 1 byte per element),
  // the output is `out` (bf16); the op is marked fp8.
  TensorId einsum_fp8(const std::string& name, const std::string& spec, TensorId a, TensorId b,
                      DType out);
  // Quantizes x to FP8: reads x, writes the row-wise copy (returned first) and, with
  // spec.columnwise, a column-wise copy (second; else the row-wise one again). `amax`, when
  // given, is a current-scaling amax the kernel waits for.
  std::pair<TensorId, TensorId> fp8_cast(const std::string& name, TensorId x, Fp8CastSpec spec,
                                         TensorId amax = -1);
  // An amax pass over x (current scaling): reads x, writes one fp32 value.
  TensorId fp8_amax(const std::string& name, TensorId x);

  // Mixture of experts (moe_ops.cpp, docs/moe.md). The router turns logits [.., x] (one score
  // per expert) into fp32 probabilities over the experts, zero off each token's top k, and a
  // routing map (1 byte per token and expert): returned (probs, map).
  std::pair<TensorId, TensorId> route(const std::string& name, TensorId logits);
  // Dispatch: tokens x to `rows` (labels "nxirh": expert-data-parallel group, experts,
  // expert-tensor group, rows per expert, hidden) by `map`. With the all-to-all dispatcher a
  // rank permutes its own tokens x [b, s, h]: the rows stay where they are, sharded over the
  // expert axes. With the all-gather one x is the EP group's gathered tokens
  // [n, j, o, h] and the rows its experts' (x sharded over EP): the input's gradient is then
  // a partial sum over EP, each rank adding its experts' rows (moe.cpp).
  TensorId permute(const std::string& name, TensorId x, TensorId map, const Layout& rows);
  // Combine: the experts' output y, first brought to `rows` (the permute's layout), each row
  // weighted by `probs` and summed per token into `out` (the permute's input layout); a
  // partial sum over the axis that shards the rows' experts.
  TensorId unpermute(const std::string& name, TensorId y, TensorId probs, const Layout& rows,
                     Layout out);

  // The matcher: returns `x` in layout `target`, inserting collectives (and free local
  // slices) as needed. Identity when the layouts already agree.
  TensorId convert(TensorId x, Layout target, graph::Phase phase = graph::Phase::kForward);

  // Low-level: appends an op (used by autodiff for gradient kernels).
  OpId append(Op op);
  TensorId new_tensor(std::string name, Layout layout, DType dtype);
  void mark_attention_core(OpId first, OpId last);  // ops [first, last]
  void set_phase(graph::Phase p) { phase_ = p; }
  void set_producer(TensorId t, OpId o) { tensors_[static_cast<std::size_t>(t)].producer = o; }

 private:
  TensorId collective(TensorId x, graph::CollType type, std::uint8_t axis, Layout out);
  // The matcher's steps (convert): partial sums resolved, shards exchanged (all-to-all).
  TensorId reduce_partials(TensorId x, const Layout& target);
  TensorId exchange_shards(TensorId x, const Layout& target);
  TensorId einsum_impl(const std::string& name, const std::string& spec, TensorId a, TensorId b,
                       std::optional<DType> fp8_out);
  graph::GemmDims einsum_dims(const EinsumSpec& s, TensorId a, TensorId b, double& all) const;
  // An op in the current phase whose HBM traffic is the bytes of its operands and results.
  Op streaming_op(OpKind kind, const std::string& name, std::vector<TensorId> in,
                  std::vector<TensorId> out, graph::OpClass cls, double flops) const;
  Layout einsum_output(const std::string& spec, const Layout& a, const Layout& b) const;
  void check_labels(TensorId t, const std::string& labels, const std::string& where) const;

  SymbolTable sym_;
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  graph::Phase phase_ = graph::Phase::kForward;
};

// Parses "ab,bc->ac" into its three label strings.
struct EinsumSpec {
  std::string a, b, c;
};
EinsumSpec parse_einsum(const std::string& spec);

}  // namespace tessera::synth::stg
