// SPDX-License-Identifier: Apache-2.0
// Context-parallel attention (docs/context_parallel.md). Each rank of a CP group holds two of
// the sequence's 2 x cp chunks (Megatron's load balancing) and computes the queries, keys and
// values of its own tokens; the attention core then reaches the others' keys and values:
//  - allgather (Llama 3, Transformer Engine's AttnFuncWithCPAndKVAllGather): the keys and
//    values are viewed as [b, p, t, heads, width], p sharded over CP, and the matcher gathers
//    them; the local queries attend to the whole sequence under the causal mask, half of it on
//    average (the balancing makes every rank's half equal). Their gradients are partial sums
//    over CP, which the matcher reduce-scatters; the backward gathers them again.
//  - a2a (DeepSpeed-Ulysses): queries, keys and values are viewed as [b, p, s, m, heads/cp,
//    width] with the sequence chunk p over CP, and the matcher's all-to-all moves CP onto the
//    head group m: each rank attends to the whole sequence with heads / cp of its heads. The
//    output goes back the same way.
//  - p2p (ring attention, Megatron's default; TE's AttnFuncWithCPAndKVP2P): the local keys
//    and values travel around the CP ring while each rank attends to the blocks it holds;
//    lowering unrolls the ring into its steps (synth/parallel/ring_attention.cpp).
#include "base/error.h"
#include "synth/models/layer_parts.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::TensorId;

namespace {

constexpr auto kCP = static_cast<std::uint8_t>(Axis::kCP);

// x [b, seq, heads, width] as [b, p, seq, heads, width] with p over CP: the CP group's chunk.
TensorId chunked(Graph& g, const std::string& name, TensorId x) {
  Layout l = g.tensor(x).layout;
  l.labels.insert(1, 1, 'p');
  for (std::size_t d = l.labels.size() - 1; d > 1; --d) {
    l.shard[d] = l.shard[d - 1];
  }
  l.shard[1] = kCP;
  return g.relabel(name, x, l);
}

TensorId gathered(Graph& g, const std::string& name, TensorId x) {
  const TensorId c = chunked(g, name, x);
  Layout whole = g.tensor(c).layout;
  whole.shard[1] = stg::kReplicated;
  return g.convert(c, whole);
}

// Ulysses' view of x [b, seq, heads, width]: [b, p, seq, m, group, width] with the heads cut
// into cp groups m of `group` heads (heads over TP, as before), p over CP when `chunk`,
// else m.
Layout ulysses_layout(const Layout& x, char group, bool chunk) {
  Layout l(std::string("bp") + x.labels[1] + "m" + group + x.labels[3]);
  l.shard[0] = x.shard[0];
  l.shard[1] = chunk ? kCP : stg::kReplicated;
  l.shard[3] = chunk ? stg::kReplicated : kCP;
  l.shard[4] = x.shard[2];
  return l;
}

// x [b, seq, heads, width] (this rank's tokens, all its heads) to [b, T, group, width] (the
// whole sequence, 1/cp of its heads) through the all-to-all over CP.
TensorId heads_for_sequence(Graph& g, const std::string& name, TensorId x, char group) {
  const Layout in = g.tensor(x).layout;
  TensorId v = g.relabel(name + ".view", x, ulysses_layout(in, group, true));
  v = g.convert(v, ulysses_layout(in, group, false));
  Layout whole(std::string("bT") + group + in.labels[3]);
  whole.shard[0] = in.shard[0];
  whole.shard[2] = in.shard[2];
  return g.relabel(name + ".whole", v, whole);
}

// The way back: y [b, T, group, width] to `out` [b, seq, heads, width].
TensorId sequence_for_heads(Graph& g, const std::string& name, TensorId y, const Layout& out) {
  const char group = g.tensor(y).layout.labels[2];
  TensorId v = g.relabel(name + ".view", y, ulysses_layout(out, group, false));
  v = g.convert(v, ulysses_layout(out, group, true));
  return g.relabel(name + ".local", v, out);
}

TensorId ulysses(Graph& g, const Scenario& s, const std::string& name, TensorId q, TensorId k,
                 TensorId v) {
  auto group_of = [&](TensorId x) { return g.tensor(x).layout.labels[2] == 'g' ? 'G' : 'A'; };
  TensorId qh = heads_for_sequence(g, name + ".a2a_q", q, 'A');
  TensorId kh = heads_for_sequence(g, name + ".a2a_k", k, group_of(k));
  TensorId vh = heads_for_sequence(g, name + ".a2a_v", v, group_of(v));
  TensorId y = g.attention(name, qh, kh, vh, s.model.causal);
  Layout out = g.tensor(q).layout;
  out.labels.back() = g.tensor(v).layout.labels.back();
  return sequence_for_heads(g, name + ".a2a_out", y, out);
}

}  // namespace

TensorId core_attention(Graph& g, const Scenario& s, const std::string& name, TensorId q,
                        TensorId k, TensorId v, std::int64_t window) {
  if (s.parallel.cp == 1) {
    return g.attention(name, q, k, v, s.model.causal, 0, window);
  }
  if (window > 0) {  // validate_cp.cpp turns the scenario down first
    throw base::InternalError("sliding-window attention under context parallelism");
  }
  if (s.parallel.cp_comm_type() == CpComm::kA2A) {
    return ulysses(g, s, name, q, k, v);
  }
  if (s.parallel.cp_comm_type() == CpComm::kP2P) {
    return g.ring_attention(name, q, k, v, s.model.causal, kCP, static_cast<int>(s.parallel.cp));
  }
  TensorId kg = gathered(g, name + ".cp_k", k);
  TensorId vg = gathered(g, name + ".cp_v", v);
  return g.attention(name, q, kg, vg, s.model.causal, stg::axis_bit(Axis::kCP));
}

}  // namespace tessera::synth::models
