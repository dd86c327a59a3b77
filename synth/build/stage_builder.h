// SPDX-License-Identifier: Apache-2.0
// Internal to synth/: the builder of one rank's execution graph (a pipeline stage of the LLM,
// with the encoder inline, as stages, transposed, or an encoder device of its own) and the
// step-wide context it reads. Its parts, one file per role: stage_builder.cpp (the LLM stage:
// forward, backward, weight gradients, the task loop), stage_layout.cpp (where the blocks
// sit, their node slots, static memory), gradient_reduction.cpp (data-parallel buckets,
// optimizer, tied-embedding and mirror reductions; the optimizer's kernels are
// optimizer_step.cpp's), overlap.cpp (blocking sends, parameter gathers, paired tasks;
// pair_interleave.cpp re-issues the pairs), stage_builder_encoder.cpp (the encoder's forward
// and backward), and one file per encoder placement: encoder_stages.cpp,
// encoder_transpose.cpp, encoder_separate.cpp. synthesize.cpp sets up the context (groups.cpp
// its communication groups, programs.cpp the block programs) and runs one builder per rank
// class.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/exec_graph.h"
#include "synth/build/optimizer_step.h"
#include "synth/build/pair_interleave.h"
#include "synth/build/synthesize.h"
#include "synth/models/fp8.h"
#include "synth/parallel/block_program.h"
#include "synth/parallel/encoder_programs.h"
#include "synth/parallel/mesh.h"
#include "synth/schedule/pipeline_schedule.h"
#include "synth/schedule/transpose.h"

