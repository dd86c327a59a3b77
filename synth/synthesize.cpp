// SPDX-License-Identifier: Apache-2.0
#include "synth/synthesize.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>

#include "sim/base/error.h"
#include "synth/parallel/encoder_programs.h"
#include "synth/parallel/mesh.h"
#include "synth/schedule/pipeline_schedule.h"
#include "synth/schedule/transpose.h"

namespace tessera::synth {

using graph::ExecGraph;
using graph::Node;
using graph::NodeId;
using graph::RankGraph;
using parallel::BlockProgram;

StepPrograms build_programs(const Scenario& s) {
  models::Blocks b = models::build_blocks(s);
  // Megatron recomputes transformer layers only; embedding and head keep their activations.
  bool split = schedule::splits_backward(s.schedule.kind);
  return {parallel::lower(b.embed, Recompute::kNone, split),
          parallel::lower(b.layer, s.training.recompute, split),
          parallel::lower(b.head, Recompute::kNone, split)};
}

double grad_bucket_params(const Scenario& s) {
  if (s.training.grad_bucket_bytes > 0.0) {
    return s.training.grad_bucket_bytes / 4.0;
  }
  return std::max(40e6, 1e6 * static_cast<double>(s.parallel.dp));
}

namespace {

constexpr NodeId kNone = UINT32_MAX;

// One block of a stage: its program and the layer index used in node names.
struct StageBlock {
  const BlockProgram* prog;
  std::int32_t layer;    // -1 for embedding, head, patch embedding and projector
  std::size_t names;     // index into the name table
  bool encoder = false;  // a block of the encoder region
};

struct Context {
  const Scenario& s;
  const StepPrograms& progs;
  const parallel::Mesh& mesh;
  std::int64_t ranks;  // the mesh's, plus the encoder's own devices (kSeparate)
  std::vector<std::vector<std::uint32_t>> names;                  // per name table: per op
  std::vector<std::array<std::int32_t, stg::kNumAxes>> group_of;  // rank -> group per axis
  std::vector<std::int32_t> embed_group_of;   // rank -> tied-embedding group (first+last stage)
  std::vector<std::int32_t> mirror_group_of;  // DualPipe: rank -> {r, N-1-r}, the two copies
  std::vector<std::uint32_t> p2p_names;       // send act, recv act, send grad, recv grad
  std::uint32_t optimizer_name = 0;
  // grad bucket, param gather, embedding grads, DualPipe mirror grads
  std::vector<std::uint32_t> bucket_names;
  // The encoder region (multimodal models).
  const parallel::EncoderPrograms* enc = nullptr;         // as the LLM's ranks run it
  const parallel::EncoderPrograms* enc_device = nullptr;  // on the encoder's own devices
  std::size_t enc_names = 0;         // name tables: patch, projector, then one per encoder layer
  std::size_t enc_device_names = 0;  // the same for the programs of the encoder's own devices
  // merge, join, feature send/recv, input send/recv, grad send/recv, broadcast, all-reduce,
  // feature grad, input release
  std::vector<std::uint32_t> enc_misc_names;
  std::vector<std::int32_t> enc_group_of;              // rank -> pipeline x data group
  std::vector<std::vector<schedule::Step>> transpose;  // per pipeline rank, when transposed
};

// Where encoder messages are tagged: after every pipeline tag (those stay below 2^40).
constexpr std::int64_t kEncoderTag = std::int64_t{1} << 40;

class StageBuilder {
 public:
  StageBuilder(const Context& c, std::int64_t rank)
      : c_(c), rank_(rank), enc_(rank < c.mesh.size() ? c.enc : c.enc_device) {}
  RankGraph build();

 private:
  void forward(std::int32_t mb, std::int32_t chunk);
  void backward(std::int32_t mb, std::int32_t chunk, schedule::Task::Kind kind);
  void weight(std::int32_t mb, std::int32_t chunk);
  void place_blocks();
  [[nodiscard]] std::int64_t rank_of_stage(std::int32_t vstage) const;
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
  NodeId encoder_p2p(graph::NodeKind kind, std::int64_t peer_stage, std::int32_t mb, int what,
                     std::int64_t bytes, NodeId dep, std::uint32_t name);
  NodeId encoder_collective(graph::CollType type, std::int32_t group, double bytes,
                            const std::vector<NodeId>& deps, std::uint32_t name, graph::Phase ph);
  void run_transposed();
  void run_body_task(const schedule::Task& t);
  [[nodiscard]] bool holds_encoder_grads() const;
  [[nodiscard]] bool holds_encoder() const;
  NodeId p2p(graph::NodeKind kind, std::int64_t peer, std::int64_t tag, std::int64_t bytes,
             NodeId dep, std::uint32_t name, std::int32_t mb);
  void gradient_reduction(double params);
  void embedding_reduction(std::vector<NodeId>& before_optimizer);

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
  NodeId enc_gate_ = kNone;              // the parameter broadcast encoder forwards wait for
  NodeId enc_allreduce_ = kNone;         // owner-backward: the gradient all-reduce
  bool inline_encoder_ = false;          // inline: the encoder runs inside stage 0's tasks
  std::int32_t enc_stages_ = 0;          // encoder as pipeline stages: how many
  std::int32_t llm_first_ = 0;           // the virtual stage holding the LLM's embedding
  std::size_t enc_begin_ = 0;            // this rank's encoder blocks [begin, end)
  std::size_t enc_end_ = 0;
  double enc_params_ = 0.0;  // this rank's encoder parameters
};

NodeId StageBuilder::p2p(graph::NodeKind kind, std::int64_t peer, std::int64_t tag,
                         std::int64_t bytes, NodeId dep, std::uint32_t name, std::int32_t mb) {
  Node n;
  n.kind = kind;
  bool grad = tag % 2 == 1;
  n.stream = kind == graph::NodeKind::kSend
                 ? (grad ? graph::Stream::kPPSendBwd : graph::Stream::kPPSendFwd)
                 : (grad ? graph::Stream::kPPRecvBwd : graph::Stream::kPPRecvFwd);
  n.peer = static_cast<std::int32_t>(peer);
  n.tag = tag;
  n.bytes = static_cast<double>(bytes);
  n.name = name;
  n.microbatch = mb;
  n.dtype = c_.s.training.precision;
  if (kind == graph::NodeKind::kSend) {
    n.mem_free = bytes;
  } else {
    n.mem_alloc = bytes;
  }
  n.phase = grad ? graph::Phase::kBackward : graph::Phase::kForward;
  if (dep == kNone) {
    return g_.add(n);
  }
  return g_.add(n, {dep});
}

NodeId StageBuilder::instantiate(const StageBlock& b, std::int32_t mb, std::int32_t begin,
                                 std::int32_t end, NodeId ext_fwd, NodeId ext_bwd, std::size_t slot,
                                 std::size_t wslot) {
  const BlockProgram& p = *b.prog;
  auto base = static_cast<NodeId>(g_.size());
  std::vector<NodeId>* last = nullptr;
  if (begin >= p.n_fwd) {
    last = &last_bwd_node_[wslot];
    last->resize(p.ops.size() - static_cast<std::size_t>(p.n_fwd), kNone);
  }
  std::vector<NodeId> deps;
  for (std::int32_t i = begin; i < end; ++i) {
    const parallel::ProgOp& op = p.ops[static_cast<std::size_t>(i)];
    Node n = op.node;
    n.name = c_.names[b.names][static_cast<std::size_t>(i)];
    n.microbatch = mb;
    n.layer = b.layer;
    if (n.kind == graph::NodeKind::kCollective) {
      n.group = c_.group_of[static_cast<std::size_t>(rank_)][op.axis];
      if (n.group < 0) {  // a group of one: nothing to communicate
        n.kind = graph::NodeKind::kCompute;
        n.fixed_duration = 0;
      }
    }
    deps.clear();
    for (std::int32_t d : op.deps) {
      NodeId id = d == parallel::kFwdInput   ? ext_fwd
                  : d == parallel::kBwdInput ? ext_bwd
                  : d >= begin               ? base + static_cast<NodeId>(d - begin)
                  : d < p.n_fwd              ? fwd_base_[slot] + static_cast<NodeId>(d)
                                             : bwd_base_[slot] + static_cast<NodeId>(d - p.n_fwd);
      if (id != kNone) {
        deps.push_back(id);
      }
    }
    if (deps.empty() && enc_gate_ != kNone && b.encoder) {  // encoder ops reading only data
      deps.push_back(enc_gate_);
    }
    NodeId id = g_.add(n, deps);
    if (last != nullptr) {
      (*last)[static_cast<std::size_t>(i - p.n_fwd)] = id;
    }
  }
  return base;
}

std::int64_t StageBuilder::rank_of_stage(std::int32_t vstage) const {
  return c_.mesh.neighbour(rank_, Axis::kPP, place_->rank_of(vstage) - stage_);
}

void StageBuilder::forward(std::int32_t mb, std::int32_t chunk) {
  const std::int32_t vs = place_->stage_of(stage_, chunk);
  if (vs < enc_stages_) {
    encoder_stage_forward(mb, vs);
    return;
  }
  const BlockProgram& layer = c_.progs.layer;
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId prev = kNone;
  const std::int32_t before = place_->prev_stage(vs);
  if (vs == llm_first_ && enc_stages_ > 0) {  // the features from the last encoder stage
    if (!enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
      features_[static_cast<std::size_t>(mb)] =
          p2p(graph::NodeKind::kRecv, rank_of_stage(before), tag(mb, vs, false),
              enc_->feature_bytes(mb), kNone, c_.enc_misc_names[3], mb);
    }
  } else if (before >= 0) {
    std::int64_t src = rank_of_stage(before);
    prev = src == rank_ ? fwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(before))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, false), layer.out_bytes,
                              kNone, c_.p2p_names[1], mb);
  }
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  const auto m = static_cast<std::size_t>(mb);
  if (vs == llm_first_ && inline_encoder_) {  // the encoder feeds pipe 0's first stage
    features_[m] = encoder_forward(mb, c_.s.encoder.trainable, kNone);
  }
  if (vs == llm_first_ && c_.s.encoder_devices() > 0 && !enc_->mix()[m].groups.empty()) {
    features_[m] =
        p2p(graph::NodeKind::kRecv, encoder_device_of(c_.mesh.coord(rank_)[Axis::kDP], mb),
            kEncoderTag + mb * 6, enc_->feature_bytes(mb), kNone, c_.enc_misc_names[3], mb);
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    std::size_t sl = slot(mb, chunk, k);
    fwd_input_[sl] = prev;
    NodeId base = instantiate(blocks[k], mb, 0, blocks[k].prog->n_fwd, prev, kNone, sl,
                              offset_[static_cast<std::size_t>(chunk)] + k);
    fwd_base_[sl] = base;
    if (blocks[k].prog->fwd_out >= 0) {
      prev = base + static_cast<NodeId>(blocks[k].prog->fwd_out);
    }
    if (vs == llm_first_ && k == 0 && enc_ != nullptr && features_[m] != kNone) {
      // The image features take their places in the embedded sequence.
      prev = marker(c_.enc_misc_names[0], mb, {prev, features_[m]}, 0, enc_->feature_bytes(mb));
    }
  }
  fwd_out_[mc + static_cast<std::size_t>(chunk)] = prev;
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0 && rank_of_stage(after) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(after), tag(mb, after, false), layer.out_bytes, prev,
        c_.p2p_names[0], mb);
  }
}

