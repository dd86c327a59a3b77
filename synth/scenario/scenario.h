// SPDX-License-Identifier: Apache-2.0
// A scenario: the model, the training setup, the parallelism, the pipeline schedule and the
// cluster of one experiment, as read (strictly) from scenarios/<name>.yaml.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/error.h"
#include "hwprofiles/hw_profile.h"
#include "topology/cluster.h"

namespace tessera::synth {

enum class Activation : unsigned char { kGelu, kSwiglu };
enum class NormKind : unsigned char { kLayerNorm, kRmsNorm };
// kSelective: Megatron's (the attention core); kSelectiveOp: TorchTitan's op-level selective
// checkpointing (docs/formulas.md §3: the outputs of the attention kernel, reduce-scatters,
// amaxes and every other weight GEMM are kept, the rest of the layer reruns in backward).
enum class Recompute : unsigned char { kNone, kSelective, kFull, kSelectiveOp };
// The scenario's names of the recompute modes, in the enum's order.
inline constexpr std::array<std::string_view, 4> kRecomputeNames = {"none", "selective", "full",
                                                                    "selective_op"};
// Attention: a fused kernel, the platform's best (cuDNN's, FlashAttention-3 on Hopper: what
// Transformer Engine runs), or FlashAttention-2's (PyTorch SDPA's flash backend before cuDNN
// became its default, flash-attn 2.x); or Megatron's unfused path (batched GEMMs and a softmax).
enum class AttentionKernel : unsigned char { kFlash, kFlash2, kUnfused };
[[nodiscard]] constexpr bool fused(AttentionKernel k) {
  return k != AttentionKernel::kUnfused;
}
// How the linear layers are built (Megatron-Core's --transformer-impl): Transformer Engine
// adds biases and reduces their gradients in cuBLASLt GEMM epilogues; Megatron's own
// ("local") layers add the QKV bias in a separate kernel and reduce every bias gradient in one.
enum class TransformerImpl : unsigned char { kTransformerEngine, kLocal };
// FP8 training's scaling recipe (Transformer Engine; docs/fp8.md). kNone: no FP8 GEMMs.
// kDelayed: per-tensor scales from an amax history (TE's and Megatron-Core's default);
// kTensorwise: per-tensor scales from the current amax (an extra pass before each cast);
// kBlockwise: 1x128 activation/gradient tiles and 128x128 weight blocks (DeepSeek-V3);
// kMxfp8: OCP MX, one E8M0 scale per 32 elements along the reduction dimension, so every
// tensor is quantized both row- and column-wise (TE's MXFP8BlockScaling; Blackwell only).
enum class Fp8Recipe : unsigned char { kNone, kDelayed, kTensorwise, kBlockwise, kMxfp8 };
// A pipeline schedule (skeleton), named by its key in the schedule registry
// (synth/schedule/skeletons/: one file per schedule). The set is open: a schedule registered
// there is a kind, without a change here. The constants below only name the built-in ones for
// code and tests (docs/pipeline_schedules.md: gpipe 2.1, 1f1b 2.2, interleaved 2.3, zb-h1 2.4,
// zb-h2 2.5, dualpipev 2.8, dualpipe 2.7).
class ScheduleKind {
 public:
  // A registered name as it is spelled in scenarios; the text must outlive the kind (a
  // literal, or the registry's name: schedule_kind()).
  constexpr explicit ScheduleKind(std::string_view name) : name_(name) {}
  [[nodiscard]] constexpr std::string_view name() const { return name_; }
  constexpr bool operator==(const ScheduleKind& o) const { return name_ == o.name_; }

  static const ScheduleKind kGpipe, k1F1B, kInterleaved, kZbH1, kZbH2, kDualPipeV, kDualPipe;