namespace tessera::synth::detail {

using graph::ExecGraph;
using graph::Node;
using graph::NodeId;
using graph::RankGraph;
using parallel::BlockProgram;

constexpr NodeId kNone = UINT32_MAX;

// Parameters whose gradients are reduced over one group: the dense ones over DP, the routed
// experts' over EDP (`ranks`: the group's size, the distributed optimizer's shard count).
struct GradDomain {
  std::int32_t group = -1;  // -1: a group of one
  double ranks = 1.0;
  bool experts = false;
  std::int32_t replicas = -1;  // HSDP: the shard's replicas, reduced after the shard group
};

// One block of a stage: its program and the layer index used in node names.
struct StageBlock {
  const BlockProgram* prog;
  std::int32_t layer;    // -1 for embedding, head, patch embedding and projector
  std::size_t names;     // index into the name table
  bool encoder = false;  // a block of the encoder region
};

// Interned names of the nodes that are not ops of a block program.
struct P2PNames {
  std::uint32_t send_activation = 0, recv_activation = 0, send_grad = 0, recv_grad = 0;
  std::uint32_t wait_sends = 0;  // blocking p2p: the next compute waits for the sends
};
struct ReductionNames {
  std::uint32_t grad_bucket = 0;     // data-parallel gradient buckets
  std::uint32_t param_gather = 0;    // distributed optimizer's parameter all-gather
  std::uint32_t param_wait = 0;      // overlap_param_gather: a block's forward waits for it
  std::uint32_t embedding_grad = 0;  // tied embeddings: first + last stage
  std::uint32_t mirror_grad = 0;     // DualPipe: the two copies' gradients
  std::uint32_t replica_grad = 0;    // HSDP: a shard's gradients over its replicas
  // ZeRO-2/3, per unit (a block): weights gathered, waited for and released, gradients
  // reduce-scattered.
  std::uint32_t unit_gather = 0, unit_wait = 0, unit_release = 0, unit_reduce = 0;
};
struct EncoderNames {
  std::uint32_t merge_features = 0, join_images = 0, send_features = 0, recv_features = 0;
  std::uint32_t send_input = 0, recv_input = 0, feature_grad_p2p = 0, param_broadcast = 0;
  std::uint32_t grad_allreduce = 0, feature_grad = 0, release_input = 0, release_features = 0;
};

// FP8 training's per-step nodes (fp8_step.cpp): per layer, then shared.
struct Fp8Names {
  std::vector<std::uint32_t> cast_weight{};  // per layer: "L<l>.fp8.cast[_transpose]_weight"
  std::vector<std::uint32_t> amax_weight{};  // per layer, current scaling: "L<l>.fp8.amax_weight"
  std::uint32_t amax_update = 0;             // delayed scaling: "fp8.amax_update"
};

struct Context {
  const Scenario& s;
  const StepPrograms& progs;
  const parallel::Mesh& mesh;
  std::int64_t ranks;  // the mesh's, plus the encoder's own devices (kSeparate)
  std::vector<std::vector<std::uint32_t>> names{};                  // per name table: per op
  std::vector<std::array<std::int32_t, stg::kNumAxes>> group_of{};  // rank -> group per axis
  // rank -> the dense gradients' group: data parallelism with context parallelism (the DP
  // group itself when cp = 1), under HSDP its shard group; and the HSDP replicas' group
  std::vector<std::int32_t> dp_cp_group_of{};
  std::vector<std::int32_t> replica_group_of{};
  std::vector<std::int32_t> embed_group_of{};   // rank -> tied-embedding group (first+last stage)
  std::vector<std::int32_t> mirror_group_of{};  // DualPipe: rank -> {r, N-1-r}, the two copies
  P2PNames p2p_names{};
  OptimizerNames optimizer_names{};
  ReductionNames reduction_names{};
  // The encoder region (multimodal models).
  const parallel::EncoderPrograms* enc = nullptr;         // as the LLM's ranks run it
  const parallel::EncoderPrograms* enc_device = nullptr;  // on the encoder's own devices
  std::size_t enc_names = 0;         // name tables: patch, projector, then one per encoder layer
  std::size_t enc_device_names = 0;  // the same for the programs of the encoder's own devices
  EncoderNames enc_misc_names{};
  std::vector<std::int32_t> enc_group_of{};              // rank -> pipeline x data group
  std::vector<std::vector<schedule::Step>> transpose{};  // per pipeline rank, when transposed
  models::Fp8Plan fp8{};
  Fp8Names fp8_names{};
};

// Where encoder messages are tagged: after every pipeline tag (those stay below 2^40).
constexpr std::int64_t kEncoderTag = std::int64_t{1} << 40;

// What an encoder message carries; its tag is odd (a backward stream) for gradients.
enum class EncoderMessage : int { kFeatures = 0, kInputs = 1, kFeatureGrads = 2 };
constexpr std::int64_t encoder_tag(std::int32_t mb, EncoderMessage what) {
  const auto w = static_cast<std::int64_t>(what);
  return kEncoderTag + (static_cast<std::int64_t>(mb) * 3 + w) * 2 +
         (what == EncoderMessage::kFeatureGrads ? 1 : 0);
}

class StageBuilder {
 public:
  StageBuilder(const Context& c, std::int64_t rank)
      : c_(c), rank_(rank), enc_(rank < c.mesh.size() ? c.enc : c.enc_device) {}
  RankGraph build();

