// SPDX-License-Identifier: Apache-2.0
// The FP8 nodes that are not ops of a block program (docs/fp8.md): each layer's weights are
// quantized once per step, before the layer's first forward (Transformer Engine caches the FP8
// weights over the microbatches, refreshed on the first one; with fp8_param_gather they are FP8
// already, and only transposed where the part needs it); with delayed scaling, every
// fp8_autocast region (Megatron-Core: the chunk's transformer block) ends its forward and its
// backward with one fused amax-history and scale update. Both wait for the activation the
// layer (or chunk) works on, as they run inside its forward; the compute stream runs them in
// order before the GEMMs that read their results.
#include "synth/build/stage_builder.h"
#include "synth/models/fp8.h"

namespace tessera::synth::detail {

namespace {

Node fp8_node(std::uint32_t name, double bytes, std::int32_t mb, std::int32_t layer,
              graph::Phase phase) {  // NOLINT(bugprone-easily-swappable-parameters)
  Node n;
  n.kind = graph::NodeKind::kCompute;
  n.op = graph::OpClass::kCopy;
  n.bytes = bytes;
  n.name = name;
  n.microbatch = mb;
  n.layer = layer;
  n.phase = phase;
  n.dtype = base::DType::kFP8;
  return n;
}

}  // namespace

void StageBuilder::fp8_weight_cast(const StageBlock& b, std::int32_t mb, NodeId input) {
  const models::Fp8Plan& plan = c_.fp8;
  const double w = b.prog->fp8_weight_elements;
  if (!plan.on() || w <= 0.0 || b.layer < 0) {
    return;
  }
  const auto l = static_cast<std::size_t>(b.layer);
  if (plan.param_gather) {  // the weights are FP8 already: only the transposed copy is made
    if (const double bytes = plan.transpose_after_gather_bytes(w); bytes > 0.0) {
      add_after(fp8_node(c_.fp8_names.cast_weight[l], bytes, mb, b.layer, graph::Phase::kForward),
                input);
    }
    return;
  }
  if (plan.current_scaling()) {  // the weights' amax before their cast
    add_after(fp8_node(c_.fp8_names.amax_weight[l], 2.0 * w, mb, b.layer, graph::Phase::kForward),
              input);
  }
  models::Fp8Plan no_amax = plan;  // the amax pass is its own node
  no_amax.recipe = plan.recipe == Fp8Recipe::kTensorwise ? Fp8Recipe::kDelayed : plan.recipe;
  add_after(fp8_node(c_.fp8_names.cast_weight[l], models::fp8_weight_cast_bytes(no_amax, w), mb,
                     b.layer, graph::Phase::kForward),
            input);
}

NodeId StageBuilder::add_after(const Node& n, NodeId dep) {
  return dep == kNone ? g_.add(n) : g_.add(n, {dep});
}

void StageBuilder::fp8_amax_update(std::int32_t mb, std::int32_t chunk, graph::Phase phase,
                                   NodeId after) {
  if (c_.fp8.recipe != Fp8Recipe::kDelayed) {
    return;
  }
  int gemms = 0;
  for (const StageBlock& b : chunks_[static_cast<std::size_t>(chunk)]) {
    gemms += b.prog->fp8_gemms;
  }
  if (gemms == 0) {
    return;
  }
  // Read and write every quantizer's amax history and scale.
  double bytes = 2.0 * c_.fp8.meta_bytes_per_gemm() * gemms;
  add_after(fp8_node(c_.fp8_names.amax_update, bytes, mb, -1, phase), after);
}

bool StageBuilder::casts_gathered_weights() const {
  return c_.fp8.on() && c_.s.zero_stage() == 3;
}

// Under ZeRO-3 a unit's weights exist whole only between its gather and its release, so their
// FP8 copies are cast after every gather (TorchTitan's Float8Linear, TE under Megatron-FSDP)
// and freed with them: transient, not static. With fp8_param_gather the gather brings the FP8
// weights, and only a transposed copy is made where the part needs one.
void StageBuilder::fp8_gathered_cast(std::size_t k, std::int32_t mb, graph::Phase phase) {
  const StageBlock& b = blocks_[k];
  const double w = b.prog->fp8_weight_elements;
  if (w <= 0.0 || b.layer < 0) {
    return;
  }
  const auto l = static_cast<std::size_t>(b.layer);
  const NodeId after = last_node();
  if (c_.fp8.param_gather) {  // gathered in FP8: only the transposed copy is made
    if (const double bytes = c_.fp8.transpose_after_gather_bytes(w); bytes > 0.0) {
      Node t = fp8_node(c_.fp8_names.cast_weight[l], bytes, mb, b.layer, phase);
      t.mem_alloc = t.comm_alloc = static_cast<std::int64_t>(w);
      units_[k].gathered_bytes += t.mem_alloc;
      add_after(t, after);
    }
    return;
  }
  if (c_.fp8.current_scaling()) {
    add_after(fp8_node(c_.fp8_names.amax_weight[l], 2.0 * w, mb, b.layer, phase), after);
  }
  models::Fp8Plan no_amax = c_.fp8;
  no_amax.recipe = no_amax.recipe == Fp8Recipe::kTensorwise ? Fp8Recipe::kDelayed : no_amax.recipe;
  Node cast = fp8_node(c_.fp8_names.cast_weight[l], models::fp8_weight_cast_bytes(no_amax, w), mb,
                       b.layer, phase);
  const auto copies = static_cast<std::int64_t>(models::fp8_static_bytes(no_amax, w, 0));
  cast.mem_alloc = cast.comm_alloc = copies;
  units_[k].gathered_bytes += copies;
  add_after(cast, after);
}

// The bytes per rank that fp8_param_gather saves on the stored weights: their bf16 copy
// (ZeRO-3: the shard's bf16 bytes less its FP8 ones).
double StageBuilder::fp8_param_bytes_saved() const {
  if (!c_.fp8.param_gather) {
    return 0.0;
  }
  double saved = 0.0;
  const double bytes = base::dtype_bytes(c_.s.training.precision);
  for (const GradDomain& d : grad_domains()) {
    for (std::size_t k = 0; k < blocks_.size(); ++k) {
      saved +=
          c_.s.zero_stage() == 3 ? fp8_gather_saving(k, d) / d.ranks : fp8_weights(k, d) * bytes;
    }
  }
  return saved;
}

double StageBuilder::fp8_static_bytes() const {
  double weights = 0.0;
  int gemms = 0;
  for (const StageBlock& b : blocks_) {
    weights += b.prog->fp8_weight_elements;
    gemms += b.prog->fp8_gemms;
  }
  // Under ZeRO-3 the copies come and go with the gathered weights; the scaling state stays.
  return models::fp8_static_bytes(c_.fp8, casts_gathered_weights() ? 0.0 : weights, gemms);
}

}  // namespace tessera::synth::detail