 private:
  std::string_view name_;
};
inline constexpr ScheduleKind ScheduleKind::kGpipe{"gpipe"};
inline constexpr ScheduleKind ScheduleKind::k1F1B{"1f1b"};
inline constexpr ScheduleKind ScheduleKind::kInterleaved{"interleaved"};
inline constexpr ScheduleKind ScheduleKind::kZbH1{"zb-h1"};
inline constexpr ScheduleKind ScheduleKind::kZbH2{"zb-h2"};
inline constexpr ScheduleKind ScheduleKind::kDualPipeV{"dualpipev"};
inline constexpr ScheduleKind ScheduleKind::kDualPipe{"dualpipe"};
// The mesh axes. TP, CP, DP and PP place every rank; with MoE layers the experts fold the
// same devices of a pipeline stage into expert-tensor, expert and expert-data parallel axes
// (Megatron-Core's MoE parallel folding: ETP x EP x EDP = TP x CP x DP, docs/moe.md).
enum class Axis : unsigned char { kTP, kDP, kPP, kCP, kETP, kEP, kEDP };
constexpr int kNumMeshAxes = 7;

// How context-parallel attention reaches the keys and values of the other ranks' sequence
// chunks (Megatron's --cp-comm-type, docs/context_parallel.md): around a ring of
// point-to-point transfers, by an all-gather, or by all-to-alls that trade sequence for
// heads (DeepSpeed-Ulysses).
enum class CpComm : unsigned char { kP2P, kAllGather, kA2A };

// How a mixture-of-experts router scores the experts before its top-k: a softmax over the
// experts (Mixtral, Qwen3-MoE) or a sigmoid per expert, renormalised over the chosen ones
// (DeepSeek-V3).
enum class RouterScore : unsigned char { kSoftmax, kSigmoid };

// How the tokens of each MoE layer and microbatch spread over the experts (docs/moe.md):
// evenly, each token's experts a uniform draw (Megatron-Core's force-balanced routing draws
// random logits); evenly by round robin, token t taking experts t·k ... t·k+k-1 modulo the
// experts (NeMo AutoModel's fake balanced gate); by a Zipf law of exponent `s` over the
// experts in an order drawn from `seed` for each layer and microbatch; or by the relative
// loads of a file (one line of per-expert weights per MoE layer, cycled).
enum class RoutingKind : unsigned char { kBalanced, kRoundRobin, kZipf, kFile };
struct Routing {
  RoutingKind kind = RoutingKind::kBalanced;
  // Whether the experts' loads differ (a Zipf law or a file); balanced and round-robin
  // routing give every expert the same rows.
  [[nodiscard]] bool skewed() const {
    return kind == RoutingKind::kZipf || kind == RoutingKind::kFile;
  }
  double s = 1.2;
  std::uint64_t seed = 1;
  std::string file;                          // kFile: as written in the scenario
  std::vector<std::vector<double>> weights;  // kFile: per line, one weight per expert
};

// How tokens reach their experts (Megatron-Core's --moe-token-dispatcher-type): all-to-alls
// over EP of each token's routed copies; an all-gather of every token over the EP group, a
// local selection of the rank's experts' rows, and a reduce-scatter back; or the flex
// dispatcher's DeepEP / HybridEP kernels, all-to-alls whose tokens cross to another
// scale-up domain once per domain, not once per expert (docs/moe.md).
enum class MoeDispatcher : unsigned char { kAllToAll, kAllGather, kDeepEP };

// How the framework runs the routed experts' GEMMs (model.moe.grouped_gemm): expert by expert,
// as Transformer Engine's GroupedLinear (Megatron-Core's TEGroupedMLP, the default), or as one
// grouped kernel (torch._grouped_mm, the grouped_gemm library). Their device time is the same
// model; the host's work differs (docs/compute_model.md §4).
enum class GroupedGemm : unsigned char { kPerExpert, kSingle };

// When ZeRO-3 gathers a unit's weights for its backward (PyTorch FSDP1's backward_prefetch;
// docs/sharded_data_parallel.md §2): kPre while the unit before it in backward order computes its
// gradients (BACKWARD_PRE, FSDP2's behaviour), kPost only after that unit's gradients are done
// and its weights freed, beside its reduce-scatter (BACKWARD_POST).
enum class BackwardPrefetch : unsigned char { kPre, kPost };

// `model.moe`: mixture-of-experts MLPs (docs/moe.md). Each MoE layer's MLP is a router, `experts`
// routed experts of which each token uses `top_k`, and `shared_experts` that every token uses;
// the other layers keep the dense MLP of `model.ffn`.
struct MoeConfig {
  std::int64_t experts = 0;  // 0: a dense model
  std::int64_t top_k = 0;
  std::int64_t expert_ffn = 0;  // one routed expert's MLP width
  std::int64_t shared_experts = 0;
  std::int64_t shared_expert_ffn = 0;   // one shared expert's width (default expert_ffn)
  std::int64_t first_dense_layers = 0;  // leading layers with the dense MLP (DeepSeek: 3)
  std::int64_t moe_every = 1;           // after those, an MoE layer every n-th layer
  double capacity_factor = 0.0;         // 0: dropless
  RouterScore router = RouterScore::kSoftmax;
  // Group-limited routing (Megatron-Core's --moe-router-num-groups and --moe-router-group-topk;
  // DeepSeek-V3's node-limited routing, n_group 8 and topk_group 4): the experts fall into
  // `router_groups` equal groups of consecutive experts, and each token takes its k experts
  // from its best `router_group_topk` groups. 0: no groups.
  std::int64_t router_groups = 0;
  std::int64_t router_group_topk = 0;
  Routing routing{};
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;
  // Megatron-Core's --moe-shared-expert-overlap (default off): the shared experts compute
  // while the dispatch all-to-all is in flight, instead of after the combine.
  bool shared_expert_overlap = false;
  GroupedGemm grouped_gemm = GroupedGemm::kPerExpert;

