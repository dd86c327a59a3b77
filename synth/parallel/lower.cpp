// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/error.h"
#include "synth/parallel/block_program.h"
#include "synth/parallel/ring_attention.h"

namespace tessera::synth::parallel {

using stg::OpId;
using stg::OpKind;
using stg::TensorId;

namespace {

// A tensor as seen by one lowered op: the original, or its recomputed twin.
struct VTensor {
  TensorId t = -1;
  bool recomputed = false;
  auto operator<=>(const VTensor&) const = default;
};

class Lowering {
 public:
  Lowering(const models::Block& b, Recompute mode, bool split)
      : b_(b), g_(b.graph), mode_(mode), split_(split), op_rerun_(op_level_reruns()) {}
  BlockProgram run();

 private:
  [[nodiscard]] bool in_recompute_set(OpId o) const;
  [[nodiscard]] std::vector<bool> op_level_reruns() const;
  [[nodiscard]] bool is_view(OpId o) const;
  [[nodiscard]] VTensor version(TensorId t, bool consumer_after_forward) const;
  [[nodiscard]] VTensor storage(VTensor v) const;
  void emit(OpId o, bool recompute_copy);
  [[nodiscard]] ProgOp whole(const stg::Op& op, bool recompute_copy) const;
  void emit_ring(OpId o, ProgOp kernel, bool after_forward);
  void add_deps(ProgOp& p, const std::vector<TensorId>& in, bool after_forward);
  void plan_memory(BlockProgram& prog);
  [[nodiscard]] std::int32_t producer_index(VTensor v) const;
  [[nodiscard]] bool is_external(TensorId t) const;
  [[nodiscard]] std::vector<bool> input_grad_chain() const;

