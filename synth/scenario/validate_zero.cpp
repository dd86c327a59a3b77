// SPDX-License-Identifier: Apache-2.0
// Sharded data parallelism (ZeRO stages, HSDP's shard groups, FSDP's resharding) against the
// data-parallel size and what it is not modelled with yet (docs/sharded_data_parallel.md).
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

namespace {

// distributed_optimizer shards the optimizer's state, as every stage from 1 on does.
void check_zero_stage(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  if (p.zero == 0 && s.training.distributed_optimizer) {
    out.push_back({"parallelism.zero",
                   "zero: 0 contradicts training.distributed_optimizer: true, which shards the "
                   "optimizer's state (ZeRO-1)",
                   "remove one of them"});
  }
  // With dp x cp = 1 a ZeRO stage shards over one rank: nothing, as Megatron's distributed
  // optimizer and FSDP on one rank do; it is accepted and changes nothing.
}

void check_dp_shard(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  if (p.dp_shard == 0) {
    return;
  }
  if (s.zero_stage() == 0) {
    out.push_back({"parallelism.dp_shard",
                   "dp_shard sizes the groups that shard the optimizer, gradients or weights; "
                   "it needs zero >= 1",
                   "set parallelism.zero (3 for HSDP)"});
  } else if (p.dp % p.dp_shard != 0) {
    out.push_back({"parallelism.dp_shard",
                   fmt::format("dp_shard={} does not divide dp={}: HSDP shards within groups "
                               "of dp_shard data-parallel ranks and replicates across dp / "
                               "dp_shard of them",
                               p.dp_shard, p.dp)});
  }
}

// ZeRO-2/3 reduce each unit's gradients in every backward; what does not fit that yet.
void check_sharded_gradients(const Scenario& s, Violations& out) {
  const std::int64_t zero = s.zero_stage();
  if (s.training.reshard_after_forward && zero != 3) {
    out.push_back({"training.reshard_after_forward",
                   fmt::format("reshard_after_forward says whether ZeRO-3 gathers the weights "
                               "again for the backward; zero is {}",
                               zero),
                   "set parallelism.zero: 3, or leave reshard_after_forward out"});
  }
  if (s.training.backward_prefetch && zero != 3) {
    out.push_back({"training.backward_prefetch",
                   fmt::format("backward_prefetch says when ZeRO-3 gathers a unit's weights for "
                               "its backward; zero is {}",
                               zero),
                   "set parallelism.zero: 3, or leave backward_prefetch out"});
  }
  if (zero < 2) {
    return;
  }
  const auto where = fmt::format("parallelism.zero: {}", zero);
  if (!s.training.overlap_grad_reduce) {
    out.push_back({"training.overlap_grad_reduce",
                   fmt::format("{} reduce-scatters each layer's gradients in every backward; "
                               "overlap_grad_reduce: false (one reduction after the backward) "
                               "does not apply",
                               where),
                   "leave overlap_grad_reduce out"});
  }
  const ScheduleKind k = s.schedule.kind;
  if (k == ScheduleKind::kDualPipe || k == ScheduleKind::kDualPipeV) {
    out.push_back(
        {"parallelism.zero", fmt::format("{} with DualPipe(V) is not modelled yet", where)});
  }
  if (s.encoder.present) {
    out.push_back(
        {"parallelism.zero", fmt::format("{} with an encoder region is not modelled yet", where)});
  }
}

}  // namespace

void check_sharded_data_parallel(const Scenario& s, Violations& out) {
  check_zero_stage(s, out);
  check_dp_shard(s, out);
  check_sharded_gradients(s, out);
}

}  // namespace tessera::synth::detail