  [[nodiscard]] bool on() const { return experts > 0; }
  // Whether decoder layer `l` (0-based) has the MoE MLP.
  [[nodiscard]] bool is_moe_layer(std::int64_t l) const {
    return on() && l >= first_dense_layers && (l - first_dense_layers) % moe_every == 0;
  }
  // The shared experts' total width (Megatron's moe_shared_expert_intermediate_size).
  [[nodiscard]] std::int64_t shared_ffn() const {
    return shared_experts * (shared_expert_ffn > 0 ? shared_expert_ffn : expert_ffn);
  }
};

// `model.mla`: DeepSeek-V2/V3's multi-head latent attention (docs/mla.md). Queries go through
// a low-rank latent of q_lora_rank (0: a plain query projection), keys and values through one
// of kv_lora_rank plus a shared RoPE key of qk_rope_head_dim; each head attends with
// qk_nope + qk_rope wide queries and keys and v_head_dim wide values.
struct MlaConfig {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;  // 0: no MLA
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  [[nodiscard]] bool on() const { return kv_lora_rank > 0; }
  [[nodiscard]] std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

struct ModelConfig {
  std::string preset;  // "" when spelled out
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // == heads: MHA; fewer: GQA
  std::int64_t ffn = 0;
  std::int64_t vocab = 0;
  std::int64_t head_size = 0;  // `head_dim`: one head's width; 0: hidden / heads
  Activation activation = Activation::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool tied_embeddings = false;
  double dropout = 0.0;  // > 0: dropout masks are kept for backward
  bool bias = true;      // linear layers carry biases (GPT) or not (Llama)
  bool causal = true;    // causal attention mask (decoders); false: bidirectional (encoders)
  MoeConfig moe;
  MlaConfig mla;
  // DeepSeek-V3's multi-token prediction modules after the main head (docs/moe.md); 0: none.
  std::int64_t mtp_depth = 0;
  // Sliding-window attention (docs/sliding_window.md): a windowed layer's queries attend to the
  // `sliding_window` latest keys, themselves included (0: every layer attends to the whole
  // sequence); with `full_attention_every` = n, every n-th layer attends to the whole sequence
  // instead (GPT-OSS 2, Gemma 3 6; 0: none, as Mistral 7B).
  std::int64_t sliding_window = 0;
  std::int64_t full_attention_every = 0;

