// SPDX-License-Identifier: Apache-2.0
#include "synth/build/synthesize.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>

#include "base/error.h"
#include "synth/build/expert_loads.h"
#include "synth/build/stage_builder.h"
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

namespace {

using detail::Context;
using detail::make_groups;
using detail::StageBuilder;

std::vector<std::uint32_t> intern_block(ExecGraph& g, const BlockProgram& p,
                                        const std::string& prefix) {
  std::vector<std::uint32_t> ids;
  for (const auto& op : p.ops) {
    ids.push_back(g.intern(prefix + op.name));
  }
  return ids;
}

// QK^T and PV of every layer: 4 b s^2 (heads x head_dim) forward, twice that backward, for
// flash and unfused kernels alike (the encoder's attention is bidirectional). A sliding-window
// layer counts s w where it computes s w - w^2 / 2 (docs/sliding_window.md): the same formula
// with w in place of s.
double causal_attention_flops(const Scenario& s) {
  if (!s.model.causal) {
    return 0.0;
  }
  auto seq = static_cast<double>(s.training.seq_len);
  double squares = 0.0;
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    const auto w = static_cast<double>(s.model.window_of_layer(l));
    const double keys = w > 0.0 && w < seq ? w : seq;
    squares += keys * keys;
  }
  return 12.0 * static_cast<double>(s.training.global_batch) * squares *
         static_cast<double>(s.model.heads * s.model.head_dim());
}

