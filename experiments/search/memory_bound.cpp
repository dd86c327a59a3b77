// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/memory_bound.h"

#include <algorithm>
#include <vector>

#include "synth/models/transformer.h"
#include "synth/parallel/block_program.h"
#include "synth/parallel/layer_split.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::experiments::search {

namespace {

using synth::Scenario;
using synth::schedule::Task;

// One decoder layer as a rank holds it: its weights (per rank, the routed experts' apart) and
// the activations it keeps from forward for backward, per microbatch, under the scenario's
// recompute and with none (what a fully recomputed layer holds again during its backward).
struct LayerCost {
  double params = 0.0;
  double expert_params = 0.0;
  double saved_bytes = 0.0;
  double recomputed_bytes = 0.0;
};

LayerCost layer_cost(const Scenario& s, bool moe) {
  const synth::models::Block block = synth::models::make_layer(s, true, moe);
  const synth::parallel::BlockProgram p = synth::parallel::lower(block, s.training.recompute);
  LayerCost c{p.params, p.expert_params, p.saved_bytes, 0.0};
  if (s.training.recompute == synth::Recompute::kFull ||
      s.training.recompute == synth::Recompute::kSelectiveOp) {
    c.recomputed_bytes =
        synth::parallel::lower(block, synth::Recompute::kNone).saved_bytes - p.saved_bytes;
  }
  return c;
}

// What one rank holds for its model chunks: weights with their gradients and optimizer state,
// each chunk's activations per microbatch, and the most any one layer adds while it runs its
// backward (recomputed activations, ZeRO-3's gathered weights). Where ZeRO-3 keeps its units
// over the step, each chunk's gathered weights and unsharded gradients beyond the shard.
struct RankHold {
  double static_bytes = 0.0;
  std::vector<double> chunk_saved;
  std::vector<double> chunk_weights;
  std::vector<double> chunk_grads;
  double transient = 0.0;
};

// A chunk's units under ZeRO-3 that keeps them (search/point.cpp: a pipeline without
// resharding): gathered from its first forward to its last backward, their gradients unsharded
// from its first weight gradients on.
struct KeptUnits {
  bool gathered = false;
  bool grads = false;
  bool released = false;
  std::int64_t backwards = 0;
};

class Bounder {
 public:
  explicit Bounder(const Scenario& s)
      : s_(s),
        place_(s.schedule, static_cast<int>(s.parallel.pp)),
        dense_(layer_cost(s, false)),
        sparse_(s.model.moe.on() ? layer_cost(s, true) : dense_) {
    const auto& p = s.parallel;
    enc_stages_ = s.encoder.present && s.schedule.encoder == synth::EncoderPlacement::kStages
                      ? s.schedule.encoder_stages
                      : 0;
    llm_stages_ = place_.stages_per_pipe() - enc_stages_;
    bounds_ = synth::parallel::layer_bounds(
        s.model.layers, llm_stages_,
        synth::parallel::stage_layer_counts(p, s.model.layers, llm_stages_));
    // Static bytes per parameter, the ZeRO stage's shards over DP x CP (dense), EDP (experts).
    const std::int64_t zero = s.zero_stage();
    keeps_ = zero == 3 && !s.reshards_after_forward() && p.pp > 1;
    dense_shards_ = static_cast<double>(p.shard_dp() * p.cp);
    dense_b_ = s.training.static_bytes_per_param(zero, dense_shards_);
    expert_shards_ = static_cast<double>(p.edp());
    expert_b_ = s.training.static_bytes_per_param(zero, expert_shards_);
    // The embedding, vocabulary-parallel over TP.
    embed_ = static_cast<double>(s.model.vocab * s.model.hidden) / static_cast<double>(p.tp);
  }

  [[nodiscard]] MemoryBound rank_bound(int r) const {
    const RankHold h = hold(r);
    MemoryBound b;
    b.static_bytes = h.static_bytes;
    b.activation_bytes = peak_activations(r, h);
    return b;
  }

 private:
  [[nodiscard]] RankHold hold(int r) const {
    RankHold h;
    for (int c = 0; c < place_.chunks(); ++c) {
      const int stage = place_.stage_of(r, c);
      const std::int64_t llm = place_.stage_in_pipe(stage) - enc_stages_;
      double saved = 0.0;
      double unsharded = 0.0;
      if (llm >= 0) {
        if (!s_.encoder.present && place_.first_of_pipe(stage)) {
          h.static_bytes += embed_ * dense_b_;
        }
        if (!s_.encoder.present && place_.last_of_pipe(stage) && !s_.model.tied_embeddings) {
          h.static_bytes += embed_ * dense_b_;  // the output layer
        }
        for (std::int64_t l = bounds_[static_cast<std::size_t>(llm)];
             l < bounds_[static_cast<std::size_t>(llm) + 1]; ++l) {
          const LayerCost& cost = s_.model.moe.is_moe_layer(l) ? sparse_ : dense_;
          h.static_bytes +=
              (cost.params - cost.expert_params) * dense_b_ + cost.expert_params * expert_b_;
          saved += cost.saved_bytes;
          unsharded += unsharded_params(cost);
          h.transient = std::max(h.transient, transient(cost));
        }
      }
      h.chunk_saved.push_back(saved);
      h.chunk_weights.push_back(keeps_ ? 2.0 * unsharded : 0.0);
      h.chunk_grads.push_back(keeps_ ? s_.training.grad_bytes() * unsharded : 0.0);
    }
    return h;
  }

