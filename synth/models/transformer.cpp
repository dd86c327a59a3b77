// SPDX-License-Identifier: Apache-2.0
#include "synth/models/transformer.h"

#include <algorithm>
#include <iterator>

#include "synth/models/fp8.h"
#include "synth/models/layer_parts.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::models {

using base::DType;
using stg::Graph;
using stg::Layout;
using stg::OpKind;
using stg::TensorId;

Layout stream_layout(const Scenario& s) {
  Layout l("bsh");
  l.sharded('b', Axis::kDP);
  if (s.parallel.sp) {
    l.sharded('s', Axis::kTP);
  }
  return l;
}

Layout sharded(const std::string& labels, char dim, Axis a) {
  Layout l(labels);
  l.sharded(dim, a);
  return l;
}

TensorId norm(Graph& g, const Scenario& s, const std::string& name, TensorId x) {
  TensorId gamma = g.weight(name + ".weight", Layout("h"), s.training.precision);
  // PyTorch eager runs LayerNorm as one native kernel, RMSNorm as a chain of ops.
  const bool eager = s.training.eager_elementwise && s.model.norm == NormKind::kRmsNorm;
  return g.norm(name, x, gamma, 'h', eager);
}

// Megatron's local linear layers (transformer_impl: local) add the biases outside the GEMMs:
// the QKV bias in a kernel of its own, fc1's inside the fused bias-GeLU, the row-parallel
// layers' inside bias-dropout-add; each bias gradient is then a reduction kernel. Transformer
// Engine does both in cuBLASLt GEMM epilogues (docs/formulas.md §4.2).
bool separate_bias(const Scenario& s) {
  return s.model.bias && s.training.transformer_impl == TransformerImpl::kLocal;
}

TensorId with_fused_bias(Graph& g, const Scenario& s, TensorId y) {
  if (separate_bias(s)) {
    g.mutable_op(g.tensor(y).producer).bias = true;
  }
  return y;
}

TensorId mlp_branch(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId ln,
                    const MlpLabels& m) {
  DType dt = s.training.precision;
  // SwiGLU's fc1 produces gate and up projections (2f); GeLU's produces f directly.
  bool gelu = s.model.activation == Activation::kGelu;
  char e = gelu ? m.width : m.fc1_width;
  const std::string p = m.prefix;
  TensorId w1 = g.weight(p + ".fc1.weight", sharded(std::string("h") + e, e, Axis::kTP), dt);
  TensorId h1 = linear(g, fp8, p + ".fc1", std::string("bsh,h") + e + "->bs" + e, ln, w1);
  TensorId act = gelu ? g.unary(OpKind::kGelu, p + ".gelu", h1)
                      : g.swiglu(p + ".swiglu", h1, m.width, s.training.eager_elementwise);
  if (m.bias) {
    act = with_fused_bias(g, s, act);
  }
  const std::string fc2_labels = std::string(1, m.width) + "h";
  TensorId w2 = g.weight(p + ".fc2.weight", sharded(fc2_labels, m.width, Axis::kTP), dt);
  return linear(g, fp8, p + ".fc2", std::string("bs") + m.width + "," + fc2_labels + "->bsh", act,
                w2);
}

double weight_parameters(const Graph& g, bool experts_only) {
  double n = 0.0;
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    if (g.tensors()[t].weight && (g.tensors()[t].expert || !experts_only)) {
      n += static_cast<double>(g.elements_of(static_cast<TensorId>(t)));
    }
  }
  return n;
}

namespace {

// Attention core: fused flash attention, or Megatron's unfused path (batched QK^T, fused
// scale-mask-softmax, dropout, batched PV) whose s^2 intermediates are kept for backward. The
// unfused path computes every score and masks a sliding window in its softmax, so `window`
// changes only the fused kernel's work.
TensorId attention_core(Graph& g, const Scenario& s, TensorId q, TensorId k, TensorId v,
                        std::int64_t window) {
  if (fused(s.training.attention)) {
    return core_attention(g, s, "attn.core", q, k, v, window);
  }
  auto first = static_cast<stg::OpId>(g.ops().size());
  if (s.model.kv_heads != s.model.heads) {  // repeat K/V heads for the batched GEMMs
    k = g.expand("attn.k_expand", k, sharded("btad", 'a', Axis::kTP).sharded('b', Axis::kDP));
    v = g.expand("attn.v_expand", v, sharded("btad", 'a', Axis::kTP).sharded('b', Axis::kDP));
  }
  TensorId scores = g.einsum("attn.scores", "bsad,btad->bast", q, k);
  TensorId probs = g.unary(OpKind::kSoftmax, "attn.softmax", scores, 't');
  if (s.model.dropout > 0.0) {
    probs = g.dropout("attn.dropout", probs).first;
  }
  TensorId ctx = g.einsum("attn.context", "bast,btad->bsad", probs, v);
  g.mark_attention_core(first, static_cast<stg::OpId>(g.ops().size()) - 1);
  return ctx;
}

}  // namespace

