// SPDX-License-Identifier: Apache-2.0
// Mpipe's "transpose" skeleton (docs/mpipe_transpose.md; docs/pipeline_schedules.md 2.10): a
// replicated encoder region whose forwards run in the LLM pipeline's warmup bubbles. It is a
// rewrite of any body order: each rank gets a prefix with the encoder forwards it owns and
// the sends of their outputs to the first LLM stage, and rank 0 gets the matching receives
// and, for trained encoders, the recompute or owner-backward patches. Stripping every
// encoder step gives back the body order exactly. Costs only enter through the greedy owner
// map and the spill prediction; the orders themselves embed none.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::schedule {

// Which rank runs the encoder forward of each microbatch (ByMicrobatch owner maps).
// kRoundRobin: hyper-parallel's "full" overflow, owner(j) = j mod NT, NT = min(p, m); every
//   owned forward runs in the owner's prefix.
// kMin: hyper-parallel's "min": owner(j) = j for j < NT; rank 0 owns the overflow [NT, m) and
//   runs each of those inline, right before its first-stage forward of that microbatch.
// kGreedy: the paper's min-max against each rank's warmup slack (docs/mpipe_transpose.md,
//   "ByMicrobatch greedy"); every owned forward runs in the owner's prefix. Ties go toward the
//   larger slack left for the microbatch (its deadline minus its finish), then the lower rank,
//   so uniform E with m <= p gives owner(j) = j.
// docs/mpipe_transpose.md's [SIM] column "transpose(rr)" (44 for p=4, m=8, E=4) is kRoundRobin with
// transpose(..., inline_overflow = true): rank 0 runs its overflow inline, as hyper-parallel's
// construct_exec_order places only microbatch `rank` in a prefix; with every owned forward in
// the prefixes (inline_overflow = false) the same case takes 41.
enum class OwnerMap : unsigned char { kRoundRobin, kMin, kGreedy };

// How a trained encoder gets its gradients (docs/mpipe_transpose.md, "Backward footprint").
// kFrozen: no encoder backward at all. kCentralRecompute: hyper-parallel's default; rank 0
// receives each transposed microbatch's input, recomputes the encoder forward and runs its
// backward right after that microbatch's first-stage backward; the parameters are broadcast
// from rank 0 every step. kOwnerBackward: rank 0 sends dL/dfeatures back to the owner, which
// runs the encoder backward on its retained graph; one gradient all-reduce over the pipeline
// group per step.
enum class EncoderTraining : unsigned char { kFrozen, kCentralRecompute, kOwnerBackward };

std::string_view owner_map_name(OwnerMap m);                // "round_robin", "min", "greedy"
std::string_view encoder_training_name(EncoderTraining t);  // "frozen", "recompute", "owner"

// Costs in any one unit (seconds, FLOPs, ...), for the greedy owner map and the prediction.
struct TransposeCosts {
  std::vector<double> encoder_forward;  // E(j): encoder forward of microbatch j
  double stage_forward = 0.0;           // F: one LLM stage's forward of one microbatch
  double stage_backward = 0.0;          // B: one LLM stage's backward of one microbatch
  double latency = 0.0;                 // c: one pipeline message between adjacent stages
};

// owner[j] = the pipeline rank that runs microbatch j's encoder forward. kGreedy needs
// costs.encoder_forward (size m); the other maps ignore the costs.
std::vector<int> owner_map(OwnerMap mode, int ranks, int microbatches, const TransposeCosts& costs);

// One step of a rank's transposed order: a body task, or an encoder step.
struct Step {
  enum Kind : unsigned char {
    kBody,              // `task`, the body schedule's own task
    kParamBroadcast,    // centralized recompute: the per-step encoder parameter broadcast
                        // from rank 0 (every rank has one, rank 0 as the root)
    kEncoderForward,    // the encoder forward of `microbatch` on this rank
    kFeatureSend,       // its output (the features) to rank `peer` (always 0)
    kFeatureRecv,       // rank 0: the features of `microbatch` from rank `peer`
    kInputSend,         // centralized recompute: the encoder input to rank `peer` (0)
    kInputRecv,         // rank 0: the encoder input of `microbatch` from rank `peer`
    kEncoderRecompute,  // rank 0, centralized recompute: encoder forward + backward again, for
                        // every microbatch whose forward ran detached in a prefix (rank 0's
                        // own prefix microbatch included, as hyper-parallel's TRANSPOSE_BWD)
    kEncoderBackward,   // the encoder backward of `microbatch` on its owner's retained graph:
                        // owner-backward (rank 0's microbatches included), or rank 0's inline
                        // forwards (inline_overflow) under centralized recompute
    kGradSend,          // owner-backward, rank 0: dL/dfeatures of `microbatch` to `peer`
    kGradRecv,          // owner-backward, owner: dL/dfeatures of `microbatch` from `peer` (0)
    kGradAllReduce,     // owner-backward: the encoder gradients summed over the pipeline
                        // group, once per step: the last step of every rank (a rank
                        // owning nothing joins too), so after its last encoder backward
  } kind = kBody;
  Task task;            // kBody only
  int microbatch = -1;  // encoder steps
  int peer = -1;        // sends and receives
  bool operator==(const Step&) const = default;
};

// The transposed plan: body[r] is rank r's body order (r = 0 holds the first LLM stage);
// `owners` comes from owner_map. With `inline_overflow` (kMin), rank 0 runs the forwards of
// the microbatches it owns beyond its own first one inline before their first-stage forward
// instead of in its prefix.
std::vector<std::vector<Step>> transpose(const std::vector<std::vector<Task>>& body,
                                         const std::vector<int>& owners, EncoderTraining training,
                                         bool inline_overflow);

// The cost model's view of a transposed plan (docs/mpipe_transpose.md, "Cost model"): per rank,
// the warmup slack w_r = E_0 + r (F + c), the encoder work E_r placed before the rank's
// first body task, and the predicted exposed spill max(0, E_r - w_r) (rank 0: E_r - E_0).
struct SpillPrediction {
  std::vector<double> slack;
  std::vector<double> assigned;
  std::vector<double> spill;
};
SpillPrediction predict_spill(const std::vector<std::vector<Step>>& plan,
                              const TransposeCosts& costs);

// "E0 E4 >0:0 >0:4 F0 F1 B0 ..." : body tasks as to_string prints them (with the virtual
// stage when `with_stage`); encoder steps as
// E<mb> (forward), R<mb> (recompute), X<mb> (encoder backward), P (broadcast), A (gradient
// all-reduce), >peer:mb / <peer:mb (feature send/recv), i>peer:mb / i<peer:mb (inputs),
// g>peer:mb / g<peer:mb (gradients).
std::string to_string(const std::vector<Step>& order, bool with_stage = false,
                      char stage_letter = 'c');

// The body order again: every encoder step removed.
std::vector<Task> strip_encoder(const std::vector<Step>& order);

}  // namespace tessera::synth::schedule
