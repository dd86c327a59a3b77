// SPDX-License-Identifier: Apache-2.0
// StageBuilder's overlap of communication as the frameworks schedule it (docs/overlap.md):
// blocking pipeline send/recv (the next compute waits for the sends) and the distributed
// optimizer's parameter all-gather overlapping the next step's forward.
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
// the shards, and the all-gather of each bucket (the LLM's blocks, in forward order) runs at
// the start of this step on the data-parallel stream; each block's first forward waits for
// its bucket. Megatron-Core dispatches bucket b+1 when bucket b's wait returns, which on an
// in-order stream is the same order and time.
void StageBuilder::param_gathers() {
  const Scenario& s = c_.s;
  std::int32_t dp_group =
      c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kDP)];
  gather_of_block_.assign(blocks_.size(), kNone);
  if (!s.training.distributed_optimizer || !s.training.overlap_param_gather || dp_group < 0) {
    return;
  }
  std::vector<double> params;
  for (const StageBlock& b : blocks_) {
    params.push_back(b.prog->params);
  }
  auto buckets = grad_buckets(params, grad_bucket_params(s));
  std::reverse(buckets.begin(), buckets.end());  // forward order
  for (const auto& [lo, hi] : buckets) {
    double bp = 0.0;
    for (std::size_t k = lo; k < hi; ++k) {
      bp += params[k];
    }
    NodeId ag = dp_collective(graph::CollType::kAllGather, dp_group,
                              bp * base::dtype_bytes(s.training.precision), s.training.precision,
                              {}, c_.reduction_names.param_gather, graph::Phase::kForward);
    gathered_params_ += bp;
    std::fill(gather_of_block_.begin() + static_cast<std::ptrdiff_t>(lo),
              gather_of_block_.begin() + static_cast<std::ptrdiff_t>(hi), ag);
  }
}

// Before block `k`'s (index into blocks_) first forward: wait for its parameters (a wait of
// no microbatch, like wait_sends).
void StageBuilder::wait_params(std::size_t k) {
  if (k >= gather_of_block_.size() || gather_of_block_[k] == kNone) {
    return;
  }
  const NodeId ag = gather_of_block_[k];
  std::replace(gather_of_block_.begin(), gather_of_block_.end(), ag, kNone);
  marker(c_.reduction_names.param_wait, -1, {ag}, 0, 0);
}

}  // namespace tessera::synth::detail