  [[nodiscard]] std::int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // The keys a query of decoder layer `l` (0-based) attends to at most: the window in a
  // sliding-window layer, 0 (all of them) in the others.
  [[nodiscard]] std::int64_t window_of_layer(std::int64_t l) const {
    const bool full = full_attention_every > 0 && (l + 1) % full_attention_every == 0;
    return full ? 0 : sliding_window;
  }
  [[nodiscard]] double parameters() const;  // total trainable parameters
};

struct TrainingConfig {
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;  // sequences per step
  std::int64_t micro_batch = 0;
  // The activations', weights' and gradients' type; `precision: fp8` keeps bf16 here and sets
  // fp8 (the linear layers' GEMMs then run in FP8, docs/fp8.md).
  base::DType precision = base::DType::kBF16;
  Fp8Recipe fp8 = Fp8Recipe::kNone;
  // The linear layers' weights kept in FP8 and all-gathered in FP8 (Megatron's
  // --fp8-param-gather, Transformer Engine's fp8_model_init): no bf16 copy and no cast from
  // one, the distributed optimizer or FSDP gathering FP8 (docs/fp8.md).
  bool fp8_param_gather = false;
  Recompute recompute = Recompute::kNone;
  bool distributed_optimizer = false;
  AttentionKernel attention = AttentionKernel::kFlash;
  // RMSNorm and SwiGLU as PyTorch eager mode runs them (`elementwise: eager`: a chain of
  // single-op kernels with fp32 intermediates, as TorchTitan without torch.compile; LayerNorm
  // and GeLU are one native kernel either way); the default `fused`: one kernel each
  // (Transformer Engine, torch.compile, Apex).
  bool eager_elementwise = false;
  double grad_bucket_bytes = 0.0;  // DP gradient bucket size; 0: Megatron's default
  // Reduce gradient buckets while backward still runs (Megatron-Core DDP, 2023 on); off: one
  // reduction after the whole backward pass (Megatron-LM's LocalDDP of 2021-22).
  bool overlap_grad_reduce = true;
  // The distributed optimizer's parameter all-gather, bucket by bucket, overlapping the next
  // step's forward (Megatron-Core overlap_param_gather; NeMo's performance recipes); off: after
  // the optimizer step, exposed (docs/overlap.md).
  bool overlap_param_gather = true;
  // Pipeline send/recv that do not block the next compute (Megatron's
  // --overlap-p2p-communication); unset: the schedule's framework default, blocking for
  // 1F1B, GPipe and the zero-bubble schedules, overlapped for interleaved and DualPipe(V).
  std::optional<bool> overlap_p2p_comm;
  // Kernels replayed from captured CUDA graphs; false: PyTorch eager launches, op by op (what
  // Megatron-LM runs by default).
  bool cuda_graphs = false;
  // The gradient-norm clipping threshold (Megatron's --clip-grad, default 1.0): each step
  // computes the global gradient norm; 0 turns clipping and the norm off.
  double clip_grad = 1.0;
  TransformerImpl transformer_impl = TransformerImpl::kTransformerEngine;
  // The LM loss in one fused kernel each way (Megatron-Core's --cross-entropy-loss-fusion,
  // default off); off: Megatron's vocabulary-parallel cross-entropy, pass by pass.
  bool cross_entropy_fusion = false;
  // Weight-gradient GEMMs accumulate into the main-gradient buffer themselves (Megatron's
  // gradient_accumulation_fusion, default on); off: each microbatch's weight gradient is
  // added to the buffer by a separate kernel (main_grad.add_, docs/formulas.md §4.2).
  bool gradient_accumulation_fusion = true;
  // Main gradients (accumulation and data-parallel reduction) in fp32; unset: Megatron's
  // default, fp32 unless precision is fp16 (--accumulate-allreduce-grads-in-fp32).
  std::optional<bool> grad_reduce_in_fp32;
  [[nodiscard]] bool fp32_grads() const {
    return grad_reduce_in_fp32.value_or(precision != base::DType::kFP16);
  }
  [[nodiscard]] base::DType grad_dtype() const {
    return fp32_grads() ? base::DType::kFP32 : precision;
  }
  [[nodiscard]] double grad_bytes() const { return fp32_grads() ? 4.0 : 2.0; }
  // The optimizer's fp32 state per parameter: master weights and Adam's two moments, plus an
  // fp32 copy of fp16 main gradients (Megatron-LM docs/user-guide/features/dist_optimizer.md:
  // 20 bytes per parameter for fp16 parameters and gradients, 18 for bf16 with fp32 ones).
  [[nodiscard]] double optimizer_state_bytes() const { return fp32_grads() ? 12.0 : 16.0; }
  // Static bytes per parameter, 2 (weight) + main gradient + the optimizer's state, under ZeRO
  // stage `zero` over `shards` ranks: 1 (the distributed optimizer) shards the optimizer's
  // state, 2 also the main gradients, 3 also the weights (Rajbhandari et al. 2020, Fig. 1;
  // docs/sharded_data_parallel.md).
  [[nodiscard]] double static_bytes_per_param(std::int64_t zero, double shards) const {
    auto part = [&](std::int64_t stage) { return zero >= stage ? shards : 1.0; };
    return 2.0 / part(3) + grad_bytes() / part(2) + optimizer_state_bytes() / part(1);
  }
  // ZeRO-3: gather each unit's weights again before its backward (PyTorch FSDP2's
  // reshard_after_forward, Megatron-FSDP's default); unset: true.
  std::optional<bool> reshard_after_forward;
  // ZeRO-3: when a unit's backward gather is issued; unset: pre.
  std::optional<BackwardPrefetch> backward_prefetch;
};

// One virtual stage of a pipe as parallelism.pipeline_layout gives it (Megatron-Core's
// --pipeline-model-parallel-layout): how many embeddings (E), decoder layers (t), multi-token
// prediction modules (m) and losses (L) it holds, in that order.
struct PipelineStage {
  std::int64_t embeddings = 0;
  std::int64_t layers = 0;
  std::int64_t mtp = 0;
  std::int64_t losses = 0;
};

struct ParallelConfig {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  bool sp = false;  // sequence parallel (needs tp > 1)
  // Expert parallelism (model.moe): each rank holds experts/ep experts; `etp` shards each
  // expert's MLP. The expert-data-parallel size is what the stage's devices leave.
  std::int64_t ep = 1;
  std::int64_t etp = 1;
  // Context parallelism: each rank of a CP group holds 2 of the sequence's 2 x cp chunks
  // (docs/context_parallel.md); unset cp_comm: Megatron's default, p2p.
  std::int64_t cp = 1;
  std::optional<CpComm> cp_comm;
  [[nodiscard]] CpComm cp_comm_type() const { return cp_comm.value_or(CpComm::kP2P); }
  // The devices of one pipeline stage.
  [[nodiscard]] std::int64_t stage_ranks() const { return tp * cp * dp; }
  [[nodiscard]] std::int64_t edp() const { return stage_ranks() / (ep * etp); }
  // Sharded data parallelism (docs/sharded_data_parallel.md): the ZeRO stage (unset: 1 with
  // training.distributed_optimizer, which every stage from 1 on implies, else 0), and HSDP's
  // shard-group size within DP (0: all of dp; the rest of dp replicates).
  std::optional<std::int64_t> zero;
  std::int64_t dp_shard = 0;
  [[nodiscard]] std::int64_t shard_dp() const { return dp_shard > 0 ? dp_shard : dp; }
  // Transformer Engine's userbuffers: the sequence-parallel all-gathers and reduce-scatters
  // pipelined in chunks with their GEMMs (Megatron --tp-comm-overlap, which needs sp);
  // unset: on wherever sp is (Megatron-Core's performance recipes).
  std::optional<bool> tp_comm_overlap;
  [[nodiscard]] bool overlaps_tp_comm() const {
    return tp_comm_overlap.value_or(true) && sp && tp > 1;
  }
  // The backward's tensor-parallel collectives overlap the weight-gradient GEMMs (Megatron's
  // asynchronous TP all-reduce, default since 2022); false: each starts after the GEMM and
  // blocks the compute stream (Megatron-LM of 2021, --no-async-tensor-model-parallel-allreduce).
  bool async_tp_allreduce = true;
  // One microbatch's expert-parallel all-to-alls overlap another's compute in a paired
  // forward/backward (Megatron-Core's --overlap-moe-expert-parallel-comm, DualPipe); unset:
  // on for DualPipe(V), which pairs by construction, off otherwise (Megatron-Core's default).
  std::optional<bool> ep_comm_overlap;
  // Innermost first; Megatron's default places CP right outside TP.
  std::vector<Axis> order = {Axis::kTP, Axis::kCP, Axis::kDP, Axis::kPP};
  // An uneven split of the LLM's layers over the stages of a pipe (synth/parallel/
  // layer_split.h): a count per stage in pipe order (with virtual stages: per virtual stage),
  // or Megatron-Core's first/last-stage counts (0: not given); neither: an even split.
  std::vector<std::int64_t> stage_layers;
  std::int64_t first_stage_layers = 0;
  std::int64_t last_stage_layers = 0;
  // Megatron-Core's pipeline layout (empty: none); its decoder layer counts are also in
  // stage_layers, so the uneven split follows it. A stage may hold no decoder layer.
  std::vector<PipelineStage> layout;
  // The stage of a pipe holding the multi-token prediction module when the layout puts it
  // apart from the loss (DeepSeek-V3's "m|L"); -1: with the head, on the last stage.
  [[nodiscard]] std::int64_t mtp_stage_apart() const {
    for (std::size_t i = 0; i + 1 < layout.size(); ++i) {
      if (layout[i].mtp > 0) {
        return static_cast<std::int64_t>(i);
      }
    }
    return -1;
  }
};

// A vision encoder in front of the LLM (a multimodal model): patch embedding, transformer
// layers with bidirectional attention, and a projector that merges `merge` patches into one
// LLM token of the LLM's hidden size (Qwen2-VL's layout).
struct EncoderConfig {
  bool present = false;
  std::string preset;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t ffn = 0;
  Activation activation = Activation::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool bias = true;
  std::int64_t patch_pixels = 1176;  // values per patch: 3 channels x 2 frames x 14 x 14
  std::int64_t merge = 4;            // patches per LLM token (a 2x2 spatial merge)
  bool trainable = false;            // false: frozen (no backward, no gradients, no optimizer)
};

// An inclusive integer range; lo == hi is a fixed value.
struct IntRange {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};

// The modality mix of the training data: how many images each sample carries and how many
// encoder patches each image has, as ranges sampled uniformly with `seed`, or an explicit
// per-sample list (images, patches per image) read from a file and used in order, cycled.
struct DataConfig {
  std::uint64_t seed = 1;
  IntRange images_per_sample{1, 1};
  IntRange tokens_per_image{1024, 1024};                       // encoder patches per image
  std::vector<std::pair<std::int64_t, std::int64_t>> samples;  // from samples_file
  std::string samples_file;
};

// Where the encoder region runs (the schedule algebra's region program, see
// synth/schedule/README.md). kInline: inside the first pipeline stage (Megatron's default);
// kStages: as its own first pipeline stage(s); kTranspose: replicated on every pipeline rank,
// its forwards in the warmup bubbles (Mpipe); kSeparate: on devices of its own, after the
// LLM's, feeding the first stage of every LLM replica (DistTrain-style disaggregation).
enum class EncoderPlacement : unsigned char { kInline, kStages, kTranspose, kSeparate };
enum class OwnerMode : unsigned char { kRoundRobin, kMin, kGreedy };
enum class EncoderBackward : unsigned char { kRecompute, kOwner };

// The pipeline schedule: a skeleton and its parameters.
struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::k1F1B;
  std::int64_t chunks = 1;  // interleaved: model chunks (virtual stages) per rank, v
  std::int64_t group = 0;   // interleaved: microbatches per group per chunk; 0: pp (Megatron)
  EncoderPlacement encoder = EncoderPlacement::kInline;
  std::int64_t encoder_stages = 1;            // kStages: pipeline ranks that hold the encoder
  std::int64_t encoder_devices = 1;           // kSeparate: devices of the encoder's own
  OwnerMode owners = OwnerMode::kRoundRobin;  // kTranspose
  EncoderBackward encoder_backward = EncoderBackward::kRecompute;  // kTranspose, trained
  // Combined 1F1B (1f1b, interleaved): one more warmup forward, then each steady-state
  // forward paired with a backward whose all-to-alls it overlaps. A scenario's step sets it
  // from parallelism.ep_comm_overlap (Scenario::step_schedule).
  bool combined_1f1b = false;
};

struct ClusterConfig {
  std::string hardware;  // profile name or path
  base::SourceLoc hardware_at;
  // The profile as loaded (with any --set applied); empty in scenarios built in code, which
  // name `hardware` only.
  std::optional<hw::Profile> profile;
  topology::TopologySpec topology;
  std::int64_t devices = 0;
  base::SourceLoc devices_at;
  // A board power cap below the part's TDP (cluster.power_limit, watts; 0: none): the profile's
  // math clocks follow it (hw::PowerModel).
  double power_limit = 0.0;
};

struct Scenario {
  std::string name;
  std::string file;
  ModelConfig model;
  TrainingConfig training;
  ParallelConfig parallel;
  ScheduleConfig schedule;
  ClusterConfig cluster;
  EncoderConfig encoder;
  DataConfig data;