 private:
  void forward(std::int32_t mb, std::int32_t chunk);
  void backward(std::int32_t mb, std::int32_t chunk, schedule::Task::Kind kind);
  void feature_grad_out(std::int32_t mb, std::int32_t vs, NodeId grad);
  void weight(std::int32_t mb, std::int32_t chunk);
  void place_blocks();
  void allocate_slots(std::int32_t m);
  void allocate_encoder_slots(std::int32_t m);
  void count_encoder_params();
  void account_static_memory(double params);
  [[nodiscard]] std::int64_t rank_of_stage(std::int32_t vstage) const;
  [[nodiscard]] std::int64_t boundary_bytes(std::int32_t vs) const;
  [[nodiscard]] std::int64_t tag(std::int32_t mb, std::int32_t vstage, bool grad) const {
    return (static_cast<std::int64_t>(mb) * vstages_ + vstage) * 2 + (grad ? 1 : 0);
  }
  [[nodiscard]] std::size_t slot(std::int32_t mb, std::int32_t chunk, std::size_t k) const {
    return static_cast<std::size_t>(mb) * total_blocks_ + offset_[static_cast<std::size_t>(chunk)] +
           k;
  }
  // Instantiates ops [begin, end) of block `b` for microbatch `mb`; returns the first id.
  NodeId instantiate(const StageBlock& b, std::int32_t mb, std::int32_t begin, std::int32_t end,
                     NodeId ext_fwd, NodeId ext_bwd, std::size_t slot, std::size_t wslot);
  // The encoder (multimodal models): its forward over one microbatch's images, `saved` for a
  // backward later, gated on `gate`; returns the node that delivers the features.
  // Blocks [begin, end) of the chain (0: patch embedding, 1..L: layers, L+1: projector) run,
  // from `input` (kNone: the data); returns the node that delivers their output.
  // `slot`: the slot set the run uses (default: the microbatch's own).
  NodeId encoder_forward(std::int32_t mb, bool saved, NodeId gate, std::size_t begin = 0,
                         std::size_t end = SIZE_MAX, NodeId input = kNone, std::int32_t slot = -1);
  // Their backward from `grad`; returns the node that delivers the gradient of their input.
  NodeId encoder_backward(std::int32_t mb, NodeId grad, std::size_t begin = 0,
                          std::size_t end = SIZE_MAX, std::int32_t slot = -1);
  // The encoder's own devices (kSeparate): the replicas' microbatches assigned to this one.
  RankGraph build_encoder_device();
  [[nodiscard]] std::int64_t encoder_device_of(std::int64_t replica, std::int32_t mb) const;
  void encoder_stage_forward(std::int32_t mb, std::int32_t vs);
  void encoder_stage_backward(std::int32_t mb, std::int32_t vs);
  [[nodiscard]] std::size_t enc_slot(std::int32_t mb, std::size_t group, std::size_t k) const {
    return enc_slot_base_ + enc_offset_[static_cast<std::size_t>(mb)] +
           group * (static_cast<std::size_t>(enc_->layers()) + 2) + k;
  }
  [[nodiscard]] StageBlock enc_block(const parallel::EncoderProgram& p, std::size_t k) const;
  NodeId marker(std::uint32_t name, std::int32_t mb, const std::vector<NodeId>& deps,
                std::int64_t alloc, std::int64_t free);
  NodeId encoder_p2p(graph::NodeKind kind, std::int64_t peer_stage, std::int32_t mb,
                     EncoderMessage what, std::int64_t bytes, NodeId dep, std::uint32_t name);
  // A collective on the data-parallel stream (a zero-time step for a group of one).
  NodeId dp_collective(graph::CollType type, std::int32_t group, double bytes, base::DType dtype,
                       const std::vector<NodeId>& deps, std::uint32_t name, graph::Phase phase);
  void run_transposed();
  void run_body_task(const schedule::Task& t);
  void run_task(const schedule::Task& t);
  // A paired forward and backward whose all-to-alls overlap (Scenario::overlaps_ep_comm):
  // built one after the other, re-issued interleaved when the step is complete.
  void run_pair(const schedule::Task& fwd, const schedule::Task& bwd);
  [[nodiscard]] bool holds_encoder_grads() const;
  [[nodiscard]] bool holds_encoder() const;
  NodeId p2p(graph::NodeKind kind, std::int64_t peer, std::int64_t tag, std::int64_t bytes,
             NodeId dep, std::uint32_t name, std::int32_t mb);
  // Data-parallel gradient reduction (gradient_reduction.cpp), per gradient domain.
  struct GradBlock {
    double params;
    std::vector<NodeId> wgrads;
    std::int64_t order;  // model order of the block (the encoder's before the LLM's)
  };
  struct Bucket {
    double params = 0.0;
    std::vector<NodeId> wgrads;
    std::int64_t order = 0;  // the block whose backward completes it
  };
  [[nodiscard]] std::vector<GradDomain> grad_domains() const;
  [[nodiscard]] std::vector<GradBlock> grad_blocks(const GradDomain& d) const;
  [[nodiscard]] std::vector<Bucket> plan_buckets(const GradDomain& d,
                                                 const std::vector<GradBlock>& grads) const;
  void gradient_reduction(double params);
  NodeId reduce_bucket(const GradDomain& d, const Bucket& b);
  void gather_params(const GradDomain& d, double total, std::vector<double> bucket_params,
                     NodeId after);
  // FP8 (fp8_step.cpp): a layer's per-step weight quantization, a chunk's delayed-scaling
  // amax update, and the static bytes of this rank's FP8 weight copies.
  void fp8_weight_cast(const StageBlock& b, std::int32_t mb, NodeId input);
  // ZeRO-3 with FP8: the FP8 copies of unit k's weights, cast after each gather (they go with
  // the gathered weights at the unit's release), in `phase`.
  void fp8_gathered_cast(std::size_t k, std::int32_t mb, graph::Phase phase);
  [[nodiscard]] bool casts_gathered_weights() const;
  void fp8_amax_update(std::int32_t mb, std::int32_t chunk, graph::Phase phase, NodeId after);
  NodeId add_after(const Node& n, NodeId dep);  // dep == kNone: no dependency
  [[nodiscard]] double fp8_static_bytes() const;
  [[nodiscard]] double fp8_param_bytes_saved() const;
  // Overlap as the frameworks schedule it (overlap.cpp).
  void hold_send(NodeId send);
  void wait_sends();
  void param_gathers();
  struct ParamGather {
    std::size_t lo, hi;  // blocks [lo, hi)
    std::size_t domain;  // index into grad_domains()
    double params;
  };
  [[nodiscard]] std::vector<ParamGather> plan_param_gathers(
      const std::vector<GradDomain>& domains) const;
  void wait_params(std::size_t k);
  void embedding_reduction(std::vector<NodeId>& before_optimizer);
  // ZeRO-2/3 (sharded_units.cpp): each block is a unit whose weights (ZeRO-3) are gathered
  // before its compute and released after, and whose gradients are reduce-scattered after
  // its backward.
  enum class UnitPart { kForward, kBackward, kInputGrad, kWeightGrad };
  // Microbatch `mb`'s part of unit k: its gathers (with FP8, the weights' casts after them).
  void unit_before(std::size_t k, UnitPart part, std::int32_t mb);
  void unit_forward_done(std::size_t k);
  void unit_backward_done(std::size_t k, bool wgrads);
  NodeId unit_gather(std::size_t k, const GradDomain& d, double params, graph::Phase phase);
  NodeId unit_release(std::size_t k, NodeId end);
  void unit_reduce(std::size_t k, const GradDomain& d, double params, NodeId end, bool last);
  [[nodiscard]] double unit_params(std::size_t k, const GradDomain& d) const;
  // What fp8_param_gather saves in the parameter all-gather of block k's domain-d parameters:
  // its FP8 weights' bytes in the training precision less their FP8 bytes; 0 without it.
  [[nodiscard]] double fp8_gather_saving(std::size_t k, const GradDomain& d) const;
  [[nodiscard]] double fp8_weights(std::size_t k, const GradDomain& d) const;
  [[nodiscard]] bool keeps_units() const;
  [[nodiscard]] NodeId last_node() const { return static_cast<NodeId>(g_.size() - 1); }

