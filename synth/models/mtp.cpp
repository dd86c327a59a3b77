// SPDX-License-Identifier: Apache-2.0
// DeepSeek-V3's multi-token prediction (DeepSeek-AI 2024, arXiv:2412.19437, §2.2; Megatron-
// Core's MultiTokenPredictionBlock), one module: the last decoder layer's output and the
// embedding of the tokens one further ahead, each RMS-normed, concatenated and projected from
// 2h back to h (row-parallel over tp), one more decoder layer (an MoE layer in an MoE model),
// a final norm, and the shared output layer with a loss of its own. Its gradient joins the
// main head's on the last layer's output.
#include "synth/models/layer_parts.h"
#include "synth/models/transformer.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::TensorId;

TensorId add_mtp(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x, TensorId lm_head) {
  const base::DType dt = s.training.precision;
  Layout ids_layout("bs");
  ids_layout.sharded('b', Axis::kDP);
  TensorId ids = g.input("mtp.tokens", ids_layout, base::DType::kFP32);
  TensorId table = g.weight("mtp.embed.weight", sharded("vh", 'v', Axis::kTP), dt);
  Layout rows("bsh");
  rows.sharded('b', Axis::kDP);
  TensorId e = g.convert(g.embedding("mtp.embed", ids, table, rows), stream_layout(s));
  Layout both = stream_layout(s);
  both.labels = "bsH";
  TensorId c =
      g.concat("mtp.concat", {norm(g, s, "mtp.hnorm", x), norm(g, s, "mtp.enorm", e)}, both);
  TensorId wp = g.weight("mtp.eh_proj.weight", sharded("Hh", 'H', Axis::kTP), dt);
  TensorId h = g.convert(linear(g, fp8, "mtp.eh_proj", "bsH,Hh->bsh", c, wp), stream_layout(s));
  TensorId a = attention(g, s, fp8, h);
  TensorId y = s.model.moe.on() ? moe_mlp(g, s, fp8, a) : mlp(g, s, fp8, a);
  TensorId logits =
      g.einsum("mtp.lm_head", "bsh,vh->bsv", norm(g, s, "mtp.final_norm", y), lm_head);
  g.loss("mtp.loss", logits, 'v', s.training.cross_entropy_fusion);
  return table;
}

}  // namespace tessera::synth::models