  // The tokens of a sequence one rank holds: its two chunks of 2 x cp (context parallelism).
  [[nodiscard]] std::int64_t local_seq() const { return training.seq_len / parallel.cp; }
  // The ZeRO stage: parallelism.zero, or 1 for training.distributed_optimizer.
  [[nodiscard]] std::int64_t zero_stage() const {
    return parallel.zero.value_or(training.distributed_optimizer ? 1 : 0);
  }
  // ZeRO-3 gathers a unit's weights again for its backward.
  [[nodiscard]] bool reshards_after_forward() const {
    return training.reshard_after_forward.value_or(true);
  }
  [[nodiscard]] std::int64_t microbatches() const {  // per data-parallel replica
    return training.global_batch / (parallel.dp * training.micro_batch);
  }
  // Devices the encoder has to itself (kSeparate), after the LLM's tp x pp x dp.
  [[nodiscard]] std::int64_t encoder_devices() const {
    return encoder.present && schedule.encoder == EncoderPlacement::kSeparate
               ? schedule.encoder_devices
               : 0;
  }
  // Whether paired forwards and backwards overlap their expert-parallel all-to-alls
  // (parallelism.ep_comm_overlap; by default on for DualPipe(V) with an all-to-all
  // dispatcher, alltoall or deepep, and without shared-expert overlap, which exclude it).
  [[nodiscard]] bool overlaps_ep_comm() const {
    const bool dual =
        schedule.kind == ScheduleKind::kDualPipe || schedule.kind == ScheduleKind::kDualPipeV;
    const bool by_default = dual && model.moe.dispatcher != MoeDispatcher::kAllGather &&
                            !model.moe.shared_expert_overlap;
    return parallel.ep_comm_overlap.value_or(by_default) && model.moe.on() && parallel.ep > 1;
  }
  // The schedule as the step runs it: combined 1F1B where the overlap asks for it (1f1b and
  // interleaved; DualPipe(V) pairs by construction).
  [[nodiscard]] ScheduleConfig step_schedule() const {
    ScheduleConfig cfg = schedule;
    cfg.combined_1f1b = overlaps_ep_comm() && (schedule.kind == ScheduleKind::k1F1B ||
                                               schedule.kind == ScheduleKind::kInterleaved);
    return cfg;
  }
};

// Reads and validates a scenario; `overrides` are "key.path=value" strings (--set).
// Throws base::InputError naming file:line:col for every problem.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for a scenario document held in memory; `name` stands for its file in errors and
// for the folder relative paths in it are looked up beside.
Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides = {});