  // A layer's parameters a rank holds beyond its shard once they are gathered whole.
  [[nodiscard]] double unsharded_params(const LayerCost& c) const {
    const double dense = c.params - c.expert_params;
    return dense * (1.0 - 1.0 / dense_shards_) + c.expert_params * (1.0 - 1.0 / expert_shards_);
  }

  // What one layer's backward holds beyond the stashed activations: under full recompute the
  // activations it recomputes; under ZeRO-3 its weights gathered whole (the shard a rank keeps
  // is already counted), or under ZeRO-2 and 3 its gradients before their reduce-scatter,
  // whichever is more (a zero-bubble schedule may release the weights before the
  // weight-gradient half). Units kept over the step are counted by chunk instead.
  [[nodiscard]] double transient(const LayerCost& c) const {
    const std::int64_t zero = s_.zero_stage();
    const double unsharded = keeps_ ? 0.0 : unsharded_params(c);
    const double weights = zero >= 3 ? 2.0 * unsharded : 0.0;
    const double grads = zero >= 2 ? s_.training.grad_bytes() * unsharded : 0.0;
    return c.recomputed_bytes + std::max(weights, grads);
  }

  // The bytes chunk `c`'s kept units add (negative: free) when task `t` starts or ends.
  [[nodiscard]] double kept_change(const RankHold& h, const Task& t, bool start,
                                   KeptUnits& u) const {
    const auto c = static_cast<std::size_t>(t.chunk);
    if (!keeps_ || u.released) {
      return 0.0;
    }
    if (start) {
      if (t.kind != Task::kForward || u.gathered) {
        return 0.0;
      }
      u.gathered = true;
      return h.chunk_weights[c];
    }
    const bool backward = t.kind == Task::kBackward || t.kind == Task::kBackwardInput;
    if (backward && ++u.backwards == s_.microbatches()) {  // released (or later, zero-bubble)
      u.released = true;
      return -(h.chunk_weights[c] + (u.grads ? h.chunk_grads[c] : 0.0));
    }
    if ((t.kind == Task::kBackward || t.kind == Task::kWeight) && !u.grads) {
      u.grads = true;
      return h.chunk_grads[c];
    }
    return 0.0;
  }

  // The most activations rank `r` holds over its order of tasks: a chunk's forward keeps its
  // activations until that microbatch's backward (its input-gradient half, in zero-bubble
  // schedules) frees them; a backward also holds its layer's transient, and units kept over the
  // step count from their chunk's first forward. With an encoder the order is the placement's
  // own, and one microbatch's activations are what it holds at least.
  [[nodiscard]] double peak_activations(int r, const RankHold& h) const {
    double one = 0.0;
    for (double c : h.chunk_saved) {
      one += c;
    }
    if (s_.encoder.present) {
      return one + h.transient;
    }
    const std::vector<Task> order =
        synth::schedule::stage_order(s_.step_schedule(), static_cast<int>(s_.parallel.pp), r,
                                     static_cast<int>(s_.microbatches()));
    std::vector<KeptUnits> kept(h.chunk_saved.size());
    double held = 0.0;
    double peak = 0.0;
    for (const Task& t : order) {
      const auto c = static_cast<std::size_t>(t.chunk);
      held += kept_change(h, t, true, kept[c]);
      const double chunk = h.chunk_saved[c];
      if (t.kind == Task::kForward) {
        held += chunk;
        peak = std::max(peak, held);
      } else if (t.kind == Task::kBackward || t.kind == Task::kBackwardInput) {
        peak = std::max(peak, held + (chunk > 0.0 ? h.transient : 0.0));
        held -= chunk;
      }
      held += kept_change(h, t, false, kept[c]);
    }
    return peak;
  }

  const Scenario& s_;
  synth::schedule::Placement place_;
  LayerCost dense_;
  LayerCost sparse_;
  std::int64_t enc_stages_ = 0;
  std::int64_t llm_stages_ = 0;
  std::vector<std::int64_t> bounds_;
  bool keeps_ = false;  // ZeRO-3 keeps its units gathered over the step
  double dense_shards_ = 1.0;
  double expert_shards_ = 1.0;
  double dense_b_ = 0.0;
  double expert_b_ = 0.0;
  double embed_ = 0.0;
};

}  // namespace

MemoryBound peak_memory_lower_bound(const Scenario& s) {
  const Bounder bounder(s);
  MemoryBound best;
  for (int r = 0; r < static_cast<int>(s.parallel.pp); ++r) {
    const MemoryBound b = bounder.rank_bound(r);
    if (b.total() > best.total()) {
      best = b;
    }
  }
  return best;
}

}  // namespace tessera::experiments::search