// The backward of one (microbatch, chunk): the whole of it, or only its input-gradient part
// (a zero-bubble "b"; the weight-gradient part then runs in weight()).
void StageBuilder::backward(std::int32_t mb, std::int32_t chunk, schedule::Task::Kind kind) {
  const std::int32_t vs = place_->stage_of(stage_, chunk);
  if (vs < enc_stages_) {
    encoder_stage_backward(mb, vs);
    return;
  }
  const BlockProgram& layer = c_.progs.layer;
  const std::size_t mc = static_cast<std::size_t>(mb) * chunks_.size();
  NodeId grad = kNone;
  const std::int32_t after = place_->next_stage(vs);
  if (after >= 0) {
    std::int64_t src = rank_of_stage(after);
    grad = src == rank_ ? bwd_out_[mc + static_cast<std::size_t>(place_->chunk_of(after))]
                        : p2p(graph::NodeKind::kRecv, src, tag(mb, vs, true), layer.in_grad_bytes,
                              kNone, c_.p2p_names[3], mb);
  }
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    std::int32_t end =
        kind == schedule::Task::kBackward ? static_cast<std::int32_t>(p.ops.size()) : p.w_begin;
    grad_input_[sl] = grad;
    NodeId base = instantiate(blocks[k], mb, p.n_fwd, end, fwd_input_[sl], grad, sl,
                              offset_[static_cast<std::size_t>(chunk)] + k);
    bwd_base_[sl] = base;
    if (p.bwd_out >= 0) {
      grad = base + static_cast<NodeId>(p.bwd_out - p.n_fwd);
    }
  }
  bwd_out_[mc + static_cast<std::size_t>(chunk)] = grad;
  if (vs == llm_first_ && enc_ != nullptr && c_.s.encoder.trainable &&
      features_[static_cast<std::size_t>(mb)] != kNone) {
    // dL/dfeatures: the image positions of the first layer's input gradient, copied out.
    feature_grad_[static_cast<std::size_t>(mb)] =
        marker(c_.enc_misc_names[9], mb, {grad}, enc_->feature_bytes(mb), 0);
    if (inline_encoder_) {
      encoder_backward(mb, feature_grad_[static_cast<std::size_t>(mb)]);
    }
    if (enc_stages_ > 0) {
      p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
          enc_->feature_bytes(mb), feature_grad_[static_cast<std::size_t>(mb)],
          c_.enc_misc_names[6], mb);
    }
    // Without SP every TP rank holds the whole (replicated) gradient: the first one sends it,
    // the others need no copy.
    bool sender = c_.s.parallel.sp || c_.mesh.coord(rank_)[Axis::kTP] == 0;
    if (c_.s.encoder_devices() > 0 && !sender) {
      g_.nodes[feature_grad_[static_cast<std::size_t>(mb)]].mem_alloc = 0;
    }
    if (c_.s.encoder_devices() > 0 && sender) {
      p2p(graph::NodeKind::kSend, encoder_device_of(c_.mesh.coord(rank_)[Axis::kDP], mb),
          kEncoderTag + mb * 6 + 5, enc_->feature_bytes(mb),
          feature_grad_[static_cast<std::size_t>(mb)], c_.enc_misc_names[6], mb);
    }
  }
  const std::int32_t before = place_->prev_stage(vs);
  if (before >= 0 && before >= enc_stages_ && rank_of_stage(before) != rank_) {
    p2p(graph::NodeKind::kSend, rank_of_stage(before), tag(mb, before, true), layer.in_grad_bytes,
        grad, c_.p2p_names[2], mb);
  }
}

