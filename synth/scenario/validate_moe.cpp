// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers against the model and the parallelism (docs/moe.md), and the
// latent attention against the model (docs/mla.md).
#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

namespace {

// Expert parallelism against the experts and the devices of a pipeline stage.
void check_expert_parallelism(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  const MoeConfig& m = s.model.moe;
  check_divides(out, "parallelism.ep", p.ep, "ep", m.experts, "model.moe.experts");
  if (p.stage_ranks() % (p.ep * p.etp) != 0) {
    const std::string cp = p.cp > 1 ? fmt::format(" x {}", p.cp) : "";
    out.push_back(
        {p.ep > 1 ? "parallelism.ep" : "parallelism.etp",
         fmt::format("ep x etp = {} x {} = {} does not divide the {} devices of a pipeline "
                     "stage (tp{} x dp = {}{} x {}): the experts fold a stage's devices into "
                     "etp x ep x edp",
                     p.ep, p.etp, p.ep * p.etp, p.stage_ranks(), p.cp > 1 ? " x cp" : "", p.tp, cp,
                     p.dp),
         p.cp > 1 ? "choose ep and etp whose product divides tp x cp x dp"
                  : "choose ep and etp whose product divides tp x dp"});
  }
  // Each expert's MLP is sharded over etp; the shared experts over tp, like the dense MLP.
  check_divides(out, "parallelism.etp", p.etp, "etp", m.expert_ffn, "model.moe.expert_ffn");
}

// The all-gather dispatcher gathers over EP; with expert tensor parallelism Megatron-Core
// gathers over ETP x EP and keeps the experts' ETP partial sums to its reduce-scatter, which
// the tensor graph cannot express yet. Megatron-Core's shared-expert overlap is the
// all-to-all dispatcher's.
void check_allgather_dispatcher(const Scenario& s, Violations& out) {
  if (s.parallel.etp > 1) {
    out.push_back({"model.moe.dispatcher",
                   fmt::format("`model.moe.dispatcher: allgather` with parallelism.etp={} is not "
                               "modelled yet",
                               s.parallel.etp),
                   "use etp 1 with it, or dispatcher: alltoall"});
  }
  if (s.model.moe.shared_expert_overlap) {
    out.push_back({"model.moe.shared_expert_overlap",
                   "shared_expert_overlap overlaps the shared experts with the dispatch "
                   "all-to-all, which the allgather dispatcher does not run (Megatron-Core "
                   "supports it with alltoall only)",
                   "leave shared_expert_overlap out, or use dispatcher: alltoall"});
  }
}

// Overlapping one microbatch's all-to-alls with another's compute (docs/moe.md, "Overlap"),
// when asked for: Megatron-Core's combined 1F1B needs EP > 1, and with pp > 1 the interleaved
// schedule (Megatron-Bridge's comm-overlap checks); DualPipe(V) pairs by construction. (Its
// default for DualPipe(V) leaves out what excludes it: Scenario::overlaps_ep_comm.)
void check_ep_overlap(const Scenario& s, Violations& out) {
  if (!s.parallel.ep_comm_overlap.value_or(false)) {
    return;
  }
  constexpr std::string_view kKey = "parallelism.ep_comm_overlap";
  if (!s.model.moe.on() || s.parallel.ep == 1) {
    out.push_back({std::string(kKey),
                   "ep_comm_overlap overlaps the expert-parallel all-to-alls, which need "
                   "model.moe and parallelism.ep > 1",
                   "leave ep_comm_overlap out, or set parallelism.ep"});
    return;
  }
  const ScheduleKind k = s.schedule.kind;
  const bool pairs = k == ScheduleKind::kInterleaved || k == ScheduleKind::kDualPipe ||
                     k == ScheduleKind::kDualPipeV ||
                     (k == ScheduleKind::k1F1B && s.parallel.pp == 1);
  if (!pairs) {
    out.push_back(
        {std::string(kKey),
         fmt::format("ep_comm_overlap pairs each steady-state forward with a backward, as "
                     "Megatron-Core's combined 1F1B does for 1f1b without pipelining and for "
                     "the interleaved schedule, and DualPipe(V) by construction; {} with pp={} "
                     "has no such pairs",
                     schedule_name(k), s.parallel.pp),
         "use schedule: interleaved (or dualpipev), or leave ep_comm_overlap out"});
  }
  if (s.model.moe.dispatcher == MoeDispatcher::kAllGather) {
    out.push_back({std::string(kKey),
                   "ep_comm_overlap overlaps all-to-alls; Megatron-Core's combined 1F1B needs "
                   "the alltoall dispatcher (model.moe.dispatcher: allgather is set)",
                   "use model.moe.dispatcher: alltoall, or leave ep_comm_overlap out"});
  }
  if (s.model.moe.shared_expert_overlap) {
    out.push_back({"model.moe.shared_expert_overlap",
                   "shared_expert_overlap with parallelism.ep_comm_overlap: Megatron-Core runs "
                   "one or the other (its docs say to switch shared-expert overlap off)",
                   "leave shared_expert_overlap out"});
  }
}

// Group-limited routing: equal groups of whole experts, the groups a token may use at most
// all of them, and enough experts in them for its k.
void check_router_groups(const MoeConfig& m, Violations& out) {
  if (m.router_groups == 0 && m.router_group_topk == 0) {
    return;
  }
  if (m.router_groups == 0) {
    out.push_back({"model.moe.router_group_topk",
                   "router_group_topk without router_groups: the groups are not given",
                   "set model.moe.router_groups (Megatron-Core's --moe-router-num-groups)"});
    return;
  }
  check_divides(out, "model.moe.router_groups", m.router_groups, "router_groups", m.experts,
                "model.moe.experts");
  if (m.router_group_topk > m.router_groups) {
    out.push_back({"model.moe.router_group_topk",
                   fmt::format("router_group_topk={} is more than router_groups={}",
                               m.router_group_topk, m.router_groups),
                   "a token picks router_group_topk of the router_groups groups"});
  } else if (m.experts % m.router_groups == 0 &&
             m.top_k > m.router_group_topk * (m.experts / m.router_groups)) {
    out.push_back({"model.moe.router_group_topk",
                   fmt::format("top_k={} experts do not fit in router_group_topk={} groups of {}",
                               m.top_k, m.router_group_topk, m.experts / m.router_groups),
                   "raise router_group_topk, or lower top_k"});
  }
}

}  // namespace