// The scenario's hardware profile: the loaded one, or the one `cluster.hardware` names, with
// the cluster's power limit.
hw::Profile hardware_profile(const Scenario& s);

// What a scenario's `schedule:` kind and `encoder:` placement may be, in the order `list`
// prints them.
std::span<const std::string_view> schedule_names();
std::span<const std::string_view> encoder_placement_names();
std::string_view schedule_name(ScheduleKind k);
std::optional<ScheduleKind> schedule_kind(std::string_view name);  // nullopt: not a skeleton
std::string schedule_label(const ScheduleConfig& cfg);             // "1f1b", "interleaved (v=2)"
std::string_view recompute_name(Recompute r);
std::string_view fp8_recipe_name(Fp8Recipe r);  // "none", "delayed", "tensorwise", "blockwise"
std::string_view owner_mode_name(OwnerMode m);  // "round_robin", "min", "greedy"
// Every mesh order a scenario may give, innermost first: the permutations of tp, dp and pp
// (context parallelism then sits right outside tp, as in Megatron's default tp-cp-ep-dp-pp),
// and of tp, cp, dp and pp.
std::span<const std::string_view> mesh_orders();
// One of those as axes (cp right outside tp where the text leaves it out).
std::vector<Axis> mesh_order(std::string_view text);
// An order's spelling with cp given, "tp-cp-dp-pp".
std::string mesh_order_name(const std::vector<Axis>& order);

}  // namespace tessera::synth
