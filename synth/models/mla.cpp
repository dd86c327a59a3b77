// SPDX-License-Identifier: Apache-2.0
// DeepSeek's multi-head latent attention (docs/mla.md), as Megatron-Core's
// MLASelfAttention runs it: low-rank down projections on the rank's own (sequence-parallel)
// tokens, their norms, the up projections sharded over heads after the all-gather of the
// latents, the shared RoPE key broadcast to every head and concatenated onto the keys, flash
// attention with qk_nope + qk_rope wide queries and keys, and the row-parallel output
// projection. Labels: C q_lora_rank, L kv_lora_rank, D kv_lora_rank + rope, R rope, P nope,
// K nope + rope, V v_head_dim, W nope + v_head_dim.
#include "synth/models/layer_parts.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::TensorId;

namespace {

// An RMSNorm over the latent dimension `label`, with its weight.
TensorId latent_norm(Graph& g, const Scenario& s, const std::string& name, TensorId x, char label) {
  TensorId gamma = g.weight(name + ".weight", Layout(std::string(1, label)), s.training.precision);
  return g.norm(name, x, gamma, label, s.training.eager_elementwise);
}

// [b, seq, heads, width] with batch over dp and heads over tp: one head's slice of a
// projection, or what attention reads.
Layout heads_layout(char seq, char width) {
  return sharded(std::string("b") + seq + "a" + width, 'a', Axis::kTP).sharded('b', Axis::kDP);
}

// Queries [b, s, a, K]: through the latent (q_down, q_norm, q_up) or one projection.
TensorId queries(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId ln) {
  const base::DType dt = s.training.precision;
  TensorId in = ln;
  char width = 'h';
  if (s.model.mla.q_lora_rank > 0) {
    TensorId wd = g.weight("attn.q_down.weight", Layout("hC"), dt);
    in =
        latent_norm(g, s, "attn.q_norm", linear(g, fp8, "attn.q_down", "bsh,hC->bsC", ln, wd), 'C');
    width = 'C';
  }
  TensorId wu =
      g.weight("attn.q_up.weight", sharded(std::string(1, width) + "aK", 'a', Axis::kTP), dt);
  return linear(g, fp8, "attn.q_up", std::string("bs") + width + "," + width + "aK->bsaK", in, wu);
}

}  // namespace

TensorId mla_attention(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x,
                       std::int64_t window) {
  const base::DType dt = s.training.precision;
  TensorId ln = norm(g, s, "attn.norm", x);
  TensorId q = queries(g, s, fp8, ln);
  // The key-value latent and the shared RoPE key, on the rank's own tokens.
  TensorId wkv = g.weight("attn.kv_down.weight", Layout("hD"), dt);
  TensorId kv = linear(g, fp8, "attn.kv_down", "bsh,hD->bsD", ln, wkv);
  Layout latent = g.tensor(kv).layout;
  latent.labels = "btL";
  Layout rope = latent;
  rope.labels = "btR";
  auto parts = g.split("attn.kv_split", kv, {latent, rope});
  TensorId c = latent_norm(g, s, "attn.kv_norm", parts[0], 'L');
  TensorId wku = g.weight("attn.kv_up.weight", sharded("LaW", 'a', Axis::kTP), dt);
  TensorId kvu = linear(g, fp8, "attn.kv_up", "btL,LaW->btaW", c, wku);
  auto kv_heads = g.split("attn.kv_heads", kvu, {heads_layout('t', 'P'), heads_layout('t', 'V')});
  // The RoPE key, gathered over the sequence, copied to each local head beside k_nope.
  Layout whole_rope = rope;
  whole_rope.shard[1] = stg::kReplicated;
  TensorId k_rope =
      g.expand("attn.k_rope_expand", g.convert(parts[1], whole_rope), heads_layout('t', 'R'));
  TensorId k = g.concat("attn.k_concat", {kv_heads[0], k_rope}, heads_layout('t', 'K'));
  // The values, a slice of kv_up's output, copied contiguous for the attention kernel (as
  // Transformer Engine does with a strided input), so that kv_up's output dies here.
  TensorId v = g.concat("attn.v_contiguous", {kv_heads[1]}, heads_layout('t', 'V'));
  TensorId ctx = core_attention(g, s, "attn.core", q, k, v, window);
  TensorId wo = g.weight("attn.proj.weight", sharded("aVh", 'a', Axis::kTP), dt);
  TensorId o = linear(g, fp8, "attn.proj", "bsaV,aVh->bsh", ctx, wo);
  return g.dropout_add("attn.residual", o, x, s.model.dropout > 0.0);
}

}  // namespace tessera::synth::models