TensorId attention(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x,
                   std::int64_t window) {
  if (s.model.mla.on()) {
    return mla_attention(g, s, fp8, x, window);
  }
  DType dt = s.training.precision;
  TensorId ln = norm(g, s, "attn.norm", x);
  TensorId wqkv = g.weight("attn.qkv.weight", sharded("hq", 'q', Axis::kTP), dt);
  TensorId qkv = linear(g, fp8, "attn.qkv", "bsh,hq->bsq", ln, wqkv);
  if (separate_bias(s)) {
    qkv = g.bias_add("attn.qkv.bias", qkv);
  }
  Layout lq = sharded("bsad", 'a', Axis::kTP).sharded('b', Axis::kDP);
  // Keys and values have kv_heads heads ('g'); with plain multi-head attention that is 'a'.
  char kvh = s.model.kv_heads == s.model.heads ? 'a' : 'g';
  Layout lkv = sharded(std::string("bt") + kvh + "d", kvh, Axis::kTP).sharded('b', Axis::kDP);
  auto parts = g.split("attn.split_qkv", qkv, {lq, lkv, lkv});
  TensorId ctx = attention_core(g, s, parts[0], parts[1], parts[2], window);
  TensorId wo = g.weight("attn.proj.weight", sharded("adh", 'a', Axis::kTP), dt);
  TensorId o = linear(g, fp8, "attn.proj", "bsad,adh->bsh", ctx, wo);
  return with_fused_bias(g, s, g.dropout_add("attn.residual", o, x, s.model.dropout > 0.0));
}

TensorId mlp(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x) {
  TensorId ln = norm(g, s, "mlp.norm", x);
  TensorId h2 = mlp_branch(g, s, fp8, ln, {"mlp", 'f', 'e', true});
  return with_fused_bias(g, s, g.dropout_add("mlp.residual", h2, x, s.model.dropout > 0.0));
}