StageBlock StageBuilder::enc_block(const parallel::EncoderProgram& p, std::size_t k) const {
  auto layers = static_cast<std::size_t>(enc_->layers());
  const std::size_t base = rank_ < c_.mesh.size() ? c_.enc_names : c_.enc_device_names;
  std::size_t names = k == 0 ? base : k == layers + 1 ? base + 1 : base + 1 + k;
  auto layer = k == 0 || k == layers + 1 ? -1 : static_cast<std::int32_t>(k - 1);
  return {&p.block(k, layers), layer, names, true};
}

// A zero-time bookkeeping node (a merge, a join, a copy of a gradient out of a larger one).
NodeId StageBuilder::marker(std::uint32_t name, std::int32_t mb, const std::vector<NodeId>& deps,
                            std::int64_t alloc, std::int64_t free) {
  Node n;
  n.kind = graph::NodeKind::kCompute;
  n.op = graph::OpClass::kCopy;
  n.fixed_duration = 0;
  n.name = name;
  n.microbatch = mb;
  n.mem_alloc = alloc;
  n.mem_free = free;
  n.phase = alloc > 0 ? graph::Phase::kBackward : graph::Phase::kForward;
  std::vector<NodeId> on;
  for (NodeId d : deps) {
    if (d != kNone) {
      on.push_back(d);
    }
  }
  return g_.add(n, on);
}

// Encoder messages between pipeline ranks: what = 0 features, 1 inputs, 2 feature gradients.
NodeId StageBuilder::encoder_p2p(graph::NodeKind kind, std::int64_t peer_stage, std::int32_t mb,
                                 int what, std::int64_t bytes, NodeId dep, std::uint32_t name) {
  std::int64_t peer = c_.mesh.neighbour(rank_, Axis::kPP, peer_stage - stage_);
  std::int64_t tag = kEncoderTag + (static_cast<std::int64_t>(mb) * 3 + what) * 2 + (what == 2);
  NodeId id = p2p(kind, peer, tag, bytes, dep, name, mb);
  Node& n = g_.nodes[id];
  if (what == 1) {  // pixels are data: held by the receiver until the recompute releases them
    n.mem_free = 0;
  }
  if (what == 2 && kind == graph::NodeKind::kSend) {  // the copy dies with the send
    n.mem_free = bytes;
  }
  return id;
}

NodeId StageBuilder::encoder_collective(graph::CollType type, std::int32_t group, double bytes,
                                        const std::vector<NodeId>& deps, std::uint32_t name,
                                        graph::Phase ph) {
  Node n;
  n.kind = graph::NodeKind::kCollective;
  n.coll = type;
  n.stream = graph::Stream::kDP;
  n.group = group;
  n.bytes = bytes;
  n.dtype = type == graph::CollType::kBroadcast ? c_.s.training.precision : base::DType::kFP32;
  n.phase = ph;
  n.name = name;
  if (group < 0) {  // a group of one
    n.kind = graph::NodeKind::kCompute;
    n.fixed_duration = 0;
  }
  return g_.add(n, deps);
}

NodeId StageBuilder::encoder_forward(std::int32_t mb, bool saved, NodeId gate, std::size_t begin,
                                     std::size_t end, NodeId input, std::int32_t slot) {
  const std::int32_t sk = slot >= 0 ? slot : mb;
  const auto& groups = enc_->mix()[static_cast<std::size_t>(mb)].groups;
  if (groups.empty()) {
    return kNone;
  }
  end = std::min(end, static_cast<std::size_t>(enc_->layers()) + 2);
  auto m = static_cast<std::size_t>(mb);
  enc_saved_[m] = saved ? 1 : 0;
  NodeId keep_gate = enc_gate_;
  if (gate != kNone) {
    enc_gate_ = gate;
  }
  std::vector<NodeId> outs;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const parallel::EncoderProgram& p = enc_->get(groups[gi], saved);
    NodeId prev = input;
    for (std::size_t k = begin; k < end; ++k) {
      StageBlock b = enc_block(p, k);
      std::size_t sl = enc_slot(sk, gi, k);
      fwd_input_[sl] = prev;
      NodeId base = instantiate(b, mb, 0, b.prog->n_fwd, prev, kNone, sl, total_blocks_ + k);
      fwd_base_[sl] = base;
      prev = base + static_cast<NodeId>(b.prog->fwd_out);
    }
    outs.push_back(prev);
  }
  enc_gate_ = keep_gate;
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names[1], mb, outs, 0, 0);
}

NodeId StageBuilder::encoder_backward(std::int32_t mb, NodeId grad_in, std::size_t begin,
                                      std::size_t end, std::int32_t slot) {
  const std::int32_t sk = slot >= 0 ? slot : mb;
  const auto& groups = enc_->mix()[static_cast<std::size_t>(mb)].groups;
  end = std::min(end, static_cast<std::size_t>(enc_->layers()) + 2);
  std::vector<NodeId> outs;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const parallel::EncoderProgram& p = enc_->get(groups[gi], true);
    NodeId grad = grad_in;
    for (std::size_t k = end; k-- > begin;) {
      StageBlock b = enc_block(p, k);
      std::size_t sl = enc_slot(sk, gi, k);
      grad_input_[sl] = grad;
      NodeId base = instantiate(b, mb, b.prog->n_fwd, static_cast<std::int32_t>(b.prog->ops.size()),
                                fwd_input_[sl], grad, sl, total_blocks_ + k);
      bwd_base_[sl] = base;
      if (b.prog->bwd_out >= 0) {
        grad = base + static_cast<NodeId>(b.prog->bwd_out - b.prog->n_fwd);
      }
    }
    outs.push_back(grad);
  }
  if (outs.empty() || begin == 0) {  // the patch embedding passes no gradient on
    return kNone;
  }
  return outs.size() == 1 ? outs[0] : marker(c_.enc_misc_names[1], mb, outs, 0, 0);
}

// The encoder as its own pipeline stage(s): this rank's blocks of every image group, one
// message per microbatch between stages (all groups' activations together).
void StageBuilder::encoder_stage_forward(std::int32_t mb, std::int32_t vs) {
  if (enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;
  }
  NodeId input = kNone;
  if (vs > 0) {
    input = p2p(graph::NodeKind::kRecv, rank_of_stage(vs - 1), tag(mb, vs, false),
                enc_->boundary_bytes(mb, enc_begin_), kNone, c_.p2p_names[1], mb);
  }
  NodeId out = encoder_forward(mb, c_.s.encoder.trainable, kNone, enc_begin_, enc_end_, input);
  p2p(graph::NodeKind::kSend, rank_of_stage(vs + 1), tag(mb, vs + 1, false),
      enc_->boundary_bytes(mb, enc_end_), out,
      vs + 1 == enc_stages_ ? c_.enc_misc_names[2] : c_.p2p_names[0], mb);
}

void StageBuilder::encoder_stage_backward(std::int32_t mb, std::int32_t vs) {
  if (!c_.s.encoder.trainable || enc_->mix()[static_cast<std::size_t>(mb)].groups.empty()) {
    return;  // a frozen encoder stage has no backward
  }
  NodeId grad = p2p(graph::NodeKind::kRecv, rank_of_stage(vs + 1), tag(mb, vs, true),
                    enc_->boundary_bytes(mb, enc_end_), kNone, c_.p2p_names[3], mb);
  NodeId out = encoder_backward(mb, grad, enc_begin_, enc_end_);
  if (vs > 0) {
    p2p(graph::NodeKind::kSend, rank_of_stage(vs - 1), tag(mb, vs - 1, true),
        enc_->boundary_bytes(mb, enc_begin_), out, c_.p2p_names[2], mb);
  }
}

