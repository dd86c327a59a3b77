// SPDX-License-Identifier: Apache-2.0
// The mixture-of-experts MLP of a decoder layer (docs/moe.md), as Megatron-Core's MoELayer
// with the alltoall (or allgather) token dispatcher runs it: router, permute, the experts as
// grouped GEMMs (one [rows x h] GEMM per expert; experts over ep, each one's MLP over etp),
// unpermute, and the shared experts beside them. The dispatch and combine collectives over ep
// and the expert-tensor all-gather and reduce-scatter come from the layouts.
#include <algorithm>
#include <cmath>

#include "synth/models/layer_parts.h"
#include "synth/models/transformer.h"

namespace tessera::synth::models {

using stg::Graph;
using stg::Layout;
using stg::OpKind;
using stg::TensorId;

std::int64_t expert_rows(const Scenario& s) {
  const MoeConfig& m = s.model.moe;
  // A rank holds micro_batch x s/(tp x cp) tokens (sequence and context parallelism) and routes k
  // copies of each; balanced, every expert gets an equal share, rounded up.
  const std::int64_t routed = s.training.micro_batch * s.local_seq() / s.parallel.tp * m.top_k;
  std::int64_t rows = (routed + m.experts - 1) / m.experts;
  if (m.capacity_factor > 0.0) {  // Megatron's get_capacity: ceil(tokens x k x CF / E)
    const double cap =
        std::ceil(static_cast<double>(routed) * m.capacity_factor / static_cast<double>(m.experts));
    rows = std::min(rows, static_cast<std::int64_t>(std::min(cap, static_cast<double>(rows))));
  }
  return rows * s.parallel.ep;
}

stg::Layout token_rows(const Scenario& s) {
  Layout rows("nxirh");
  auto shard = [&](char label, Axis a, std::int64_t size) {
    if (size > 1) {  // an axis of one rank moves nothing
      rows.sharded(label, a);
    }
  };
  shard('n', Axis::kEDP, s.parallel.edp());
  shard('i', Axis::kETP, s.parallel.etp);
  shard('r', Axis::kEP, s.parallel.ep);
  return rows;
}

namespace {

// A routed expert's weight of `labels`: experts over ep, the hidden width `width` over etp.
TensorId expert_weight(Graph& g, const Scenario& s, const std::string& name,
                       const std::string& labels, char width) {
  Layout l(labels);
  if (s.parallel.ep > 1) {
    l.sharded('x', Axis::kEP);
  }
  if (s.parallel.etp > 1) {
    l.sharded(width, Axis::kETP);
  }
  return g.expert_weight(name, l, s.training.precision);
}

// The routed experts on the dispatched rows [n, x, i, r, h]: fc1 and fc2 as batched GEMMs
// over the expert dimension, each expert's rows gathered from its EP and ETP groups by the
// matcher (the dispatch all-to-all and the expert-tensor all-gather).
TensorId experts(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId rows) {
  const bool gelu = s.model.activation == Activation::kGelu;
  const char w = gelu ? 'u' : 'w';  // fc1's width: f_e, or gate and up (2 f_e) with SwiGLU
  TensorId w1 = expert_weight(g, s, "moe.experts.fc1.weight", std::string("xh") + w, w);
  TensorId h1 =
      linear(g, fp8, "moe.experts.fc1", std::string("nxirh,xh") + w + "->nxir" + w, rows, w1);
  TensorId act = gelu ? g.unary(OpKind::kGelu, "moe.experts.gelu", h1)
                      : g.swiglu("moe.experts.swiglu", h1, 'u', s.training.eager_elementwise);
  TensorId w2 = expert_weight(g, s, "moe.experts.fc2.weight", "xuh", 'u');
  return linear(g, fp8, "moe.experts.fc2", "nxiru,xuh->nxirh", act, w2);
}

// Per-token tensors [b, s, last] relabelled over the expert axes [n, j, o, last] (expert-data-
// parallel group, EP rank, a rank's tokens), as each rank holds them.
Layout tokens_over_ep(const Scenario& s, char last) {
  Layout l(std::string("njo") + last);
  if (s.parallel.edp() > 1) {
    l.sharded('n', Axis::kEDP);
  }
  if (s.parallel.ep > 1) {
    l.sharded('j', Axis::kEP);
  }
  return l;
}

// A per-token tensor gathered over the EP group (j whole).
TensorId gather_over_ep(Graph& g, const Scenario& s, const std::string& name, TensorId t) {
  Layout local = tokens_over_ep(s, g.tensor(t).layout.labels.back());
  Layout all = local;
  all.shard[1] = stg::kReplicated;
  return g.convert(g.relabel(name, t, local), all);
}

// Megatron-Core's MoEAllGatherTokenDispatcher (etp 1): the EP group's tokens, probabilities
// and routing map all-gathered, the rows of this rank's experts selected from them, the
// experts' outputs weighted and summed back into the gathered tokens (a partial sum over EP)
// and reduce-scattered to their ranks.
TensorId allgather_experts(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId ln,
                           TensorId map, TensorId probs) {
  const Layout tokens = g.tensor(ln).layout;  // a copy: the graph grows below
  TensorId all = gather_over_ep(g, s, "moe.tokens", ln);
  TensorId all_probs = gather_over_ep(g, s, "moe.route.probs_all", probs);
  TensorId all_map = gather_over_ep(g, s, "moe.route.map_all", map);
  Layout rows = token_rows(s);  // this rank's experts, their rows from every EP rank
  rows.shard[1] = rows.shard[3];
  rows.shard[3] = stg::kReplicated;
  TensorId routed = g.permute("moe.permute", all, all_map, rows);
  TensorId z = g.unpermute("moe.unpermute", experts(g, s, fp8, routed), all_probs, rows,
                           g.tensor(all).layout);
  return g.relabel("moe.tokens_back", g.convert(z, tokens_over_ep(s, 'h')), tokens);
}

}  // namespace

TensorId moe_mlp(Graph& g, const Scenario& s, const Fp8Plan& fp8, TensorId x) {
  const MoeConfig& m = s.model.moe;
  TensorId ln = norm(g, s, "mlp.norm", x);
  TensorId wr = g.weight("moe.router.weight", Layout("hx"), s.training.precision);
  TensorId logits = g.einsum("moe.router", "bsh,hx->bsx", ln, wr);
  auto [probs, map] = g.route("moe.route", logits);
  const MlpLabels shared_labels{"moe.shared", 'y', 'z', false};
  TensorId shared = -1;
  TensorId y = -1;
  if (m.dispatcher == MoeDispatcher::kAllGather) {
    y = allgather_experts(g, s, fp8, ln, map, probs);
  } else {
    const Layout rows = token_rows(s);
    TensorId routed = g.permute("moe.permute", ln, map, rows);
    if (m.shared_experts > 0 && m.shared_expert_overlap) {
      // The dispatch goes out first; the shared experts compute while it is in flight.
      Layout dispatched = rows;
      dispatched.shard[1] = rows.shard[3];  // the experts over ep, their rows whole
      dispatched.shard[3] = stg::kReplicated;
      routed = g.convert(routed, dispatched);
      shared = mlp_branch(g, s, fp8, ln, shared_labels);
    }
    y = g.unpermute("moe.unpermute", experts(g, s, fp8, routed), probs, rows, g.tensor(x).layout);
  }
  if (m.shared_experts > 0) {
    y = g.add("moe.shared_add", y, shared >= 0 ? shared : mlp_branch(g, s, fp8, ln, shared_labels));
  }
  return g.dropout_add("mlp.residual", y, x, s.model.dropout > 0.0);
}

}  // namespace tessera::synth::models
