// SPDX-License-Identifier: Apache-2.0
#include "synth/models/vision_encoder.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::TensorId;

namespace {

// The encoder as a scenario of its own: its width and depth, bidirectional attention, one
// "sequence" per image (the batch dimension counts images).
Scenario encoder_scenario(const Scenario& s, std::int64_t images, std::int64_t patches) {
  Scenario e = s;
  const EncoderConfig& c = s.encoder;
  e.model = ModelConfig{};
  e.model.layers = c.layers;
  e.model.hidden = c.hidden;
  e.model.heads = c.heads;
  e.model.kv_heads = c.heads;
  e.model.ffn = c.ffn;
  e.model.vocab = s.parallel.tp;  // unused
  e.model.activation = c.activation;
  e.model.norm = c.norm;
  e.model.bias = c.bias;
  e.model.causal = false;
  e.model.moe = MoeConfig{};  // the encoder's MLPs are dense
  e.training.seq_len = patches;
  e.training.micro_batch = images;
  e.training.fp8 = Fp8Recipe::kNone;  // the vision encoder stays in bf16 (docs/fp8.md)
  return e;
}

// The encoder's symbols plus p (pixels per patch), m (merged tokens per image), k (merged
// width), j (projector MLP width) and o (the LLM's width).
stg::SymbolTable encoder_symbols(const Scenario& s, const Scenario& e, std::int64_t patches) {
  stg::SymbolTable sym = symbols_of(e);
  sym.bind('p', s.encoder.patch_pixels);
  sym.bind('m', patches / s.encoder.merge);
  sym.bind('k', s.encoder.merge * s.encoder.hidden);
  sym.bind('j', s.encoder.merge * s.encoder.hidden);
  sym.bind('o', s.model.hidden);
  return sym;
}

Layout stream(const Scenario& s, const std::string& labels) {
  Layout l(labels);
  l.sharded('b', Axis::kDP);
  if (s.parallel.sp) {
    l.sharded(labels[1], Axis::kTP);
  }
  return l;
}

Layout column(const std::string& labels, char dim) {
  Layout l(labels);
  l.sharded(dim, Axis::kTP);
  return l;
}

Block make_patch(const Scenario& s, const Scenario& e, std::int64_t patches, bool backward) {
  Block b{"encoder.patch", Graph(encoder_symbols(s, e, patches)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  TensorId pixels = g.input("pixels", stream(s, "bsp"), s.training.precision);
  TensorId w = g.weight("patch_embed.weight", Layout("ph"), s.training.precision);
  TensorId x = g.einsum("patch_embed", "bsp,ph->bsh", pixels, w);
  b.outputs = {g.convert(x, stream_layout(e))};
  b.params = weight_parameters(g);
  finish_block(b, s, backward);
  return b;
}

// Qwen2-VL's PatchMerger: the 2x2 merge is a view of the last layer's output as m tokens of
// width k = merge x h; its LayerNorm is taken over k here (the same elementwise cost as over
// h), then fc1 (k -> k, column-parallel), GeLU, fc2 (k -> LLM width, row-parallel).
Block make_projector(const Scenario& s, const Scenario& e, std::int64_t patches, bool backward) {
  Block b{"encoder.projector", Graph(encoder_symbols(s, e, patches)), {}, {}, {}, 0.0, 0.0, 0, 0.0};
  Graph& g = b.graph;
  auto dt = s.training.precision;
  TensorId x = g.input("x", stream(s, "bmk"), dt);
  TensorId gamma = g.weight("merger.norm.weight", Layout("k"), dt);
  TensorId xn = g.norm("merger.norm", x, gamma, 'k');
  TensorId w1 = g.weight("merger.fc1.weight", column("kj", 'j'), dt);
  TensorId h = g.einsum("merger.fc1", "bmk,kj->bmj", xn, w1);
  TensorId act = g.unary(stg::OpKind::kGelu, "merger.gelu", h);
  TensorId w2 = g.weight("merger.fc2.weight", column("jo", 'j'), dt);
  TensorId y = g.einsum("merger.fc2", "bmj,jo->bmo", act, w2);
  b.inputs = {x};
  b.outputs = {g.convert(y, stream(s, "bmo"))};
  b.params = weight_parameters(g);
  finish_block(b, s, backward);
  return b;
}

}  // namespace

EncoderBlocks build_encoder_blocks(const Scenario& s, std::int64_t images, std::int64_t patches,
                                   bool backward) {
  Scenario e = encoder_scenario(s, images, patches);
  EncoderBlocks out{make_patch(s, e, patches, backward), make_layer(e, backward),
                    make_projector(s, e, patches, backward)};
  out.patch.name = "encoder.patch";
  out.layer.name = "encoder.layer";
  return out;
}

double encoder_parameters(const Scenario& s) {
  std::int64_t patches = s.encoder.merge * (s.parallel.sp ? s.parallel.tp : 1);
  EncoderBlocks b = build_encoder_blocks(s, 1, patches, false);
  return b.patch.params + static_cast<double>(s.encoder.layers) * b.layer.params +
         b.projector.params;
}

}  // namespace tessera::synth::models