// The transposed plan of this pipeline rank (synth/schedule/transpose.h): body tasks as the
// body schedule runs them, encoder steps around them.
void StageBuilder::run_transposed() {
  using schedule::Step;
  const auto& names = c_.enc_misc_names;
  const double params = enc_->params();
  for (const Step& st : c_.transpose[static_cast<std::size_t>(stage_)]) {
    const std::int32_t mb = st.microbatch;
    const auto m = static_cast<std::size_t>(std::max(mb, 0));
    switch (st.kind) {
      case Step::kBody:
        run_body_task(st.task);
        break;
      case Step::kParamBroadcast:
        enc_gate_ = encoder_collective(
            graph::CollType::kBroadcast,
            c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kPP)],
            params * base::dtype_bytes(c_.s.training.precision), {}, names[7],
            graph::Phase::kForward);
        break;
      case Step::kEncoderForward: {
        bool saved = false;
        for (const Step& later : c_.transpose[static_cast<std::size_t>(stage_)]) {
          saved = saved || (later.kind == Step::kEncoderBackward && later.microbatch == mb);
        }
        features_[m] = encoder_forward(mb, saved, kNone);
        break;
      }
      case Step::kFeatureSend:
        if (features_[m] != kNone) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, 0, enc_->feature_bytes(mb), features_[m],
                      names[2]);
        }
        break;
      case Step::kFeatureRecv:
        if (!enc_->mix()[m].groups.empty()) {
          features_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, 0,
                                     enc_->feature_bytes(mb), kNone, names[3]);
        }
        break;
      case Step::kInputSend:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, 1, enc_->input_bytes(mb), enc_gate_,
                      names[4]);
        }
        break;
      case Step::kInputRecv:
        if (!enc_->mix()[m].groups.empty()) {
          enc_input_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, 1, enc_->input_bytes(mb),
                                      kNone, names[5]);
        }
        break;
      case Step::kEncoderRecompute:
        if (!enc_->mix()[m].groups.empty()) {
          // The recomputed features only rebuild the saved activations: released at once.
          NodeId again = encoder_forward(mb, true, enc_input_[m]);
          marker(names[1], mb, {again}, 0, enc_->feature_bytes(mb));
          encoder_backward(mb, feature_grad_[m]);
          if (enc_input_[m] != kNone) {
            marker(names[10], mb, {static_cast<NodeId>(g_.size() - 1)}, 0, enc_->input_bytes(mb));
          }
        }
        break;
      case Step::kEncoderBackward:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_backward(mb, feature_grad_[m]);
        }
        break;
      case Step::kGradSend:
        if (!enc_->mix()[m].groups.empty()) {
          encoder_p2p(graph::NodeKind::kSend, st.peer, mb, 2, enc_->feature_bytes(mb),
                      feature_grad_[m], names[6]);
        }
        break;
      case Step::kGradRecv:
        if (!enc_->mix()[m].groups.empty()) {
          feature_grad_[m] = encoder_p2p(graph::NodeKind::kRecv, st.peer, mb, 2,
                                         enc_->feature_bytes(mb), kNone, names[6]);
        }
        break;
      case Step::kGradAllReduce: {
        std::vector<NodeId> deps;
        for (std::size_t k = total_blocks_; k < last_bwd_node_.size(); ++k) {
          for (NodeId id : last_bwd_node_[k]) {
            if (id != kNone) {
              deps.push_back(id);
            }
          }
        }
        enc_allreduce_ = encoder_collective(graph::CollType::kAllReduce,
                                            c_.enc_group_of[static_cast<std::size_t>(rank_)],
                                            params * 4.0, deps, names[8], graph::Phase::kBackward);
        break;
      }
    }
  }
}

// The deferred weight-gradient part of one (microbatch, chunk)'s backward.
void StageBuilder::weight(std::int32_t mb, std::int32_t chunk) {
  const auto& blocks = chunks_[static_cast<std::size_t>(chunk)];
  for (std::size_t k = blocks.size(); k-- > 0;) {
    const BlockProgram& p = *blocks[k].prog;
    std::size_t sl = slot(mb, chunk, k);
    instantiate(blocks[k], mb, p.w_begin, static_cast<std::int32_t>(p.ops.size()), fwd_input_[sl],
                grad_input_[sl], sl, offset_[static_cast<std::size_t>(chunk)] + k);
  }
}

// Gradients accumulate over microbatches; after the last backward of each bucket's blocks
// the bucket is reduced over the data-parallel group (overlapping the rest of backward),
// then the optimizer steps (distributed optimizer: on its shard, then gathers parameters).
void StageBuilder::gradient_reduction(double params) {
  const Scenario& s = c_.s;
  std::int32_t dp_group =
      c_.group_of[static_cast<std::size_t>(rank_)][static_cast<std::size_t>(Axis::kDP)];
  bool dist = s.training.distributed_optimizer && dp_group >= 0;
  double bucket_cap = grad_bucket_params(s);
  // The blocks whose gradients this rank reduces, in model order: the encoder's first when
  // they are reduced here, then the LLM's.
  struct GradBlock {
    double params;
    std::vector<NodeId> wgrads;
  };
  std::vector<GradBlock> grads;
  if (holds_encoder_grads() && s.schedule.encoder_backward != EncoderBackward::kOwner) {
    const parallel::EncoderProgram& rep = enc_->representative();
    auto layers = static_cast<std::size_t>(enc_->layers());
    for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
      const BlockProgram& p = rep.block(k, layers);
      const auto& last = last_bwd_node_[total_blocks_ + k];
      GradBlock gb{p.params, {}};
      for (std::int32_t w : p.wgrad_ops) {
        auto i = static_cast<std::size_t>(w - p.n_fwd);
        if (i < last.size() && last[i] != kNone) {
          gb.wgrads.push_back(last[i]);
        }
      }
      grads.push_back(std::move(gb));
    }
  }
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const BlockProgram& p = *blocks_[k].prog;
    GradBlock gb{p.params, {}};
    for (std::int32_t w : p.wgrad_ops) {
      gb.wgrads.push_back(last_bwd_node_[k][static_cast<std::size_t>(w - p.n_fwd)]);
    }
    grads.push_back(std::move(gb));
  }
  std::vector<NodeId> ready;
  std::vector<NodeId> buckets;
  std::vector<double> bucket_params;
  double acc = 0.0;
  std::vector<NodeId> all_wgrads;  // without overlap, the first bucket waits for all of them
  for (std::size_t k = 0; k < grads.size() && !s.training.overlap_grad_reduce; ++k) {
    all_wgrads.insert(all_wgrads.end(), grads[k].wgrads.begin(), grads[k].wgrads.end());
  }
  auto flush = [&] {
    if (acc <= 0.0) {
      return;
    }
    if (dp_group < 0) {
      buckets.insert(buckets.end(), ready.begin(), ready.end());
    } else {
      Node n;
      n.kind = graph::NodeKind::kCollective;
      n.coll = dist ? graph::CollType::kReduceScatter : graph::CollType::kAllReduce;
      n.stream = graph::Stream::kDP;
      n.group = dp_group;
      n.bytes = acc * 4.0;  // fp32 gradients
      n.dtype = base::DType::kFP32;
      n.phase = graph::Phase::kBackward;
      n.name = c_.bucket_names[0];
      buckets.push_back(g_.add(n, buckets.empty() && !all_wgrads.empty() ? all_wgrads : ready));
      bucket_params.push_back(acc);
    }
    ready.clear();
    acc = 0.0;
  };
  for (std::size_t k = grads.size(); k-- > 0;) {
    ready.insert(ready.end(), grads[k].wgrads.begin(), grads[k].wgrads.end());
    acc += grads[k].params;
    if (acc >= bucket_cap) {
      flush();
    }
  }
  flush();
  embedding_reduction(buckets);
  // DualPipe: ranks r and N-1-r hold the same two stages (one per direction); their gradients
  // are summed before the step (DeepSeek-V3 section 3.2.1: two copies of the parameters).
  std::int32_t mirror = c_.mirror_group_of[static_cast<std::size_t>(rank_)];
  if (mirror >= 0) {
    std::vector<NodeId> wgrads;
    for (const GradBlock& gb : grads) {
      wgrads.insert(wgrads.end(), gb.wgrads.begin(), gb.wgrads.end());
    }
    Node n;
    n.kind = graph::NodeKind::kCollective;
    n.coll = graph::CollType::kAllReduce;
    n.stream = graph::Stream::kDP;
    n.group = mirror;
    n.bytes = params * 4.0;
    n.dtype = base::DType::kFP32;
    n.phase = graph::Phase::kBackward;
    n.name = c_.bucket_names[3];
    buckets.push_back(g_.add(n, wgrads));
  }
  if (enc_allreduce_ != kNone) {
    buckets.push_back(enc_allreduce_);
  }
  Node opt;
  opt.kind = graph::NodeKind::kCompute;
  opt.op = graph::OpClass::kOptimizer;
  opt.phase = graph::Phase::kOptimizer;
  opt.dtype = base::DType::kFP32;
  double shard = dist ? params / static_cast<double>(s.parallel.dp) : params;
  opt.bytes = 32.0 * shard;  // Adam: read param, grad, master, m, v; write master, m, v, param
  opt.flops = 10.0 * shard;
  opt.name = c_.optimizer_name;
  NodeId o = g_.add(opt, buckets);
  if (dist) {
    for (double bp : bucket_params) {
      Node n;
      n.kind = graph::NodeKind::kCollective;
      n.coll = graph::CollType::kAllGather;
      n.stream = graph::Stream::kDP;
      n.group = dp_group;
      n.bytes = bp * base::dtype_bytes(s.training.precision);
      n.dtype = s.training.precision;
      n.phase = graph::Phase::kOptimizer;
      n.name = c_.bucket_names[1];
      g_.add(n, {o});
    }
  }
}