  const models::Block& b_;
  const stg::Graph& g_;
  Recompute mode_;
  bool split_;
  std::vector<bool> op_rerun_;  // kSelectiveOp: the forward ops that rerun in backward
  std::vector<ProgOp> ops_;
  std::map<VTensor, std::int32_t> produced_by_;             // non-view producers
  std::map<VTensor, std::vector<std::int32_t>> consumers_;  // by storage
  std::vector<std::vector<VTensor>> op_outputs_;
};

bool Lowering::in_recompute_set(OpId o) const {
  const stg::Op& op = g_.op(o);
  if (op.phase != graph::Phase::kForward || o >= b_.backward.first_op) {
    return false;
  }
  return mode_ == Recompute::kFull || (mode_ == Recompute::kSelective && op.attention_core) ||
         (mode_ == Recompute::kSelectiveOp && op_rerun_[static_cast<std::size_t>(o)]);
}

// TorchTitan's op-level selective checkpointing keeps the outputs of the fused attention
// kernel, of reduce-scatters, of amax reductions and of every other weight GEMM in forward
// order (the first, third, ...); every other forward op of the layer reruns in backward.
std::vector<bool> Lowering::op_level_reruns() const {
  std::vector<bool> rerun(g_.ops().size(), false);
  if (mode_ != Recompute::kSelectiveOp) {
    return rerun;
  }
  int gemms = 0;
  for (OpId o = 0; o < b_.backward.first_op; ++o) {
    const stg::Op& op = g_.op(o);
    bool kept = op.kind == OpKind::kAttention || op.kind == OpKind::kFp8Amax ||
                (op.kind == OpKind::kCollective && op.coll == graph::CollType::kReduceScatter);
    if (op.kind == OpKind::kEinsum &&
        std::any_of(op.in.begin(), op.in.end(), [&](TensorId t) { return g_.tensor(t).weight; })) {
      kept = ++gemms % 2 == 1;
    }
    rerun[static_cast<std::size_t>(o)] = op.phase == graph::Phase::kForward && !kept;
  }
  return rerun;
}

bool Lowering::is_view(OpId o) const {
  const stg::Op& op = g_.op(o);
  if (op.kind != OpKind::kSplit) {
    return false;
  }
  for (TensorId t : op.out) {
    if (g_.tensor(t).alias_of < 0) {
      return false;  // a concat of gradients writes a new buffer
    }
  }
  return true;
}

// After the forward pass a tensor is read in its recomputed version when it is internal to
// the recomputed region: produced there and read in forward only there. A region's outputs
// stay saved by their consumers, as with Megatron's checkpointing. Under op-level selective
// checkpointing the whole layer is the region and the ops it keeps are cached inside it
// (PyTorch's selective checkpoint), so every rerun op's output is read in its rerun version.
VTensor Lowering::version(TensorId t, bool after_forward) const {
  OpId p = g_.tensor(t).producer;
  if (!after_forward || p < 0 || !in_recompute_set(p)) {
    return {t, false};
  }
  if (mode_ == Recompute::kSelectiveOp) {
    return {t, true};
  }
  for (OpId o = 0; o < b_.backward.first_op; ++o) {
    const auto& in = g_.op(o).in;
    if (!in_recompute_set(o) && std::find(in.begin(), in.end(), t) != in.end()) {
      return {t, false};
    }
  }
  return {t, true};
}

VTensor Lowering::storage(VTensor v) const {
  const stg::Tensor& x = g_.tensor(v.t);
  if (x.alias_of < 0) {
    return v;
  }
  return storage(version(x.alias_of, v.recomputed));
}

bool Lowering::is_external(TensorId t) const {
  const auto& in = b_.inputs;
  const auto& gi = b_.backward.grad_inputs;
  return std::find(in.begin(), in.end(), t) != in.end() ||
         std::find(gi.begin(), gi.end(), t) != gi.end();
}

std::int32_t Lowering::producer_index(VTensor v) const {
  auto it = produced_by_.find(v);
  if (it != produced_by_.end()) {
    return it->second;
  }
  const stg::Tensor& x = g_.tensor(v.t);  // a view: its input's producer
  return x.alias_of >= 0 ? producer_index(version(x.alias_of, v.recomputed)) : -1;
}

void Lowering::add_deps(ProgOp& p, const std::vector<TensorId>& in, bool after_forward) {
  for (TensorId t : in) {
    const stg::Tensor& x = g_.tensor(t);
    if (x.weight) {
      continue;
    }
    VTensor s = storage(version(t, after_forward));
    auto idx = static_cast<std::int32_t>(ops_.size());
    consumers_[s].push_back(idx);
    std::int32_t dep = 0;
    if (std::find(b_.inputs.begin(), b_.inputs.end(), s.t) != b_.inputs.end()) {
      dep = kFwdInput;
    } else if (std::find(b_.backward.grad_inputs.begin(), b_.backward.grad_inputs.end(), s.t) !=
               b_.backward.grad_inputs.end()) {
      dep = kBwdInput;
    } else {
      dep = producer_index(version(t, after_forward));
      if (dep < 0) {
        dep = producer_index(s);
      }
      if (dep < 0) {  // no op of the block produces it (-1 is not kFwdInput here)
        if (x.producer < 0) {
          continue;  // data (token ids, pixels), produced by no node
        }
        throw base::InternalError(
            fmt::format("{}: no lowered producer for tensor '{}'", b_.name, x.name));
      }
    }
    if (std::find(p.deps.begin(), p.deps.end(), dep) == p.deps.end()) {
      p.deps.push_back(dep);
    }
  }
}

// Which per-rank factor of skewed routing an op's cost takes (graph/expert_loads.h): the
// all-to-alls over EP exchange the routed rows; an op on rows that are whole over EP (the
// dispatched rows, or every row without EP) is expert work; the rest is the same on every
// rank.
graph::LoadScale load_scale(const stg::Graph& g, const stg::Op& op) {
  const auto ep = static_cast<std::uint8_t>(Axis::kEP);
  if (op.kind == OpKind::kCollective && op.coll == graph::CollType::kAllToAll && op.axis == ep) {
    return graph::LoadScale::kExchange;
  }
  for (const auto* ids : {&op.in, &op.out}) {
    for (TensorId t : *ids) {
      const stg::Layout& l = g.tensor(t).layout;
      const int r = l.find('r');
      if (r >= 0 && l.find('x') >= 0 && l.shard[static_cast<std::size_t>(r)] != ep) {
        return graph::LoadScale::kExpert;
      }
    }
  }
  return graph::LoadScale::kNone;
}

// The routed experts one rank holds in an expert op: the local size of its inputs' expert
// dimension ('x'; 1 when none has it).
std::int64_t local_experts(const stg::Graph& g, const stg::Op& op) {
  for (TensorId t : op.in) {
    const stg::Layout& l = g.tensor(t).layout;
    if (l.find('x') >= 0) {
      return stg::local_size('x', l.axis_of('x'), g.symbols());
    }
  }
  return 1;
}

// The op as one program op: its costs, kind and stream; no dependencies yet.
ProgOp Lowering::whole(const stg::Op& op, bool recompute_copy) const {
  ProgOp p;
  p.name = recompute_copy ? op.name + ".recompute" : op.name;
  graph::Node& n = p.node;
  n.flops = op.flops;
  n.bytes = op.bytes;
  n.gemm = op.gemm;
  n.causal = op.causal;
  n.op = op.cls;
  n.dtype = op.fp8 ? base::DType::kFP8 : g_.tensor(op.out[0]).dtype;  // FP8 GEMMs: the rate
  n.phase = recompute_copy ? graph::Phase::kRecompute : op.phase;
  n.load = load_scale(g_, op);
  // The router's token counts go to the host, which sizes the dispatch and the grouped GEMMs
  // with them (Megatron-Core's dropless dispatchers, DeepEP's and HybridEP's host-side counts).
  n.host_sync = op.kind == OpKind::kRouter && n.phase != graph::Phase::kBackward;
  // Transformer Engine's GroupedLinear quantizes and multiplies expert by expert.
  const bool per_expert = op.cls == graph::OpClass::kGemm || op.kind == OpKind::kFp8Cast;
  if (b_.per_expert_launches && n.load == graph::LoadScale::kExpert && per_expert) {
    n.host_experts = static_cast<std::int32_t>(local_experts(g_, op));
  }
  p.model_flops = op.model_flops;
  if (op.kind == OpKind::kCollective) {
    n.kind = graph::NodeKind::kCollective;
    n.coll = op.coll;
    n.stream = op.axis == static_cast<std::uint8_t>(Axis::kDP)   ? graph::Stream::kDP
               : op.axis == static_cast<std::uint8_t>(Axis::kEP) ? graph::Stream::kEP
                                                                 : graph::Stream::kTP;
    p.axis = op.axis;
  } else if (op.kind == OpKind::kSplit) {
    n.fixed_duration = 0;  // gradients of views land in one buffer: no kernel
  }
  return p;
}

void Lowering::emit(OpId o, bool recompute_copy) {
  const stg::Op& op = g_.op(o);
  bool after_forward = recompute_copy || o >= b_.backward.first_op;
  if (is_view(o)) {  // a view: its outputs resolve to the storage of its input
    return;
  }
  ProgOp p = whole(op, recompute_copy);
  if (op.ring_size > 1) {
    emit_ring(o, std::move(p), after_forward);
    return;
  }
  add_deps(p, op.in, after_forward);
  auto idx = static_cast<std::int32_t>(ops_.size());
  for (TensorId t : op.out) {
    produced_by_[VTensor{t, recompute_copy}] = idx;
  }
  ops_.push_back(std::move(p));
}

// Ring attention's steps (ring_attention.h) in place of the op: each reads its share of the
// op's inputs and waits for the earlier steps it names.
void Lowering::emit_ring(OpId o, ProgOp kernel, bool after_forward) {
  const stg::Op& op = g_.op(o);
  const bool recompute_copy = kernel.node.phase == graph::Phase::kRecompute;
  RingPlan plan = ring_steps(g_, op, kernel);
  const auto base = static_cast<std::int32_t>(ops_.size());
  std::int64_t held = 0;  // the ring's receive buffers
  for (RingStep& s : plan.steps) {
    ProgOp p = std::move(s.op);
    std::vector<TensorId> reads;
    for (std::size_t i : s.reads) {
      reads.push_back(op.in[i]);
    }
    add_deps(p, reads, after_forward);
    for (std::int32_t a : s.after) {
      p.deps.push_back(base + a);
    }
    if (s.ring_buffers > 0) {
      held = s.ring_buffers;
      p.node.mem_alloc += held;
      p.node.comm_alloc += held;
    }
    if (s.frees_ring_buffers) {
      p.node.mem_free += held;
      p.node.comm_free += held;
    }
    ops_.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < op.out.size(); ++i) {
    produced_by_[VTensor{op.out[i], recompute_copy}] = base + plan.out_step[i];
  }
}

void Lowering::plan_memory(BlockProgram& prog) {
  std::map<VTensor, std::int32_t> alloc_at;
  for (const auto& [v, idx] : produced_by_) {
    const stg::Tensor& x = g_.tensor(v.t);
    if (x.weight || x.alias_of >= 0 || is_external(v.t)) {
      continue;
    }
    bool weight_grad = false;
    for (const auto& wg : b_.backward.weight_grads) {
      weight_grad = weight_grad || storage(VTensor{wg.second, false}).t == v.t;
    }
    if (!weight_grad) {  // weight gradients accumulate in static (main_grad) buffers
      alloc_at[v] = idx;
    }
  }
  std::vector<TensorId> escaping;  // storages handed to the neighbouring block
  for (TensorId t : b_.outputs) {
    escaping.push_back(storage(VTensor{t, false}).t);
  }
  for (const auto& ig : b_.backward.input_grads) {
    escaping.push_back(storage(VTensor{ig.second, false}).t);
  }
  auto charge = [&](VTensor s, std::int32_t from, bool external) {
    auto bytes = g_.bytes_of(s.t);
    std::int32_t last = from;
    for (std::int32_t c : consumers_[s]) {
      last = std::max(last, c);
    }
    // Only the forward's own version leaves the block: a recomputed twin of an output (the
    // recompute re-runs the whole region, its last residual add too) dies in the block.
    bool escapes =
        !s.recomputed && std::find(escaping.begin(), escaping.end(), s.t) != escaping.end();
    // A collective's output read only inside the block is a communication buffer; one that
    // leaves the block is the next block's activation, freed there as one, and so is one
    // that forward keeps for backward (the experts' dispatched rows).
    const bool saved = from >= 0 && from < prog.n_fwd && last >= prog.n_fwd;
    bool comm = !external && !escapes && !saved &&
                ops_[static_cast<std::size_t>(from)].node.kind == graph::NodeKind::kCollective;
    if (!external) {
      ops_[static_cast<std::size_t>(from)].node.mem_alloc += bytes;
      ops_[static_cast<std::size_t>(from)].node.comm_alloc += comm ? bytes : 0;
    }
    if (!escapes && last >= 0) {
      ops_[static_cast<std::size_t>(last)].node.mem_free += bytes;
      ops_[static_cast<std::size_t>(last)].node.comm_free += comm ? bytes : 0;
    }
    bool from_forward = external
                            ? std::find(b_.inputs.begin(), b_.inputs.end(), s.t) != b_.inputs.end()
                            : from < prog.n_fwd;
    if (from_forward && last >= prog.n_fwd) {
      prog.saved_bytes += static_cast<double>(bytes);
    }
  };
  for (const auto& [v, idx] : alloc_at) {
    charge(v, idx, false);
  }
  for (TensorId t : b_.inputs) {
    charge(VTensor{t, false}, -1, true);
  }
  for (TensorId t : b_.backward.grad_inputs) {
    charge(VTensor{t, false}, -1, true);
  }
}

// The backward ops the block's input gradients depend on ("B"); the others compute only
// weight gradients ("W") and may run later (zero-bubble schedules).
std::vector<bool> Lowering::input_grad_chain() const {
  std::vector<bool> needed(g_.ops().size(), false);
  std::vector<TensorId> work;
  for (const auto& ig : b_.backward.input_grads) {
    work.push_back(ig.second);
  }
  while (!work.empty()) {
    TensorId t = work.back();
    work.pop_back();
    OpId p = g_.tensor(t).producer;
    if (p < b_.backward.first_op || needed[static_cast<std::size_t>(p)]) {
      continue;
    }
    needed[static_cast<std::size_t>(p)] = true;
    work.insert(work.end(), g_.op(p).in.begin(), g_.op(p).in.end());
  }
  return needed;
}

BlockProgram Lowering::run() {
  BlockProgram prog;
  prog.name = b_.name;
  prog.params = b_.params;
  prog.expert_params = b_.expert_params;
  prog.fp8_weight_elements = b_.fp8_weight_elements;
  prog.fp8_expert_weight_elements = b_.fp8_expert_weight_elements;
  prog.fp8_gemms = b_.fp8_gemms;
  OpId first_bwd = b_.backward.first_op;
  for (OpId o = 0; o < first_bwd; ++o) {
    emit(o, false);
  }
  prog.n_fwd = static_cast<std::int32_t>(ops_.size());
  for (OpId o = 0; o < first_bwd; ++o) {
    if (in_recompute_set(o)) {
      emit(o, true);
    }
  }
  const auto n_ops = static_cast<OpId>(g_.ops().size());
  if (split_) {  // B ops first, then the W ops they leave
    std::vector<bool> b_chain = input_grad_chain();
    for (auto o = first_bwd; o < n_ops; ++o) {
      if (b_chain[static_cast<std::size_t>(o)]) {
        emit(o, false);
      }
    }
    prog.w_begin = static_cast<std::int32_t>(ops_.size());
    for (auto o = first_bwd; o < n_ops; ++o) {
      if (!b_chain[static_cast<std::size_t>(o)]) {
        emit(o, false);
      }
    }
  } else {
    for (auto o = first_bwd; o < n_ops; ++o) {
      emit(o, false);
    }
    prog.w_begin = static_cast<std::int32_t>(ops_.size());
  }
  plan_memory(prog);
  if (!b_.outputs.empty()) {
    prog.fwd_out = producer_index(VTensor{b_.outputs[0], false});
    prog.out_bytes = g_.bytes_of(b_.outputs[0]);
  }
  if (!b_.backward.input_grads.empty()) {
    TensorId dx = b_.backward.input_grads[0].second;
    prog.bwd_out = producer_index(VTensor{dx, false});
    prog.in_grad_bytes = g_.bytes_of(dx);
  }
  for (const auto& wg : b_.backward.weight_grads) {
    std::int32_t idx = producer_index(VTensor{wg.second, false});
    if (idx >= 0 &&
        std::find(prog.wgrad_ops.begin(), prog.wgrad_ops.end(), idx) == prog.wgrad_ops.end()) {
      prog.wgrad_ops.push_back(idx);
      prog.wgrad_expert.push_back(g_.tensor(wg.first).expert);
    }
  }
  for (const ProgOp& p : ops_) {
    if (p.node.phase != graph::Phase::kRecompute) {
      prog.model_flops += p.model_flops;
    }
    prog.hardware_flops += p.model_flops;
  }
  prog.ops = std::move(ops_);
  return prog;
}

}  // namespace

BlockProgram lower(const models::Block& block, Recompute mode, bool split_backward) {
  return Lowering(block, mode, split_backward).run();
}

}  // namespace tessera::synth::parallel
