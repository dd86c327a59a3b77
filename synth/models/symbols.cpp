// SPDX-License-Identifier: Apache-2.0
// The sizes of a scenario's symbolic dimensions and mesh axes, which every block's tensor
// graph is written over (transformer.h lists the labels; docs/moe.md and docs/mla.md the
// mixture-of-experts and latent-attention ones).
#include <algorithm>

#include "synth/models/transformer.h"

namespace tessera::synth::models {

std::int64_t padded_vocab(const Scenario& s) {
  std::int64_t tp = s.parallel.tp;
  return (s.model.vocab + tp - 1) / tp * tp;
}

stg::SymbolTable symbols_of(const Scenario& s) {
  const ModelConfig& m = s.model;
  stg::SymbolTable sym;
  // One microbatch step processes micro_batch sequences on each data-parallel replica: the
  // batch dimension is micro_batch x dp, sharded over dp.
  sym.bind('b', s.training.micro_batch * s.parallel.dp);
  // With context parallelism a rank holds seq_len / cp of each sequence: queries 's' and its
  // own keys 't'; attention reaches the whole sequence 'T' (docs/context_parallel.md).
  sym.bind('s', s.local_seq());
  sym.bind('t', s.local_seq());
  sym.bind('h', m.hidden);
  sym.bind('a', m.heads);
  sym.bind('g', m.kv_heads);
  sym.bind('d', m.head_dim());
  sym.bind('q', (m.heads + 2 * m.kv_heads) * m.head_dim());
  sym.bind('f', m.ffn);
  sym.bind('e', m.activation == Activation::kSwiglu ? 2 * m.ffn : m.ffn);
  sym.bind('v', padded_vocab(s));
  sym.bind('c', 3);
  if (m.moe.on()) {  // docs/moe.md: experts, rows per expert, expert and shared MLP widths
    const bool swiglu = m.activation == Activation::kSwiglu;
    sym.bind('x', m.moe.experts);
    sym.bind('n', s.parallel.edp());
    sym.bind('i', s.parallel.etp);
    sym.bind('r', expert_rows(s));
    sym.bind('j', s.parallel.ep);  // the all-gather dispatcher's tokens: [n, j, o, h]
    sym.bind('o', s.training.micro_batch * s.local_seq() / s.parallel.tp);
    sym.bind('u', m.moe.expert_ffn);
    sym.bind('w', swiglu ? 2 * m.moe.expert_ffn : m.moe.expert_ffn);
    sym.bind('y', m.moe.shared_ffn());
    sym.bind('z', swiglu ? 2 * m.moe.shared_ffn() : m.moe.shared_ffn());
  }
  if (m.mla.on()) {  // docs/mla.md: latents, per-head query/key and value widths
    const MlaConfig& a = m.mla;
    sym.bind('C', a.q_lora_rank > 0 ? a.q_lora_rank : 1);
    sym.bind('L', a.kv_lora_rank);
    sym.bind('R', a.qk_rope_head_dim);
    sym.bind('D', a.kv_lora_rank + a.qk_rope_head_dim);
    sym.bind('P', a.qk_nope_head_dim);
    sym.bind('K', a.qk_head_dim());
    sym.bind('V', a.v_head_dim);
    sym.bind('W', a.qk_nope_head_dim + a.v_head_dim);
  }
  sym.bind('H', 2 * m.hidden);  // multi-token prediction: [hidden; embedding]
  if (s.parallel.cp > 1) {      // docs/context_parallel.md: the CP group's chunks, Ulysses' heads
    sym.bind('T', s.training.seq_len);
    sym.bind('p', s.parallel.cp);
    sym.bind('m', s.parallel.cp);
    sym.bind('A', m.heads / s.parallel.cp);
    sym.bind('G', std::max<std::int64_t>(1, m.kv_heads / s.parallel.cp));
  }
  sym.set_axis(Axis::kTP, s.parallel.tp);
  sym.set_axis(Axis::kDP, s.parallel.dp);
  sym.set_axis(Axis::kPP, s.parallel.pp);
  sym.set_axis(Axis::kCP, s.parallel.cp);
  sym.set_axis(Axis::kETP, s.parallel.etp);
  sym.set_axis(Axis::kEP, s.parallel.ep);
  sym.set_axis(Axis::kEDP, s.parallel.edp());
  return sym;
}

}  // namespace tessera::synth::models