// Tied embeddings over several stages: the first stage's table and the last stage's copy
// sum their gradients over the embedding group (Megatron's _allreduce_embedding_grads).
void StageBuilder::embedding_reduction(std::vector<NodeId>& before_optimizer) {
  std::int32_t group = c_.embed_group_of[static_cast<std::size_t>(rank_)];
  if (group < 0) {
    return;
  }
  const StageBlock& b = stage_ == 0 ? blocks_.front() : blocks_.back();
  std::size_t k = stage_ == 0 ? 0 : blocks_.size() - 1;
  std::vector<NodeId> deps;
  for (std::int32_t w : b.prog->wgrad_ops) {
    deps.push_back(last_bwd_node_[k][static_cast<std::size_t>(w - b.prog->n_fwd)]);
  }
  const Scenario& s = c_.s;
  Node n;
  n.kind = graph::NodeKind::kCollective;
  n.coll = graph::CollType::kAllReduce;
  n.stream = graph::Stream::kDP;
  n.group = group;
  n.bytes = 4.0 * static_cast<double>(models::padded_vocab(s) / s.parallel.tp * s.model.hidden);
  n.dtype = base::DType::kFP32;
  n.phase = graph::Phase::kBackward;
  n.name = c_.bucket_names[2];
  before_optimizer.push_back(g_.add(n, deps));
}

// The i-th stage of a pipe of n stages holds layers [i*L/n, (i+1)*L/n); a pipe's first stage
// also holds the embedding, its last one the head and loss (DualPipe: each pipe a full copy).
//
// With the encoder as its own first k stages, the encoder's L+2 blocks are cut as evenly as
// they go over stages [0, k) and the LLM's layers over the other p-k (Megatron's uneven
// split: the remainder to the first stages).
void StageBuilder::place_blocks() {
  const Scenario& s = c_.s;
  place_.emplace(s.schedule, stages_);
  vstages_ = place_->stages();
  if (enc_ != nullptr && s.schedule.encoder == EncoderPlacement::kStages) {
    enc_stages_ = static_cast<std::int32_t>(s.schedule.encoder_stages);
    llm_first_ = enc_stages_;
  }
  auto cut = [](std::int64_t n, std::int64_t parts, std::int64_t i) {
    return i * (n / parts) + std::min(i, n % parts);
  };
  const std::int64_t llm_stages = place_->stages_per_pipe() - enc_stages_;
  for (std::int32_t c = 0; c < place_->chunks(); ++c) {
    std::int32_t vs = place_->stage_of(stage_, c);
    std::vector<StageBlock> blocks;
    if (vs < enc_stages_) {
      auto chain = static_cast<std::int64_t>(enc_->layers()) + 2;
      enc_begin_ = static_cast<std::size_t>(cut(chain, enc_stages_, vs));
      enc_end_ = static_cast<std::size_t>(cut(chain, enc_stages_, vs + 1));
      offset_.push_back(total_blocks_);
      chunks_.push_back({});
      continue;
    }
    std::int64_t slice = place_->stage_in_pipe(vs) - enc_stages_;
    if (place_->first_of_pipe(vs) || slice == 0) {
      blocks.push_back({&c_.progs.embed, -1, 0});
    }
    for (auto l = static_cast<std::int32_t>(cut(s.model.layers, llm_stages, slice));
         l < cut(s.model.layers, llm_stages, slice + 1); ++l) {
      blocks.push_back({&c_.progs.layer, l, static_cast<std::size_t>(2 + l)});
    }
    if (place_->last_of_pipe(vs)) {
      blocks.push_back({&c_.progs.head, -1, 1});
    }
    offset_.push_back(total_blocks_);
    total_blocks_ += blocks.size();
    blocks_.insert(blocks_.end(), blocks.begin(), blocks.end());
    chunks_.push_back(std::move(blocks));
  }
}

// Which encoder device runs replica `replica`'s microbatch `mb`: round-robin over the
// devices, microbatch-major, so every device starts on the earliest microbatches.
std::int64_t StageBuilder::encoder_device_of(std::int64_t replica, std::int32_t mb) const {
  std::int64_t n = c_.s.encoder_devices();
  return c_.mesh.size() + (static_cast<std::int64_t>(mb) * c_.s.parallel.dp + replica) % n;
}

