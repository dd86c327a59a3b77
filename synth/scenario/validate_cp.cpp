// SPDX-License-Identifier: Apache-2.0
// Context parallelism against the sequence, the heads and the attention kernel
// (docs/context_parallel.md).
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"

namespace tessera::synth::detail {

namespace {

std::string_view cp_comm_name(CpComm c) {
  return c == CpComm::kP2P ? "p2p" : c == CpComm::kAllGather ? "allgather" : "a2a";
}

// Ulysses gives each rank heads / cp of its tensor-parallel heads (Transformer Engine asserts
// that both the query and the key-value heads divide).
void check_ulysses_heads(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  const std::int64_t heads = s.model.heads / p.tp;
  const std::int64_t kv = std::max<std::int64_t>(1, s.model.kv_heads / p.tp);
  for (auto [n, what, key] : {std::tuple{heads, "attention heads", "model.heads"},
                              std::tuple{kv, "key-value heads", "model.kv_heads"}}) {
    if (n % p.cp != 0) {
      out.push_back({"parallelism.cp",
                     fmt::format("cp_comm: a2a gives each rank 1/cp of its {}, but a tensor-"
                                 "parallel rank holds {} ({}/tp), which cp={} does not divide",
                                 what, n, key, p.cp),
                     "choose a cp that divides the heads per tensor-parallel rank, or cp_comm: "
                     "allgather"});
      return;
    }
  }
}

}  // namespace

void check_context_parallel(const Scenario& s, Violations& out) {
  const ParallelConfig& p = s.parallel;
  if (p.cp < 1) {
    out.push_back({"parallelism.cp", fmt::format("expected an integer >= 1, got {}", p.cp)});
    return;
  }
  if (p.cp == 1) {
    if (p.cp_comm) {
      out.push_back({"parallelism.cp_comm",
                     "cp_comm chooses how context-parallel attention communicates; it needs "
                     "cp > 1",
                     "set parallelism.cp, or leave cp_comm out"});
    }
    return;
  }
  if (s.training.seq_len % (2 * p.cp) != 0) {
    out.push_back({"training.seq_len",
                   fmt::format("seq_len={} is not divisible by 2 x cp = {}: context parallelism "
                               "cuts each sequence into 2 x cp chunks (Megatron's load balancing)",
                               s.training.seq_len, 2 * p.cp)});
  }
  if (p.cp_comm_type() == CpComm::kA2A) {
    check_ulysses_heads(s, out);
  }
  if (!fused(s.training.attention)) {
    out.push_back({"training.attention",
                   fmt::format("context parallelism (cp_comm: {}) runs fused attention "
                               "(Transformer Engine's); attention: unfused does not",
                               cp_comm_name(p.cp_comm_type())),
                   "use attention: flash"});
  }
  if (s.encoder.present) {
    out.push_back(
        {"parallelism.cp", "context parallelism with an encoder region is not modelled yet"});
  }
  if (s.model.sliding_window > 0) {
    out.push_back({"parallelism.cp",
                   "context parallelism with sliding-window attention (model.sliding_window) is "
                   "not modelled yet",
                   "use cp: 1"});
  }
}

}  // namespace tessera::synth::detail