// Selective recompute drops the s^2 attention intermediates of the unfused kernel; flash
// attention never keeps them, so the option changes nothing (users expect savings).
void add_notes(const Scenario& s, graph::StepInfo& info) {
  if (s.training.recompute == Recompute::kSelective &&
      s.training.attention == AttentionKernel::kFlash) {
    info.notes.emplace_back(
        "selective recompute changes nothing with flash attention: flash attention keeps no "
        "s^2 activations to drop, so memory and time are those of recompute: none");
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
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    const BlockProgram& layer = progs.of_layer(l);
    for (std::int32_t i = 0; i < layer.n_fwd; ++i) {
      fwd += layer.ops[static_cast<std::size_t>(i)].model_flops;
    }
  }
  costs.stage_forward = fwd / p;
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
    body.push_back(schedule::stage_order(s.step_schedule(), p, r, m));
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
  c.enc_misc_names = {.merge_features = g.intern("encoder.merge_features"),
                      .join_images = g.intern("encoder.join_images"),
                      .send_features = g.intern("encoder.send_features"),
                      .recv_features = g.intern("encoder.recv_features"),
                      .send_input = g.intern("encoder.send_input"),
                      .recv_input = g.intern("encoder.recv_input"),
                      .feature_grad_p2p = g.intern("encoder.feature_grad_p2p"),
                      .param_broadcast = g.intern("encoder.param_broadcast"),
                      .grad_allreduce = g.intern("encoder.grad_allreduce"),
                      .feature_grad = g.intern("encoder.feature_grad"),
                      .release_input = g.intern("encoder.release_input"),
                      .release_features = g.intern("encoder.release_features")};
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
  std::size_t most_ops = 0;
  for (const parallel::BlockProgram* layer : progs.layer_programs()) {
    most_ops = std::max(most_ops, layer->ops.size());
  }
  const auto layer_ops = static_cast<double>(most_ops);
  double per_rank =
      static_cast<double>(s.microbatches()) *
      (static_cast<double>(s.model.layers) / static_cast<double>(s.parallel.pp) * layer_ops +
       static_cast<double>(progs.embed.ops.size() + progs.head.ops.size()));
  double graphs = share ? static_cast<double>(s.parallel.pp)
                        : static_cast<double>(s.parallel.stage_ranks() * s.parallel.pp);
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
  Context c{.s = s, .progs = progs, .mesh = mesh, .ranks = mesh.size() + enc_devices};
  c.names.push_back(intern_block(g, progs.embed, ""));
  c.names.push_back(intern_block(g, progs.head, ""));
  for (std::int64_t l = 0; l < s.model.layers; ++l) {
    c.names.push_back(intern_block(g, progs.of_layer(l), fmt::format("L{}.", l)));
  }
  if (progs.mtp) {  // name table 2 + layers
    c.names.push_back(intern_block(g, *progs.mtp, ""));
  }
  c.p2p_names = {.send_activation = g.intern("pp.send_activation"),
                 .recv_activation = g.intern("pp.recv_activation"),
                 .send_grad = g.intern("pp.send_grad"),
                 .recv_grad = g.intern("pp.recv_grad"),
                 .wait_sends = g.intern("pp.wait_sends")};
  c.optimizer_names = detail::intern_optimizer_names(g);
  c.fp8 = models::fp8_plan(s);
  if (c.fp8.on()) {
    const char* cast = c.fp8.param_gather          ? "fp8.transpose_weight"
                       : c.fp8.weight_copies() > 1 ? "fp8.cast_transpose_weight"
                                                   : "fp8.cast_weight";
    for (std::int64_t l = 0; l < s.model.layers; ++l) {
      c.fp8_names.cast_weight.push_back(g.intern(fmt::format("L{}.{}", l, cast)));
      c.fp8_names.amax_weight.push_back(g.intern(fmt::format("L{}.fp8.amax_weight", l)));
    }
    c.fp8_names.amax_update = g.intern("fp8.amax_update");
  }
  c.reduction_names = {.grad_bucket = g.intern("dp.grad_bucket"),
                       .param_gather = g.intern("dp.param_gather"),
                       .param_wait = g.intern("dp.param_wait"),
                       .embedding_grad = g.intern("pp.embedding_grad_allreduce"),
                       .mirror_grad = g.intern("pp.mirror_grad_allreduce")};
  if (s.zero_stage() >= 2 || s.parallel.shard_dp() < s.parallel.dp) {  // not in other graphs
    c.reduction_names.replica_grad = g.intern("dp.replica_grad_allreduce");
    c.reduction_names.unit_gather = g.intern("zero.param_gather");
    c.reduction_names.unit_wait = g.intern("zero.param_wait");
    c.reduction_names.unit_release = g.intern("zero.param_release");
    c.reduction_names.unit_reduce = g.intern("zero.grad_reduce_scatter");
  }
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
  double ranks_per_stage = static_cast<double>(s.parallel.stage_ranks());
  auto total = [&](double BlockProgram::*field) {
    const double mtp = progs.mtp ? (*progs.mtp).*field : 0.0;
    return m * ranks_per_stage *
           (progs.embed.*field + progs.head.*field + mtp + progs.sum_layers(field));
  };
  g.info.model_flops = total(&BlockProgram::model_flops);
  g.info.hardware_flops = total(&BlockProgram::hardware_flops);
  g.info.causal_attention_flops = causal_attention_flops(s);
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
  add_notes(s, g.info);
  g.info.config = step_config(s);
  g.info.cuda_graphs = s.training.cuda_graphs;
  g.info.attention_fa2 = s.training.attention == AttentionKernel::kFlash2;
  g.info.fp8_block_scaled = s.training.fp8 == Fp8Recipe::kMxfp8;
  if (s.model.moe.on() && s.model.moe.routing.skewed()) {
    g.expert_loads = detail::expert_loads(s, mesh, g);
  }
  return g;
}

graph::StepConfig step_config(const Scenario& s) {
  graph::StepConfig c;
  c.tp = s.parallel.tp;
  c.pp = s.parallel.pp;
  c.dp = s.parallel.dp;
  c.cp = s.parallel.cp;
  c.sp = s.parallel.sp;
  c.micro_batch = s.training.micro_batch;
  c.global_batch = s.training.global_batch;
  c.seq_len = s.training.seq_len;
  c.recompute = std::string(recompute_name(s.training.recompute));
  c.attention = s.training.attention == AttentionKernel::kFlash ? "flash" : "unfused";
  return c;
}

std::vector<std::vector<schedule::Step>> transpose_plan(const Scenario& s) {
  if (!s.encoder.present || s.schedule.encoder != EncoderPlacement::kTranspose) {
    return {};
  }
  parallel::EncoderPrograms enc(s);
  return plan_transpose(s, build_programs(s), enc);
}

}  // namespace tessera::synth