// An encoder device: the forwards of its microbatches in order, each sent to the first-stage
// ranks of its replica (every tensor-parallel rank takes its share); for a trained encoder
// then the backwards as the feature gradients come back, a gradient all-reduce over the
// encoder devices, and the optimizer.
RankGraph StageBuilder::build_encoder_device() {
  const Scenario& s = c_.s;
  const auto m = static_cast<std::int32_t>(s.microbatches());
  const bool trained = s.encoder.trainable;
  const parallel::EncoderPrograms& llm_side = *c_.enc;
  struct Job {
    std::int64_t replica;
    std::int32_t mb;
  };
  std::vector<Job> jobs;
  for (std::int32_t j = 0; j < m; ++j) {
    for (std::int64_t d = 0; d < s.parallel.dp; ++d) {
      if (encoder_device_of(d, j) == rank_ &&
          !enc_->mix()[static_cast<std::size_t>(j)].groups.empty()) {
        jobs.push_back({d, j});
      }
    }
  }
  const std::size_t per_group = static_cast<std::size_t>(enc_->layers()) + 2;
  std::size_t total = 0;
  for (const Job& job : jobs) {
    enc_offset_.push_back(total);
    total += enc_->mix()[static_cast<std::size_t>(job.mb)].groups.size() * per_group;
  }
  for (auto* v : {&fwd_base_, &fwd_input_, &bwd_base_, &grad_input_}) {
    v->assign(total, kNone);
  }
  last_bwd_node_.assign(per_group, {});
  enc_saved_.assign(static_cast<std::size_t>(m), 0);
  auto first_stage = [&](std::int64_t replica) {
    std::vector<std::int64_t> ranks;
    for (std::int64_t t = 0; t < s.parallel.tp; ++t) {
      parallel::Coord co;
      co.at[static_cast<std::size_t>(Axis::kTP)] = t;
      co.at[static_cast<std::size_t>(Axis::kDP)] = replica;
      ranks.push_back(c_.mesh.rank(co));
    }
    return ranks;
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    NodeId out =
        encoder_forward(job.mb, trained, kNone, 0, SIZE_MAX, kNone, static_cast<std::int32_t>(i));
    std::vector<NodeId> sent;
    for (std::int64_t dst : first_stage(job.replica)) {
      NodeId id = p2p(graph::NodeKind::kSend, dst, kEncoderTag + job.mb * 6,
                      llm_side.feature_bytes(job.mb), out, c_.enc_misc_names[2], job.mb);
      g_.nodes[id].mem_free = 0;
      sent.push_back(id);
    }
    marker(c_.enc_misc_names[11], job.mb, sent, 0, enc_->feature_bytes(job.mb));
  }
  std::vector<NodeId> wgrads;
  for (std::size_t i = 0; i < jobs.size() && trained; ++i) {
    const Job& job = jobs[i];
    std::vector<NodeId> grads;
    for (std::int64_t src : first_stage(job.replica)) {
      if (s.parallel.sp || grads.empty()) {  // SP: every shard; else the first TP rank's copy
        grads.push_back(p2p(graph::NodeKind::kRecv, src, kEncoderTag + job.mb * 6 + 5,
                            llm_side.feature_bytes(job.mb), kNone, c_.enc_misc_names[6], job.mb));
      }
    }
    NodeId grad = grads.size() == 1 ? grads[0] : marker(c_.enc_misc_names[1], job.mb, grads, 0, 0);
    encoder_backward(job.mb, grad, 0, SIZE_MAX, static_cast<std::int32_t>(i));
  }
  enc_params_ = enc_->params();
  if (trained) {
    for (const auto& last : last_bwd_node_) {
      for (NodeId id : last) {
        if (id != kNone) {
          wgrads.push_back(id);
        }
      }
    }
    NodeId reduce = encoder_collective(
        graph::CollType::kAllReduce, c_.enc_group_of[static_cast<std::size_t>(rank_)],
        enc_params_ * 4.0, wgrads, c_.enc_misc_names[8], graph::Phase::kBackward);
    Node opt;
    opt.kind = graph::NodeKind::kCompute;
    opt.op = graph::OpClass::kOptimizer;
    opt.phase = graph::Phase::kOptimizer;
    opt.dtype = base::DType::kFP32;
    opt.bytes = 32.0 * enc_params_;
    opt.flops = 10.0 * enc_params_;
    opt.name = c_.optimizer_name;
    g_.add(opt, {reduce});
  }
  g_.static_memory = static_cast<std::int64_t>(
      enc_params_ * (trained ? 18.0 : base::dtype_bytes(s.training.precision)));
  g_.stage = -1;
  return std::move(g_);
}

RankGraph StageBuilder::build() {
  if (rank_ >= c_.mesh.size()) {
    return build_encoder_device();
  }
  const Scenario& s = c_.s;
  stages_ = static_cast<std::int32_t>(s.parallel.pp);
  stage_ = static_cast<std::int32_t>(c_.mesh.coord(rank_)[Axis::kPP]);
  place_blocks();
  auto m = static_cast<std::int32_t>(s.microbatches());
  fwd_base_.assign(static_cast<std::size_t>(m) * total_blocks_, kNone);
  fwd_input_.assign(fwd_base_.size(), kNone);
  fwd_out_.assign(static_cast<std::size_t>(m) * chunks_.size(), kNone);
  bwd_out_.assign(fwd_out_.size(), kNone);
  bwd_base_.assign(fwd_base_.size(), kNone);
  grad_input_.assign(fwd_base_.size(), kNone);
  last_bwd_node_.assign(total_blocks_, {});
  double params = 0.0;
  for (const auto& b : blocks_) {
    params += b.prog->params;
  }
  const bool transposed = s.schedule.encoder == EncoderPlacement::kTranspose;
  if (enc_ != nullptr) {
    inline_encoder_ = s.schedule.encoder == EncoderPlacement::kInline;
    enc_slot_base_ = fwd_base_.size();
    std::size_t per_group = static_cast<std::size_t>(enc_->layers()) + 2;
    std::size_t total = 0;
    for (const auto& mix : enc_->mix()) {
      enc_offset_.push_back(total);
      total += mix.groups.size() * per_group;
    }
    for (auto* v : {&fwd_base_, &fwd_input_, &bwd_base_, &grad_input_}) {
      v->resize(enc_slot_base_ + total, kNone);
    }
    last_bwd_node_.resize(total_blocks_ + per_group);
    features_.assign(static_cast<std::size_t>(m), kNone);
    feature_grad_.assign(features_.size(), kNone);
    enc_input_.assign(features_.size(), kNone);
    enc_saved_.assign(features_.size(), 0);
  }
  if (transposed) {
    run_transposed();
  } else {
    for (const schedule::Task& t : schedule::stage_order(s.schedule, stages_, stage_, m)) {
      run_body_task(t);
    }
  }
  if (enc_ != nullptr) {
    if (enc_stages_ == 0) {
      enc_begin_ = 0;
      enc_end_ = static_cast<std::size_t>(enc_->layers()) + 2;
    }
    const parallel::EncoderProgram& rep = enc_->representative();
    for (std::size_t k = enc_begin_; k < enc_end_; ++k) {
      enc_params_ += rep.block(k, static_cast<std::size_t>(enc_->layers())).params;
    }
  }
  if (holds_encoder_grads()) {
    params += enc_params_;
  }
  gradient_reduction(params);
  double bytes_per_param =
      s.training.distributed_optimizer ? 6.0 + 12.0 / static_cast<double>(s.parallel.dp) : 18.0;
  g_.static_memory = static_cast<std::int64_t>(params * bytes_per_param);
  if (holds_encoder() && !holds_encoder_grads()) {
    // Encoder weights without gradients or optimizer state (frozen, or a replica).
    g_.static_memory +=
        static_cast<std::int64_t>(enc_params_ * base::dtype_bytes(s.training.precision));
  }
  g_.stage = stage_;
  return std::move(g_);
}

void StageBuilder::run_body_task(const schedule::Task& t) {
  switch (t.kind) {
    case schedule::Task::kForward:
      forward(t.microbatch, t.chunk);
      break;
    case schedule::Task::kBackward:
    case schedule::Task::kBackwardInput:
      backward(t.microbatch, t.chunk, t.kind);
      break;
    case schedule::Task::kWeight:
      weight(t.microbatch, t.chunk);
      break;
  }
}

// Whether this rank holds encoder weights: the first stage (inline), every rank (transpose),
// the encoder's own stages.
bool StageBuilder::holds_encoder() const {
  if (enc_ == nullptr) {
    return false;
  }
  switch (c_.s.schedule.encoder) {
    case EncoderPlacement::kInline:
      return stage_ == 0;
    case EncoderPlacement::kTranspose:
      return true;
    case EncoderPlacement::kStages:
      return stage_ < enc_stages_;
    case EncoderPlacement::kSeparate:
      return false;
  }
  return false;
}

// Whether this rank keeps gradients and optimizer state of the encoder: the ranks that run
// it inline or as stages, the first stage under centralized recompute, every rank under
// owner-backward.
bool StageBuilder::holds_encoder_grads() const {
  if (!holds_encoder() || !c_.s.encoder.trainable) {
    return false;
  }
  if (c_.s.schedule.encoder == EncoderPlacement::kTranspose) {
    return c_.s.schedule.encoder_backward == EncoderBackward::kOwner || stage_ == 0;
  }
  return true;
}