void check_moe(const Scenario& s, Violations& out) {
  const MoeConfig& m = s.model.moe;
  check_ep_overlap(s, out);
  if (!m.on()) {
    for (auto [key, size] : {std::pair{"parallelism.ep", s.parallel.ep},
                             std::pair{"parallelism.etp", s.parallel.etp}}) {
      if (size > 1) {
        out.push_back({key,
                       fmt::format("{}={} needs a model with experts (model.moe)",
                                   std::string_view(key).substr(12), size),
                       "leave it out, or give the model a model.moe section"});
      }
    }
    return;
  }
  if (m.first_dense_layers >= s.model.layers) {
    out.push_back({"model.moe.first_dense_layers",
                   fmt::format("first_dense_layers={} leaves no MoE layer of model.layers={}",
                               m.first_dense_layers, s.model.layers),
                   "a dense model leaves out model.moe"});
  }
  if (m.top_k > m.experts) {
    out.push_back({"model.moe.top_k",
                   fmt::format("top_k={} is more than experts={}", m.top_k, m.experts),
                   "each token is routed to top_k distinct experts"});
  }
  if (s.parallel.tp > 1 && !s.parallel.sp) {
    out.push_back({"parallelism.sp",
                   fmt::format("MoE layers with tp={} need sequence parallelism (Megatron-Core "
                               "requires it for MoE with tensor parallelism)",
                               s.parallel.tp),
                   "set parallelism.sp: true", "parallelism.tp"});
  }
  check_expert_parallelism(s, out);
  check_router_groups(m, out);
  if (m.dispatcher == MoeDispatcher::kAllGather) {
    check_allgather_dispatcher(s, out);
  }
  if (m.shared_experts > 0) {
    check_divides(out, "parallelism.tp", s.parallel.tp, "tp", m.shared_ffn(),
                  "model.moe.shared_experts x shared_expert_ffn");
  }
}

// DeepSeek's latent attention against the rest of the model (docs/mla.md).
void check_mla(const Scenario& s, Violations& out) {
  const ModelConfig& m = s.model;
  if (!m.mla.on()) {
    return;
  }
  if (m.kv_heads != m.heads) {
    out.push_back({"model.kv_heads",
                   fmt::format("kv_heads={} with model.mla: latent attention gives every one of "
                               "the heads={} its own keys and values",
                               m.kv_heads, m.heads),
                   "leave kv_heads out"});
  }
  if (m.head_size > 0) {
    out.push_back({"model.head_dim",
                   "model.head_dim with model.mla: the latent attention's heads are "
                   "qk_nope_head_dim + qk_rope_head_dim wide (values v_head_dim)",
                   "leave head_dim out"});
  }
  if (m.bias) {
    out.push_back({"model.bias", "model.mla is modelled without biases (DeepSeek's carry none)",
                   "set model.bias: false"});
  }
  if (!fused(s.training.attention)) {
    out.push_back({"training.attention",
                   "model.mla runs its core attention as a fused (flash) kernel",
                   "set training.attention: flash"});
  }
}

}  // namespace tessera::synth::detail