  const Context& c_;
  std::int64_t rank_;
  const parallel::EncoderPrograms* enc_;  // the encoder programs this rank runs
  RankGraph g_;
  std::vector<std::vector<StageBlock>> chunks_;  // per model chunk: its blocks
  std::vector<StageBlock> blocks_;               // all chunks' blocks, chunk by chunk
  std::vector<std::size_t> offset_;              // per chunk: index of its first block
  std::size_t total_blocks_ = 0;
  std::vector<NodeId> fwd_base_;    // per (mb, chunk, block)
  std::vector<NodeId> fwd_input_;   // per (mb, chunk, block): producer of the block input
  std::vector<NodeId> fwd_out_;     // per (mb, chunk): producer of the chunk's output
  std::vector<NodeId> bwd_out_;     // per (mb, chunk): producer of the chunk's input grad
  std::vector<NodeId> bwd_base_;    // per (mb, chunk, block): its B (or whole) backward
  std::vector<NodeId> grad_input_;  // per (mb, chunk, block): producer of the incoming grad
  std::vector<std::vector<NodeId>> last_bwd_node_;  // per block: backward op -> latest node
  std::int32_t stage_ = 0;                          // pipeline rank
  std::int32_t stages_ = 1;                         // pipeline ranks, p
  std::int32_t vstages_ = 1;                        // virtual stages
  std::optional<schedule::Placement> place_;        // stage <-> (rank, chunk)
  // Encoder state: slots after the LLM's, features and their gradients per microbatch.
  std::size_t enc_slot_base_ = 0;
  std::vector<std::size_t> enc_offset_;  // per microbatch: its first encoder slot
  std::vector<NodeId> features_;         // per microbatch: the node delivering its features
  std::vector<NodeId> feature_grad_;     // per microbatch: dL/dfeatures on this rank
  std::vector<NodeId> enc_input_;        // per microbatch: shipped input (recompute)
  std::vector<char> enc_saved_;          // per microbatch: forward kept for a backward here
  std::vector<char> fp8_cast_done_;      // per chunk: its FP8 weights are quantized this step
  NodeId enc_gate_ = kNone;              // the parameter broadcast encoder forwards wait for
  NodeId enc_allreduce_ = kNone;         // owner-backward: the gradient all-reduce
  bool inline_encoder_ = false;          // inline: the encoder runs inside stage 0's tasks
  std::int32_t enc_stages_ = 0;          // encoder as pipeline stages: how many
  std::int32_t llm_first_ = 0;           // the virtual stage holding the LLM's embedding
  std::size_t enc_begin_ = 0;            // this rank's encoder blocks [begin, end)
  std::size_t enc_end_ = 0;
  double enc_params_ = 0.0;            // this rank's encoder parameters
  std::vector<NodeId> enc_bwd_ends_;   // the last backward op of each image group
  std::vector<NodeId> pending_sends_;  // blocking p2p: sends the next compute waits for
  std::vector<TaskPair> pairs_;        // paired tasks whose nodes are interleaved at the end
  // overlap_param_gather: per block, its all-gather per gradient domain (dense, experts), and
  // the parameters those all-gathers bring.
  std::vector<std::array<NodeId, 2>> gather_of_block_;
  std::array<double, 2> gathered_params_{};
  // ZeRO-2/3: per block, whether its weights are gathered and its gradient buffer held, and
  // its backwards so far; the ends of the last two units run (a gather waits for the one
  // before last: two units unsharded at a time); the last microbatch's reductions.
  struct UnitState {
    bool gathered = false;
    bool grads = false;
    std::int64_t gathered_bytes = 0;  // what the release frees
    std::int64_t backwards = 0;
  };
  std::vector<UnitState> units_;
  std::array<NodeId, 2> unit_ends_{kNone, kNone};
  std::vector<NodeId> unit_reductions_;
};

// Every communication group of the step: mesh axes, DualPipe mirrors, embedding copies
// (groups.cpp).
void make_groups(graph::ExecGraph& g, Context& c);

// Whether pipeline sends overlap the next compute (overlap.cpp).
bool overlaps_p2p(const Scenario& s);
// Gradient buckets over per-block parameter counts in model order (overlap.cpp).
std::vector<std::pair<std::size_t, std::size_t>> grad_buckets(const std::vector<double>& params,
                                                              double cap);

}  // namespace tessera::synth::detail