std::vector<std::uint32_t> intern_block(ExecGraph& g, const BlockProgram& p,
                                        const std::string& prefix) {
  std::vector<std::uint32_t> ids;
  for (const auto& op : p.ops) {
    ids.push_back(g.intern(prefix + op.name));
  }
  return ids;
}

void make_groups(ExecGraph& g, Context& c) {
  const auto& mesh = c.mesh;
  c.group_of.assign(static_cast<std::size_t>(c.ranks), {-1, -1, -1});
  // Pipeline groups carry no collective but name each rank's send/recv peers.
  constexpr std::array<std::pair<Axis, graph::GroupKind>, 3> kAxes = {
      std::pair{Axis::kTP, graph::GroupKind::kTP}, std::pair{Axis::kDP, graph::GroupKind::kDP},
      std::pair{Axis::kPP, graph::GroupKind::kPP}};
  for (auto [axis, kind] : kAxes) {
    if (mesh.axis_size(axis) == 1) {
      continue;
    }
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      auto& slot = c.group_of[static_cast<std::size_t>(r)][static_cast<std::size_t>(axis)];
      if (slot >= 0) {
        continue;
      }
      graph::Group grp{kind, mesh.group(r, axis)};
      auto id = static_cast<std::int32_t>(g.groups.size());
      for (std::int32_t member : grp.ranks) {
        c.group_of[static_cast<std::size_t>(member)][static_cast<std::size_t>(axis)] = id;
      }
      g.groups.push_back(std::move(grp));
    }
  }
  c.mirror_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  const std::int64_t pp = mesh.axis_size(Axis::kPP);
  if (c.s.schedule.kind == ScheduleKind::kDualPipe && pp > 1) {
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      std::int64_t st = mesh.coord(r)[Axis::kPP];
      if (st >= pp / 2) {
        continue;
      }
      auto mirror = mesh.neighbour(r, Axis::kPP, pp - 1 - 2 * st);
      auto id = static_cast<std::int32_t>(g.groups.size());
      g.groups.push_back({graph::GroupKind::kPP,
                          {static_cast<std::int32_t>(r), static_cast<std::int32_t>(mirror)}});
      c.mirror_group_of[static_cast<std::size_t>(r)] = id;
      c.mirror_group_of[static_cast<std::size_t>(mirror)] = id;
    }
  }
  c.embed_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  if (!c.s.model.tied_embeddings || models::embedding_and_head_share_a_rank(c.s)) {
    return;
  }
  for (std::int64_t r = 0; r < mesh.size(); ++r) {
    if (mesh.coord(r)[Axis::kPP] != 0) {
      continue;
    }
    auto last = mesh.neighbour(r, Axis::kPP, mesh.axis_size(Axis::kPP) - 1);
    auto id = static_cast<std::int32_t>(g.groups.size());
    g.groups.push_back(
        {graph::GroupKind::kPP, {static_cast<std::int32_t>(r), static_cast<std::int32_t>(last)}});
    c.embed_group_of[static_cast<std::size_t>(r)] = id;
    c.embed_group_of[static_cast<std::size_t>(last)] = id;
  }
}

// The transposed plan of every pipeline rank. The greedy owner map's costs are FLOPs
// (hardware-independent): the encoder forward per microbatch, one LLM stage's forward and
// backward.
std::vector<std::vector<schedule::Step>> plan_transpose(const Scenario& s,
                                                        const StepPrograms& progs,
                                                        const parallel::EncoderPrograms& enc) {
  auto p = static_cast<int>(s.parallel.pp);
  auto m = static_cast<int>(s.microbatches());
  schedule::TransposeCosts costs;
  for (int j = 0; j < m; ++j) {
    costs.encoder_forward.push_back(enc.forward_flops(j));
  }
  double fwd = 0.0;
  for (std::int32_t i = 0; i < progs.layer.n_fwd; ++i) {
    fwd += progs.layer.ops[static_cast<std::size_t>(i)].model_flops;
  }
  costs.stage_forward = fwd * static_cast<double>(s.model.layers) / p;
  costs.stage_backward = 2.0 * costs.stage_forward;
  auto mode = s.schedule.owners == OwnerMode::kMin      ? schedule::OwnerMap::kMin
              : s.schedule.owners == OwnerMode::kGreedy ? schedule::OwnerMap::kGreedy
                                                        : schedule::OwnerMap::kRoundRobin;
  auto training = !s.encoder.trainable ? schedule::EncoderTraining::kFrozen
                  : s.schedule.encoder_backward == EncoderBackward::kOwner
                      ? schedule::EncoderTraining::kOwnerBackward
                      : schedule::EncoderTraining::kCentralRecompute;
  std::vector<std::vector<schedule::Task>> body;
  for (int r = 0; r < p; ++r) {
    body.push_back(schedule::stage_order(s.schedule, p, r, m));
  }
  return schedule::transpose(body, schedule::owner_map(mode, p, m, costs), training,
                             mode == schedule::OwnerMap::kMin);
}

// Names, groups and (for transpose) the per-rank plans of the encoder region.
void prepare_encoder(ExecGraph& g, Context& c, const parallel::EncoderPrograms& enc) {
  const Scenario& s = c.s;
  c.enc = &enc;
  const parallel::EncoderProgram& rep = enc.representative();
  c.enc_names = c.names.size();
  c.names.push_back(intern_block(g, rep.patch, "encoder."));
  c.names.push_back(intern_block(g, rep.projector, "encoder."));
  for (std::int64_t l = 0; l < enc.layers(); ++l) {
    c.names.push_back(intern_block(g, rep.layer, fmt::format("encoder.L{}.", l)));
  }
  if (c.enc_device != nullptr) {
    const parallel::EncoderProgram& dev = c.enc_device->representative();
    c.enc_device_names = c.names.size();
    c.names.push_back(intern_block(g, dev.patch, "encoder."));
    c.names.push_back(intern_block(g, dev.projector, "encoder."));
    for (std::int64_t l = 0; l < enc.layers(); ++l) {
      c.names.push_back(intern_block(g, dev.layer, fmt::format("encoder.L{}.", l)));
    }
  }
  for (const char* n :
       {"encoder.merge_features", "encoder.join_images", "encoder.send_features",
        "encoder.recv_features", "encoder.send_input", "encoder.recv_input",
        "encoder.feature_grad_p2p", "encoder.param_broadcast", "encoder.grad_allreduce",
        "encoder.feature_grad", "encoder.release_input", "encoder.release_features"}) {
    c.enc_misc_names.push_back(g.intern(n));
  }
  const auto& mesh = c.mesh;
  c.enc_group_of.assign(static_cast<std::size_t>(c.ranks), -1);
  bool owner = s.encoder.trainable && s.schedule.encoder == EncoderPlacement::kTranspose &&
               s.schedule.encoder_backward == EncoderBackward::kOwner;
  if (owner && s.parallel.pp * s.parallel.dp > 1) {  // ranks that share a tensor-parallel rank
    for (std::int64_t t = 0; t < s.parallel.tp; ++t) {
      graph::Group grp{graph::GroupKind::kPP, {}};
      for (std::int64_t r = 0; r < mesh.size(); ++r) {
        if (mesh.coord(r)[Axis::kTP] == t) {
          grp.ranks.push_back(static_cast<std::int32_t>(r));
        }
      }
      auto id = static_cast<std::int32_t>(g.groups.size());
      for (std::int32_t r : grp.ranks) {
        c.enc_group_of[static_cast<std::size_t>(r)] = id;
      }
      g.groups.push_back(std::move(grp));
    }
  }
  const std::int64_t devices = s.encoder_devices();
  if (s.encoder.trainable && devices > 1) {  // the encoder's own devices sum their gradients
    graph::Group grp{graph::GroupKind::kDP, {}};
    for (std::int64_t e = 0; e < devices; ++e) {
      grp.ranks.push_back(static_cast<std::int32_t>(mesh.size() + e));
      c.enc_group_of[static_cast<std::size_t>(mesh.size() + e)] =
          static_cast<std::int32_t>(g.groups.size());
    }
    g.groups.push_back(std::move(grp));
  }
  if (s.schedule.encoder == EncoderPlacement::kTranspose) {
    c.transpose = plan_transpose(s, c.progs, enc);
  }
}

}  // namespace

