// SPDX-License-Identifier: Apache-2.0
// StageBuilder's overlap of communication as the frameworks schedule it (docs/overlap.md):
// blocking pipeline send/recv (the next compute waits for the sends) and the distributed
// optimizer's parameter all-gather overlapping the next step's forward, and paired tasks'
// expert-parallel all-to-alls.
#include <algorithm>

#include "synth/build/stage_builder.h"

namespace tessera::synth::detail {

// Megatron-LM's default: 1F1B (and GPipe, the zero-bubble schedules) waits for its batched
// isend/irecv before the next compute; the interleaved schedule overlaps them in the
// performance recipes (--overlap-p2p-communication), DualPipe(V) overlaps by construction.
bool overlaps_p2p(const Scenario& s) {
  if (s.training.overlap_p2p_comm) {
    return *s.training.overlap_p2p_comm;
  }
  const ScheduleKind k = s.schedule.kind;
  return k == ScheduleKind::kInterleaved || k == ScheduleKind::kDualPipe ||
         k == ScheduleKind::kDualPipeV;
}

// A paired forward and backward (combined 1F1B, DualPipe's F&B) with expert-parallel
// all-to-alls to overlap: built one after the other; build() re-issues them interleaved
// (pair_interleave.h) once every node of the step exists.
void StageBuilder::run_pair(const schedule::Task& fwd, const schedule::Task& bwd) {
  wait_sends();
  TaskPair p;
  p.lo = static_cast<NodeId>(g_.size());
  run_task(fwd);
  p.mid = static_cast<NodeId>(g_.size());
  run_task(bwd);
  p.hi = static_cast<NodeId>(g_.size());
  pairs_.push_back(p);
}

void StageBuilder::hold_send(NodeId send) {
  if (!overlaps_p2p(c_.s)) {
    pending_sends_.push_back(send);
  }
}

// A zero-time compute node that waits for the held sends: the compute stream runs in order,
// so nothing computes past it before they are done. It belongs to no microbatch (it waits
// for the previous task's messages, not for the next task's input).
void StageBuilder::wait_sends() {
  if (pending_sends_.empty()) {
    return;
  }
  marker(c_.p2p_names.wait_sends, -1, pending_sends_, 0, 0);
  pending_sends_.clear();
}

// The gradient buckets over `params` (blocks in model order), formed from the last block
// backwards as Megatron-Core does: a bucket closes once it holds `cap` parameters. Each entry
// is [first, last) in model order; the list runs in the order the buckets close.
std::vector<std::pair<std::size_t, std::size_t>> grad_buckets(const std::vector<double>& params,
                                                              double cap) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  double acc = 0.0;
  std::size_t end = params.size();
  for (std::size_t k = params.size(); k-- > 0;) {
    acc += params[k];
    if (acc >= cap) {
      out.emplace_back(k, end);
      end = k;
      acc = 0.0;
    }
  }
  if (acc > 0.0) {
    out.emplace_back(0, end);
  }
  return out;
}

// overlap_param_gather in the steady state of a run: the previous step's optimizer updated
// the shards, and the all-gather of each bucket (the LLM's blocks, in forward order; with MoE
// layers the experts' buckets over their expert-data-parallel group beside the dense ones)
// runs at the start of this step on the data-parallel stream; each block's first forward
// waits for its buckets. Megatron-Core dispatches bucket b+1 when bucket b's wait returns,
// which on an in-order stream is the same order and time.
void StageBuilder::param_gathers() {
  const Scenario& s = c_.s;
  gather_of_block_.assign(blocks_.size(), {kNone, kNone});
  const std::int64_t zero = s.zero_stage();
  if (zero == 0 || zero == 3 || !s.training.overlap_param_gather) {
    return;
  }
  const std::vector<GradDomain> domains = grad_domains();
  for (const ParamGather& p : plan_param_gathers(domains)) {
    const std::size_t slot = domains[p.domain].experts ? 1 : 0;
    double bytes = p.params * base::dtype_bytes(s.training.precision);
    for (std::size_t k = p.lo; k < p.hi; ++k) {
      bytes -= fp8_gather_saving(k, domains[p.domain]);
    }
    NodeId ag = dp_collective(graph::CollType::kAllGather, domains[p.domain].group, bytes,
                              s.training.precision, {}, c_.reduction_names.param_gather,
                              graph::Phase::kForward);
    gathered_params_[slot] += p.params;
    for (std::size_t k = p.lo; k < p.hi; ++k) {
      gather_of_block_[k][slot] = ag;
    }
  }
}

// The gather buckets of every domain with a group, in forward order (dense first at a tie):
// the same buckets as the gradients', each narrowed to the blocks holding its parameters.
std::vector<StageBuilder::ParamGather> StageBuilder::plan_param_gathers(
    const std::vector<GradDomain>& domains) const {
  std::vector<ParamGather> plan;
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i].group < 0) {
      continue;
    }
    std::vector<double> params;
    for (const StageBlock& b : blocks_) {
      params.push_back(domains[i].experts ? b.prog->expert_params
                                          : b.prog->params - b.prog->expert_params);
    }
    for (auto [lo, hi] : grad_buckets(params, grad_bucket_params(c_.s))) {
      while (lo < hi && params[lo] <= 0.0) {
        ++lo;
      }
      double bp = 0.0;
      for (std::size_t k = lo; k < hi; ++k) {
        bp += params[k];
      }
      if (bp > 0.0) {
        plan.push_back({lo, hi, i, bp});
      }
    }
  }
  std::stable_sort(plan.begin(), plan.end(), [](const ParamGather& a, const ParamGather& b) {
    return a.lo < b.lo || (a.lo == b.lo && a.domain < b.domain);
  });
  return plan;
}

// Before block `k`'s (index into blocks_) first forward: wait for its parameters (a wait of
// no microbatch, like wait_sends).
void StageBuilder::wait_params(std::size_t k) {
  if (k >= gather_of_block_.size()) {
    return;
  }
  std::vector<NodeId> deps;
  for (std::size_t d = 0; d < 2; ++d) {
    const NodeId ag = gather_of_block_[k][d];
    if (ag == kNone) {
      continue;
    }
    deps.push_back(ag);
    for (auto& g : gather_of_block_) {
      g[d] = g[d] == ag ? kNone : g[d];
    }
  }
  if (!deps.empty()) {
    marker(c_.reduction_names.param_wait, -1, deps, 0, 0);
  }
}

}  // namespace tessera::synth::detail