namespace {

// A layer's biases on one rank: QKV's (sharded), the attention output's, the norms' shifts,
// and a dense MLP's fc1 (sharded) and fc2; MoE MLPs have none (docs/moe.md).
double bias_params(const Scenario& s, bool moe) {
  if (!s.model.bias) {
    return 0.0;
  }
  const stg::SymbolTable sym = symbols_of(s);
  auto tp = static_cast<double>(s.parallel.tp);
  auto h = static_cast<double>(s.model.hidden);
  double mlp = moe ? 0.0 : static_cast<double>(sym.size('e')) / tp + h;
  return static_cast<double>(sym.size('q')) / tp + h + mlp + 2.0 * h;
}

Block make_embed(const Scenario& s) {
  Block b{"embed", Graph(symbols_of(s)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  Layout ids_layout("bs");
  ids_layout.sharded('b', Axis::kDP);
  TensorId ids = g.input("tokens", ids_layout, DType::kFP32);
  TensorId table = g.weight("embed.weight", sharded("vh", 'v', Axis::kTP), s.training.precision);
  Layout out("bsh");
  out.sharded('b', Axis::kDP);
  TensorId e = g.embedding("embed", ids, table, out);
  TensorId x = g.convert(e, stream_layout(s));
  b.outputs = {x};
  b.params = weight_parameters(g);
  finish_block(b, s, true);
  return b;
}

Block make_head(const Scenario& s) {
  Block b{"head", Graph(symbols_of(s)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  // After multi-token prediction on a stage of its own, the input is [x; its stream] (2h).
  const bool after_mtp = s.parallel.mtp_stage_apart() >= 0;
  Layout in = stream_layout(s);
  in.labels = after_mtp ? "bsH" : "bsh";
  const TensorId input = g.input("x", in, s.training.precision);
  std::vector<TensorId> parts = {input};
  if (after_mtp) {
    parts = g.split("mtp.unpass", input, {stream_layout(s), stream_layout(s)});
  }
  const TensorId x = parts[0];
  TensorId xn = norm(g, s, "final_norm", x);
  TensorId w = g.weight("lm_head.weight", sharded("vh", 'v', Axis::kTP), s.training.precision);
  TensorId logits = g.einsum("lm_head", "bsh,vh->bsv", xn, w);
  g.loss("loss", logits, 'v', s.training.cross_entropy_fusion);
  if (after_mtp) {
    mtp_loss(g, s, parts[1], w);
  }
  // Multi-token prediction (docs/mla.md): with the head, its modules follow the main head on
  // the last stage, sharing its output layer; its embedding table is the input embedding's,
  // or a copy.
  const TensorId mtp_table =
      s.model.mtp_depth > 0 && !after_mtp ? add_mtp(g, s, fp8_plan(s), x, w) : -1;
  b.inputs = {input};
  b.params = weight_parameters(g);
  b.expert_params = weight_parameters(g, true);
  // A tied output layer reuses the input embedding's table; across pipeline stages Megatron
  // keeps a copy (with its own gradient and optimizer state) on the last stage instead.
  if (embedding_and_head_share_a_rank(s)) {
    b.params -= s.model.tied_embeddings ? static_cast<double>(g.elements_of(w)) : 0.0;
    b.params -= mtp_table >= 0 ? static_cast<double>(g.elements_of(mtp_table)) : 0.0;
  }
  finish_block(b, s, true);
  return b;
}

}  // namespace

void finish_block(Block& b, const Scenario& s, bool backward) {
  b.per_expert_launches = s.model.moe.grouped_gemm == GroupedGemm::kPerExpert;
  if (backward) {
    b.backward = stg::derive_backward(b.graph, b.outputs, b.inputs);
    // Without gradient-accumulation fusion each weight gradient is a temporary that a kernel
    // of its own adds to the main-gradient buffer (Megatron's DDP hook main_grad.add_).
    for (auto& [w, dw] : b.backward.weight_grads) {
      if (!s.training.gradient_accumulation_fusion) {
        dw = b.graph.accumulate_grad(b.graph.tensor(w).name + ".grad_accum", dw,
                                     s.training.grad_dtype());
      }
    }
  } else {
    b.backward.first_op = static_cast<stg::OpId>(b.graph.ops().size());
  }
}

Block make_layer(const Scenario& s, bool backward, bool moe, std::int64_t window) {
  Block b{"layer", Graph(symbols_of(s)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  TensorId x = g.input("x", stream_layout(s), s.training.precision);
  // The decoder layer's four linear layers run in FP8 under training.fp8; the embedding, the
  // attention core, norms and the LM head stay in bf16 (docs/fp8.md).
  const Fp8Plan fp8 = fp8_plan(s);
  TensorId a = attention(g, s, fp8, x, window);
  TensorId y = moe ? moe_mlp(g, s, fp8, a) : mlp(g, s, fp8, a);
  b.name = std::string(window > 0 ? "windowed_" : "") + (moe ? "moe_layer" : "layer");
  b.inputs = {x};
  b.outputs = {y};
  b.params = weight_parameters(g) + bias_params(s, moe);
  b.expert_params = weight_parameters(g, true);
  b.fp8_weight_elements = fp8_weight_elements(g);
  b.fp8_expert_weight_elements = fp8_weight_elements(g, true);
  b.fp8_gemms = fp8_gemms(g);
  finish_block(b, s, backward);
  return b;
}

std::int64_t first_llm_stage(const Scenario& s) {
  return s.encoder.present && s.schedule.encoder == EncoderPlacement::kStages
             ? s.schedule.encoder_stages
             : 0;
}

std::int64_t mtp_rank(const Scenario& s) {
  const std::int64_t apart = s.parallel.mtp_stage_apart();
  return apart < 0 ? -1
                   : schedule::Placement(s.schedule, static_cast<int>(s.parallel.pp))
                         .rank_of(static_cast<int>(apart));
}

std::vector<std::int64_t> embedding_table_ranks(const Scenario& s) {
  std::vector<std::int64_t> out = {first_llm_stage(s)};
  auto add = [&](std::int64_t r) {
    if (std::find(out.begin(), out.end(), r) == out.end()) {
      out.push_back(r);
    }
  };
  const bool mtp_with_head = s.model.mtp_depth > 0 && mtp_rank(s) < 0;
  if ((s.model.tied_embeddings || mtp_with_head) && !embedding_and_head_share_a_rank(s)) {
    add(s.parallel.pp - 1);
  }
  if (mtp_rank(s) >= 0) {
    add(mtp_rank(s));
  }
  return out;
}

bool embedding_and_head_share_a_rank(const Scenario& s) {
  // Flat and interleaved schedules put the head on the last pipeline rank and the embedding on
  // the LLM's first (after any encoder stages); V shapes bring the last stage back to the first
  // rank.
  return s.parallel.pp - first_llm_stage(s) == 1 ||
         schedule::placement_shape(s.schedule.kind) != schedule::PlacementShape::kFlat;
}

LayerKind layer_kind(const Scenario& s, std::int64_t l) {
  return {.moe = s.model.moe.is_moe_layer(l), .window = s.model.window_of_layer(l)};
}

Blocks build_blocks(const Scenario& s) {
  Blocks b{make_embed(s), make_layer(s), make_head(s), std::nullopt, {}, {}};
  if (s.parallel.mtp_stage_apart() >= 0) {
    b.mtp.emplace(make_mtp_block(s));
  }
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    const LayerKind kind = layer_kind(s, l);
    std::size_t k = 0;
    if (kind != LayerKind{}) {
      auto it = std::find_if(b.kinds.begin(), b.kinds.end(),
                             [&](const auto& built) { return built.first == kind; });
      if (it == b.kinds.end()) {
        b.kinds.emplace_back(kind, make_layer(s, true, kind.moe, kind.window));
        it = std::prev(b.kinds.end());
      }
      k = static_cast<std::size_t>(it - b.kinds.begin()) + 1;
    }
    b.kind_of_layer.push_back(k);
  }
  return b;
}

}  // namespace tessera::synth::models