namespace {

// Refuses a step whose graphs would not fit in memory, before building them.
void check_size(const Scenario& s, const StepPrograms& progs, bool share) {
  constexpr double kMaxNodes = 1.2e8;  // ~15 GB of nodes and dependencies
  double per_rank = static_cast<double>(s.microbatches()) *
                    (static_cast<double>(s.model.layers) / static_cast<double>(s.parallel.pp) *
                         static_cast<double>(progs.layer.ops.size()) +
                     static_cast<double>(progs.embed.ops.size() + progs.head.ops.size()));
  double graphs = share ? static_cast<double>(s.parallel.pp)
                        : static_cast<double>(s.parallel.tp * s.parallel.pp * s.parallel.dp);
  if (per_rank * graphs > kMaxNodes) {
    throw base::InputError(fmt::format(
        "{}: this step needs about {:.3g} execution-graph nodes ({:.3g} per rank graph, {} "
        "graphs), more than the {:.3g} Tessera holds in memory; use fewer microbatches "
        "(global_batch / (dp x micro_batch)) or layers{}",
        s.file.empty() ? s.name : s.file, per_rank * graphs, per_rank, graphs, kMaxNodes,
        share ? "" : ", or share rank classes (drop --no-share)"));
  }
}

}  // namespace

ExecGraph synthesize(const Scenario& s, const SynthOptions& options) {
  StepPrograms progs = build_programs(s);
  check_size(s, progs, options.share_rank_classes);
  parallel::Mesh mesh(s.parallel);
  ExecGraph g;
  const std::int64_t enc_devices = s.encoder_devices();
  g.num_ranks = static_cast<std::int32_t>(mesh.size() + enc_devices);
  Context c{
      s,  progs, mesh, mesh.size() + enc_devices, {}, {}, {}, {}, {}, 0, {}, nullptr, nullptr, 0, 0,
      {}, {},    {}};
  c.names.push_back(intern_block(g, progs.embed, ""));
  c.names.push_back(intern_block(g, progs.head, ""));
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    c.names.push_back(intern_block(g, progs.layer, fmt::format("L{}.", l)));
  }
  c.p2p_names = {g.intern("pp.send_activation"), g.intern("pp.recv_activation"),
                 g.intern("pp.send_grad"), g.intern("pp.recv_grad")};
  c.optimizer_name = g.intern("optimizer.adam");
  c.bucket_names = {g.intern("dp.grad_bucket"), g.intern("dp.param_gather"),
                    g.intern("pp.embedding_grad_allreduce"), g.intern("pp.mirror_grad_allreduce")};
  make_groups(g, c);
  std::optional<parallel::EncoderPrograms> enc;
  std::optional<parallel::EncoderPrograms> enc_whole;  // without tensor or data parallelism
  if (s.encoder.present) {
    enc.emplace(s);
    Scenario whole = s;
    whole.parallel = ParallelConfig{};
    enc_whole.emplace(s, &whole);
    c.enc_device = &*enc_whole;
    prepare_encoder(g, c, *enc);
  }

  // Classes: one per pipeline stage. With the encoder on devices of its own, first-stage
  // ranks talk to different encoder devices that no group links, so every rank is a class.
  const bool share = options.share_rank_classes && enc_devices == 0;
  std::vector<std::int64_t> reps;
  if (share) {
    for (std::int64_t st = 0; st < s.parallel.pp; ++st) {
      parallel::Coord co;
      co.at[static_cast<std::size_t>(Axis::kPP)] = st;
      reps.push_back(mesh.rank(co));
    }
  } else {
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      reps.push_back(r);
    }
  }
  const auto llm_classes = static_cast<std::int32_t>(reps.size());
  for (std::int64_t e = 0; e < enc_devices; ++e) {  // each encoder device is a class of its own
    reps.push_back(mesh.size() + e);
  }
  g.classes.resize(reps.size());
  tbb::parallel_for(std::size_t{0}, reps.size(),
                    [&](std::size_t i) { g.classes[i] = StageBuilder(c, reps[i]).build(); });
  g.class_rep.assign(reps.begin(), reps.end());
  g.class_of_rank.resize(static_cast<std::size_t>(c.ranks));
  for (std::int64_t r = 0; r < mesh.size(); ++r) {
    g.class_of_rank[static_cast<std::size_t>(r)] =
        share ? static_cast<std::int32_t>(mesh.coord(r)[Axis::kPP]) : static_cast<std::int32_t>(r);
  }
  for (std::int64_t e = 0; e < enc_devices; ++e) {
    g.class_of_rank[static_cast<std::size_t>(mesh.size() + e)] =
        llm_classes + static_cast<std::int32_t>(e);
  }
  double m = static_cast<double>(s.microbatches());
  double ranks_per_stage = static_cast<double>(s.parallel.tp * s.parallel.dp);
  double layers = static_cast<double>(s.model.layers);
  auto total = [&](double BlockProgram::*field) {
    return m * ranks_per_stage *
           (progs.embed.*field + progs.head.*field + layers * progs.layer.*field);
  };
  g.info.model_flops = total(&BlockProgram::model_flops);
  g.info.hardware_flops = total(&BlockProgram::hardware_flops);
  if (enc) {
    // Model FLOPs: each replica's microbatch runs its encoder once (counted without tensor
    // parallelism, so ops a TP group repeats count once). Hardware FLOPs: what the ranks
    // execute, repeats included; centralized recompute runs transposed forwards twice.
    double dp = static_cast<double>(s.parallel.dp);
    double tp_dp = static_cast<double>(s.parallel.tp * s.parallel.dp);
    bool separate = enc_devices > 0;
    for (std::int32_t j = 0; j < static_cast<std::int32_t>(s.microbatches()); ++j) {
      g.info.model_flops += dp * enc_whole->model_flops(j);
      g.info.hardware_flops +=
          separate ? dp * enc_whole->model_flops(j) : tp_dp * enc->model_flops(j);
    }
    for (const auto& order : c.transpose) {
      for (const auto& st : order) {
        if (st.kind == schedule::Step::kEncoderRecompute) {
          g.info.hardware_flops += tp_dp * enc->forward_flops(st.microbatch);
        }
      }
    }
  }
  g.info.tokens = static_cast<double>(s.training.global_batch * s.training.seq_len);
  g.info.flops_convention =
      "matrix FLOPs (2 per multiply-add), attention scores and context without causal halving, "
      "backward = 2x forward (Narayanan/Korthikanti); hardware FLOPs add recomputation";
  return g;
}

std::vector<std::vector<schedule::Step>> transpose_plan(const Scenario& s) {
  if (!s.encoder.present || s.schedule.encoder != EncoderPlacement::kTranspose) {
    return {};
  }
  parallel::EncoderPrograms enc(s);
  return plan_transpose(s, build_programs(s), enc);
}

}  // namespace tessera::synth
