// SPDX-License-Identifier: Apache-2.0
// DeepSeek-V3's multi-token prediction (DeepSeek-AI 2024, arXiv:2412.19437, §2.2; Megatron-
// Core's MultiTokenPredictionBlock), one module: the last decoder layer's output and the
// embedding of the tokens one further ahead, each RMS-normed, concatenated and projected from
// 2h back to h (row-parallel over tp), one more decoder layer (an MoE layer in an MoE model),
// a final norm, and the shared output layer with a loss of its own. Its gradient joins the
// main head's on the last layer's output.
#include <algorithm>
#include <utility>
#include <vector>

#include "synth/models/layer_parts.h"
#include "synth/models/transformer.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::TensorId;

namespace {

// The module up to its decoder layer's output, on the main stream x; returns (its hidden
// states, its embedding table).
std::pair<TensorId, TensorId> mtp_hidden(Graph& g, const Scenario& s, const Fp8Plan& fp8,
                                         TensorId x) {
  const base::DType dt = s.training.precision;
  TensorId hn = norm(g, s, "mtp.hnorm", x);  // first, so that the module waits for its input
  Layout ids_layout("bs");
  ids_layout.sharded('b', Axis::kDP);
  TensorId ids = g.input("mtp.tokens", ids_layout, base::DType::kFP32);
  TensorId table = g.weight("mtp.embed.weight", sharded("vh", 'v', Axis::kTP), dt);
  Layout rows("bsh");
  rows.sharded('b', Axis::kDP);
  TensorId e = g.convert(g.embedding("mtp.embed", ids, table, rows), stream_layout(s));
  Layout both = stream_layout(s);
  both.labels = "bsH";
  TensorId c = g.concat("mtp.concat", {hn, norm(g, s, "mtp.enorm", e)}, both);
  TensorId wp = g.weight("mtp.eh_proj.weight", sharded("Hh", 'H', Axis::kTP), dt);
  TensorId h = g.convert(linear(g, fp8, "mtp.eh_proj", "bsH,Hh->bsh", c, wp), stream_layout(s));
  TensorId a = attention(g, s, fp8, h);
  return {s.model.moe.on() ? moe_mlp(g, s, fp8, a) : mlp(g, s, fp8, a), table};
}

}  // namespace

void mtp_loss(Graph& g, const Scenario& s, TensorId y, TensorId lm_head) {
  TensorId logits =
      g.einsum("mtp.lm_head", "bsh,vh->bsv", norm(g, s, "mtp.final_norm", y), lm_head);
  g.loss("mtp.loss", logits, 'v', s.training.cross_entropy_fusion);
}

TensorId add_mtp(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x, TensorId lm_head) {
  auto [y, table] = mtp_hidden(g, s, fp8, x);
  mtp_loss(g, s, y, lm_head);
  return table;
}

// The module on a stage of its own before the loss's (a layout's "m|L"): it passes the main
// stream on beside its own, [x; y] along the hidden dimension (2h), to the loss stage.
Block make_mtp_block(const Scenario& s) {
  Block b{"mtp", Graph(symbols_of(s)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  TensorId x = g.input("x", stream_layout(s), s.training.precision);
  auto [y, table] = mtp_hidden(g, s, fp8_plan(s), x);
  Layout both = stream_layout(s);
  both.labels = "bsH";
  b.inputs = {x};
  b.outputs = {g.concat("mtp.pass", {x, y}, both)};
  b.params = weight_parameters(g);
  b.expert_params = weight_parameters(g, true);
  const std::vector<std::int64_t> ranks = embedding_table_ranks(s);
  if (std::find(ranks.begin() + 1, ranks.end(), mtp_rank(s)) == ranks.end()) {
    b.params -= static_cast<double>(g.elements_of(table));  // the embedding's own rank
  }
  finish_block(b, s, true);
  return b;
}

}  // namespace tessera::synth::models
