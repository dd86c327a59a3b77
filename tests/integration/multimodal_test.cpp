// SPDX-License-Identifier: Apache-2.0
// The multimodal feature end to end on small scenarios: a 2-layer, 128-wide vision encoder
// (merge 4) in front of a 4-layer, 256-wide LLM, placed inline, as its own pipeline stages or
// transposed (Mpipe), frozen or trained. Checks the encoder's model FLOPs against a closed
// form derived from the model definition, that every microbatch's encoder forward runs once
// per replica, the encoder's collectives, memory balance, that transposing keeps the LLM
// body, rank-class sharing, the modality mix, the region form of the schedule block and the
// spill prediction.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "synth/models/modality_mix.h"
#include "synth/parallel/encoder_programs.h"
#include "synth/schedule/transpose.h"
#include "tests/integration/integration_fixtures.h"
#include "tests/temp_dir.h"

namespace tessera::integration {
namespace {

using synth::EncoderBackward;
using synth::EncoderPlacement;
using synth::OwnerMode;
using synth::schedule::Step;

// ---------------------------------------------------------------------------------------------
// Scenarios

// A 4-layer, 256-wide LLM (seq 128) with a 2-layer, 128-wide, 4-head GeLU encoder (ffn 512,
// 48 pixels per patch, merge 4) and a mix of 0..3 images of 5..40 patches per sample; one
// sample per microbatch, `microbatches` per replica.
synth::Scenario mm_scenario(std::int64_t tp, std::int64_t pp, std::int64_t dp, bool sp = false,
                            std::int64_t microbatches = 6) {
  synth::Scenario s = tiny_like(tp, pp, dp);
  s.name = "mm-tiny";
  s.model.layers = 4;
  s.training.seq_len = 128;
  s.training.micro_batch = 1;
  s.training.global_batch = microbatches * dp;
  s.parallel.sp = sp;
  s.encoder.present = true;
  s.encoder.layers = 2;
  s.encoder.hidden = 128;
  s.encoder.heads = 4;
  s.encoder.ffn = 512;
  s.encoder.activation = synth::Activation::kGelu;
  s.encoder.norm = synth::NormKind::kLayerNorm;
  s.encoder.bias = true;
  s.encoder.patch_pixels = 48;
  s.encoder.merge = 4;
  s.encoder.trainable = false;
  s.data.seed = 7;
  s.data.images_per_sample = {0, 3};
  s.data.tokens_per_image = {5, 40};
  return s;
}

synth::Scenario without_encoder(synth::Scenario s) {
  s.encoder = synth::EncoderConfig{};
  s.data = synth::DataConfig{};
  s.schedule.encoder = EncoderPlacement::kInline;
  return s;
}

// One way of running the encoder: placement, owners, training.
struct Variant {
  std::string name;
  EncoderPlacement placement = EncoderPlacement::kInline;
  std::int64_t encoder_stages = 1;
  OwnerMode owners = OwnerMode::kRoundRobin;
  bool trainable = false;
  EncoderBackward backward = EncoderBackward::kRecompute;
};

void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.name;
}

synth::Scenario apply(synth::Scenario s, const Variant& v) {
  s.schedule.kind = synth::ScheduleKind::k1F1B;
  s.schedule.encoder = v.placement;
  s.schedule.encoder_stages = v.encoder_stages;
  s.schedule.owners = v.owners;
  s.schedule.encoder_backward = v.backward;
  s.encoder.trainable = v.trainable;
  return s;
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (bool trained : {false, true}) {
    std::string t = trained ? "trained" : "frozen";
    out.push_back({"inline_" + t, EncoderPlacement::kInline, 1, {}, trained, {}});
    out.push_back({"stages1_" + t, EncoderPlacement::kStages, 1, {}, trained, {}});
    out.push_back({"stages2_" + t, EncoderPlacement::kStages, 2, {}, trained, {}});
    for (auto [mode, mname] :
         {std::pair{OwnerMode::kRoundRobin, "rr"}, std::pair{OwnerMode::kMin, "min"},
          std::pair{OwnerMode::kGreedy, "greedy"}}) {
      if (!trained) {
        out.push_back({fmt::format("transpose_{}_frozen", mname), EncoderPlacement::kTranspose, 1,
                       mode, false, EncoderBackward::kRecompute});
        continue;
      }
      out.push_back({fmt::format("transpose_{}_recompute", mname), EncoderPlacement::kTranspose, 1,
                     mode, true, EncoderBackward::kRecompute});
      out.push_back({fmt::format("transpose_{}_owner", mname), EncoderPlacement::kTranspose, 1,
                     mode, true, EncoderBackward::kOwner});
    }
  }
  return out;
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& i) {
  return i.param.name;
}

// TP2 x PP4 x DP1 on 8 devices, 6 microbatches (more than p: round-robin wraps, min inlines
// the overflow on rank 0).
synth::Scenario variant_scenario(const Variant& v) {
  return apply(mm_scenario(2, 4, 1), v);
}

bool is_encoder_name(const graph::ExecGraph& g, const graph::Node& n) {
  return std::string_view(g.names[n.name]).starts_with("encoder.");
}

// ---------------------------------------------------------------------------------------------
// 1. FLOP oracle

// Forward FLOPs of the encoder over one image of `t` patches, from the model definition:
// patch embedding (t x P) x (P x h); per layer QKV (h -> 3h), output projection (h -> h), fc1
// (h -> f, 2f with SwiGLU's gate), fc2 (f -> h), attention scores and context 2 t^2 h each
// (bidirectional, no halving); projector over t/merge merged tokens of width k = merge h: fc1
// k -> k, fc2 k -> o (the LLM's width). 2 FLOPs per multiply-add.
double encoder_forward_flops_per_image(const synth::Scenario& s, double t) {
  const auto& e = s.encoder;
  const auto h = static_cast<double>(e.hidden);
  const auto f = static_cast<double>(e.ffn);
  const auto P = static_cast<double>(e.patch_pixels);
  const auto L = static_cast<double>(e.layers);
  const auto merge = static_cast<double>(e.merge);
  const double k = merge * h;
  const auto o = static_cast<double>(s.model.hidden);
  const double fc1_out = e.activation == synth::Activation::kSwiglu ? 2.0 * f : f;
  const double patch = 2.0 * t * P * h;
  const double layer = 2.0 * t * (3.0 * h * h + h * h + h * fc1_out + f * h) + 4.0 * t * t * h;
  const double projector = 2.0 * (t / merge) * (k * k + k * o);
  return patch + L * layer + projector;
}

double encoder_forward_flops_per_step(const synth::Scenario& s) {
  double sum = 0.0;
  for (const auto& mb : synth::models::sample_images(s)) {
    for (const auto& g : mb.groups) {
      sum += static_cast<double>(g.images) *
             encoder_forward_flops_per_image(s, static_cast<double>(g.patches));
    }
  }
  return static_cast<double>(s.parallel.dp) * sum;
}

struct FlopCase {
  std::string name;
  synth::Scenario scenario;
};
void PrintTo(const FlopCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<FlopCase> flop_cases() {
  std::vector<FlopCase> out;
  out.push_back({"tp1_pp2_dp2", mm_scenario(1, 2, 2)});
  out.push_back({"tp2_pp2_dp2_sp", mm_scenario(2, 2, 2, true)});
  out.push_back({"tp2_pp2_dp1", mm_scenario(2, 2, 1)});
  synth::Scenario swiglu = mm_scenario(1, 4, 1);
  swiglu.encoder.activation = synth::Activation::kSwiglu;
  swiglu.encoder.norm = synth::NormKind::kRmsNorm;
  swiglu.encoder.bias = false;
  out.push_back({"tp1_pp4_swiglu", swiglu});
  synth::Scenario unfused = mm_scenario(1, 2, 1);
  unfused.training.attention = synth::AttentionKernel::kUnfused;
  out.push_back({"tp1_pp2_unfused_attention", unfused});
  return out;
}

class EncoderFlops : public ::testing::TestWithParam<FlopCase> {};

// The patch embedding's forward FLOPs of a step: a trained encoder's backward computes its
// weight gradient (2 t P h) but no gradient of the pixels, which are data.
double patch_flops_per_step(const synth::Scenario& s) {
  double sum = 0.0;
  for (const auto& mb : synth::models::sample_images(s)) {
    for (const auto& g : mb.groups) {
      sum += static_cast<double>(g.images) * 2.0 * static_cast<double>(g.patches) *
             static_cast<double>(s.encoder.patch_pixels) * static_cast<double>(s.encoder.hidden);
    }
  }
  return static_cast<double>(s.parallel.dp) * sum;
}

void expect_rel_eq(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::abs(want))
      << what << ": got " << fmt::format("{:.17g}", got) << ", closed form "
      << fmt::format("{:.17g}", want) << " (ratio " << got / want << ")";
}

TEST_P(EncoderFlops, FrozenEncoderAddsExactlyItsForwardFlops) {
  const synth::Scenario s = GetParam().scenario;
  const double want = encoder_forward_flops_per_step(s);
  ASSERT_GT(want, 0.0);
  const double base = synth::synthesize(without_encoder(s)).info.model_flops;
  for (const Variant& v : {Variant{"inline", EncoderPlacement::kInline},
                           Variant{"transpose", EncoderPlacement::kTranspose}}) {
    const double with = synth::synthesize(apply(s, v)).info.model_flops;
    expect_rel_eq(with - base, want, v.name);
  }
}

TEST_P(EncoderFlops, TrainedEncoderAddsThreeTimesItsForwardFlops) {
  const synth::Scenario s = GetParam().scenario;
  const double want = 3.0 * encoder_forward_flops_per_step(s) - patch_flops_per_step(s);
  const double base = synth::synthesize(without_encoder(s)).info.model_flops;
  for (const Variant& v : {Variant{"inline", EncoderPlacement::kInline, 1, {}, true, {}},
                           Variant{"transpose_recompute",
                                   EncoderPlacement::kTranspose,
                                   1,
                                   {},
                                   true,
                                   EncoderBackward::kRecompute},
                           Variant{"transpose_owner",
                                   EncoderPlacement::kTranspose,
                                   1,
                                   {},
                                   true,
                                   EncoderBackward::kOwner}}) {
    const double with = synth::synthesize(apply(s, v)).info.model_flops;
    expect_rel_eq(with - base, want, v.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Multimodal, EncoderFlops, ::testing::ValuesIn(flop_cases()),
                         [](const ::testing::TestParamInfo<FlopCase>& i) { return i.param.name; });

// ---------------------------------------------------------------------------------------------
// 2, 3. Encoder forwards and encoder collectives per variant

class EncoderVariant : public ::testing::TestWithParam<Variant> {};

// Each microbatch's encoder forward (its patch embedding, one per image group) runs exactly
// once per replica: summed over the per-stage class graphs, once per group; centralized
// recompute runs it once more on rank 0 for every microbatch the plan recomputes.
TEST_P(EncoderVariant, EachMicrobatchEncoderForwardRunsOncePerReplica) {
  const synth::Scenario s = variant_scenario(GetParam());
  const graph::ExecGraph g = synth::synthesize(s);
  ASSERT_EQ(g.classes.size(), static_cast<std::size_t>(s.parallel.pp));
  const auto mix = synth::models::sample_images(s);
  const auto plan = synth::transpose_plan(s);
  ASSERT_EQ(plan.empty(), s.schedule.encoder != EncoderPlacement::kTranspose);
  std::map<std::int32_t, int> recomputes;
  for (const auto& order : plan) {
    for (const Step& st : order) {
      recomputes[st.microbatch] += st.kind == Step::kEncoderRecompute ? 1 : 0;
    }
  }
  std::map<std::int32_t, int> forwards;  // per microbatch
  std::map<std::int32_t, std::set<std::int32_t>> where;
  for (std::size_t c = 0; c < g.classes.size(); ++c) {
    for (const graph::Node& n : g.classes[c].nodes) {
      if (g.names[n.name] == "encoder.patch_embed" && n.phase == graph::Phase::kForward) {
        ++forwards[n.microbatch];
        where[n.microbatch].insert(static_cast<std::int32_t>(c));
      }
    }
  }
  int with_images = 0;
  for (std::size_t j = 0; j < mix.size(); ++j) {
    const auto mb = static_cast<std::int32_t>(j);
    const auto groups = static_cast<int>(mix[j].groups.size());
    with_images += groups > 0 ? 1 : 0;
    EXPECT_EQ(forwards[mb], groups * (1 + recomputes[mb]))
        << "microbatch " << j << " (" << mix[j].images() << " images in " << groups << " groups)";
    if (s.schedule.encoder != EncoderPlacement::kTranspose && groups > 0) {
      EXPECT_EQ(where[mb], std::set<std::int32_t>{0}) << "microbatch " << j;
    }
  }
  EXPECT_GT(with_images, 2) << "the mix should put images in most microbatches";
  if (s.schedule.encoder == EncoderPlacement::kTranspose && s.encoder.trainable &&
      s.schedule.encoder_backward == EncoderBackward::kRecompute) {
    // Every microbatch that ran detached in a prefix is recomputed on rank 0.
    int prefix = 0;
    for (const auto& order : plan) {
      for (const Step& st : order) {
        if (st.kind == Step::kBody) {
          break;
        }
        prefix += st.kind == Step::kEncoderForward ? 1 : 0;
      }
    }
    int total = 0;
    for (const auto& [mb, n] : recomputes) {
      total += n;
    }
    EXPECT_EQ(total, prefix);
  }
}

// Frozen: no encoder backward, no broadcast, no all-reduce. Trained: owner-backward has one
// gradient all-reduce per rank and no broadcast; centralized recompute one broadcast per rank
// and no all-reduce. Both with and without rank-class sharing.
TEST_P(EncoderVariant, EncoderBackwardAndCollectivesMatchTheTraining) {
  const synth::Scenario s = variant_scenario(GetParam());
  const bool transposed = s.schedule.encoder == EncoderPlacement::kTranspose;
  const bool owner =
      transposed && s.encoder.trainable && s.schedule.encoder_backward == EncoderBackward::kOwner;
  const bool central = transposed && s.encoder.trainable && !owner;
  for (bool share : {true, false}) {
    SCOPED_TRACE(share ? "shared" : "per rank");
    const graph::ExecGraph g = synth::synthesize(s, {.share_rank_classes = share});
    int backward_total = 0;
    for (std::size_t c = 0; c < g.classes.size(); ++c) {
      int backward = 0;
      int broadcast = 0;
      int allreduce = 0;
      for (const graph::Node& n : g.classes[c].nodes) {
        if (!is_encoder_name(g, n)) {
          continue;
        }
        backward += n.phase == graph::Phase::kBackward ? 1 : 0;
        broadcast += g.names[n.name] == "encoder.param_broadcast" ? 1 : 0;
        allreduce += g.names[n.name] == "encoder.grad_allreduce" ? 1 : 0;
      }
      backward_total += backward;
      if (!s.encoder.trainable) {
        EXPECT_EQ(backward, 0) << "class " << c;
      }
      EXPECT_EQ(broadcast, central ? 1 : 0) << "class " << c;
      EXPECT_EQ(allreduce, owner ? 1 : 0) << "class " << c;
    }
    if (s.encoder.trainable) {
      EXPECT_GT(backward_total, 0);
    }
  }
}

// 4. Sum of mem_alloc == sum of mem_free on every rank graph, and replaying the issue order
// never frees more than it allocated.
TEST_P(EncoderVariant, EveryAllocationIsFreedByTheEndOfTheStep) {
  const synth::Scenario s = variant_scenario(GetParam());
  for (bool share : {false, true}) {
    SCOPED_TRACE(share ? "shared" : "per rank");
    const graph::ExecGraph g = synth::synthesize(s, {.share_rank_classes = share});
    for (std::size_t c = 0; c < g.classes.size(); ++c) {
      std::int64_t alloc = 0;
      std::int64_t freed = 0;
      std::int64_t lowest = 0;
      std::map<std::string, std::int64_t> by_name;
      std::map<std::int32_t, std::int64_t> by_mb;
      for (const graph::Node& n : g.classes[c].nodes) {
        EXPECT_GE(n.mem_alloc, 0);
        EXPECT_GE(n.mem_free, 0);
        alloc += n.mem_alloc;
        freed += n.mem_free;
        lowest = std::min(lowest, alloc - freed);
        by_name[g.names[n.name]] += n.mem_alloc - n.mem_free;
        by_mb[n.microbatch] += n.mem_alloc - n.mem_free;
      }
      std::string detail = "\n  per microbatch:";
      for (const auto& [mb, d] : by_mb) {
        detail += d != 0 ? fmt::format(" {}={}", mb, d) : "";
      }
      detail += "\n  per name:";
      for (const auto& [name, d] : by_name) {
        if (d != 0) {
          detail += fmt::format("\n    {:<40} {:>12}", name, d);
        }
      }
      EXPECT_EQ(alloc, freed) << "class " << c << " (stage " << g.classes[c].stage
                              << "), alloc - free" << detail;
      EXPECT_EQ(lowest, 0) << "class " << c << " frees bytes before allocating them";
    }
  }
}

// 6. Simulating one instance per rank class gives exactly the per-rank results.
TEST_P(EncoderVariant, SharedClassesGiveExactlyThePerRankResult) {
  synth::Scenario s = variant_scenario(GetParam());
  s.parallel.tp = 1;
  s.parallel.dp = 2;  // PP4 x DP2: sharing folds the two replicas
  s.training.global_batch = 12;
  s.cluster.devices = 8;
  const Outcome shared = run(s, /*share=*/true);
  const Outcome full = run(s, /*share=*/false);
  const auto ranks = static_cast<std::size_t>(s.cluster.devices);
  EXPECT_EQ(shared.stats.sharing_fallback, "");
  EXPECT_LT(shared.stats.simulated_ranks, static_cast<std::int32_t>(ranks));
  EXPECT_GT(full.stats.step_time_s, 0.0);
  EXPECT_EQ(shared.stats.step_time_s, full.stats.step_time_s);
  ASSERT_EQ(shared.stats.ranks.size(), ranks);
  ASSERT_EQ(full.stats.ranks.size(), ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    expect_same_rank(shared.stats.ranks[r], full.stats.ranks[r], GetParam().name);
  }
}

INSTANTIATE_TEST_SUITE_P(Multimodal, EncoderVariant, ::testing::ValuesIn(variants()), variant_name);

// ---------------------------------------------------------------------------------------------
// 5. Transposing keeps the LLM body

// The compute-node names of one class graph, encoder nodes removed.
std::vector<std::string> body_compute_names(const graph::ExecGraph& g, const graph::RankGraph& rg) {
  std::vector<std::string> out;
  for (const graph::Node& n : rg.nodes) {
    if (n.kind == graph::NodeKind::kCompute && !is_encoder_name(g, n)) {
      out.push_back(g.names[n.name] + "#" + std::to_string(n.microbatch));
    }
  }
  return out;
}

TEST(MultimodalTranspose, StrippingEncoderNodesGivesTheInlineBody) {
  for (const Variant& v : variants()) {
    if (v.placement != EncoderPlacement::kTranspose) {
      continue;
    }
    SCOPED_TRACE(v.name);
    const synth::Scenario t = variant_scenario(v);
    Variant inl = v;
    inl.placement = EncoderPlacement::kInline;
    const synth::Scenario i = variant_scenario(inl);
    const graph::ExecGraph gt = synth::synthesize(t);
    const graph::ExecGraph gi = synth::synthesize(i);
    ASSERT_EQ(gt.classes.size(), gi.classes.size());
    for (std::size_t c = 0; c < gt.classes.size(); ++c) {
      const auto a = body_compute_names(gt, gt.classes[c]);
      const auto b = body_compute_names(gi, gi.classes[c]);
      ASSERT_FALSE(a.empty());
      EXPECT_EQ(a, b) << "class " << c;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 7. Determinism and the mix

TEST(MultimodalMix, SameSeedGivesTheSameMixAndStepTime) {
  const synth::Scenario s =
      apply(mm_scenario(1, 2, 1, false, 8),
            {"transpose", EncoderPlacement::kTranspose, 1, OwnerMode::kGreedy, false, {}});
  const auto a = synth::models::sample_images(s);
  const auto b = synth::models::sample_images(s);
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t j = 0; j < a.size(); ++j) {
    EXPECT_EQ(a[j].groups, b[j].groups) << "microbatch " << j;
  }
  const Outcome x = run(s, true);
  const Outcome y = run(s, true);
  EXPECT_GT(x.stats.step_time_s, 0.0);
  EXPECT_EQ(x.stats.step_time_s, y.stats.step_time_s);
}

TEST(MultimodalMix, AnotherSeedGivesAnotherMix) {
  synth::Scenario s = mm_scenario(1, 2, 1, false, 8);
  const auto a = synth::models::sample_images(s);
  int differing_seeds = 0;
  for (std::uint64_t seed : {8u, 9u, 1234u}) {
    s.data.seed = seed;
    const auto b = synth::models::sample_images(s);
    bool differs = false;
    for (std::size_t j = 0; j < a.size(); ++j) {
      differs = differs || a[j].groups != b[j].groups;
    }
    EXPECT_TRUE(differs) << "seed " << seed << " gives seed 7's mix";
    differing_seeds += differs ? 1 : 0;
  }
  EXPECT_EQ(differing_seeds, 3);
}

TEST(MultimodalMix, FixedValuesGiveExactCounts) {
  synth::Scenario s = mm_scenario(1, 2, 1, false, 5);
  s.training.micro_batch = 3;
  s.training.global_batch = 15;
  s.data.images_per_sample = {2, 2};
  s.data.tokens_per_image = {16, 16};
  const auto mix = synth::models::sample_images(s);
  ASSERT_EQ(mix.size(), 5u);
  for (const auto& mb : mix) {
    ASSERT_EQ(mb.groups.size(), 1u);
    EXPECT_EQ(mb.groups[0], (synth::models::ImageGroup{6, 16}));
    EXPECT_EQ(mb.images(), 6);
    EXPECT_EQ(mb.patches(), 96);
  }
  // 13 patches round up to 16 (merge 4); with SP over tp=2, 17 round up to 24 (8).
  s.data.tokens_per_image = {13, 13};
  EXPECT_EQ(synth::models::sample_images(s)[0].groups[0], (synth::models::ImageGroup{6, 16}));
  s.data.tokens_per_image = {17, 17};
  EXPECT_EQ(synth::models::sample_images(s)[0].groups[0], (synth::models::ImageGroup{6, 20}));
  s.parallel.tp = 2;
  s.parallel.sp = true;
  EXPECT_EQ(synth::models::sample_images(s)[0].groups[0], (synth::models::ImageGroup{6, 24}));
  s.parallel.sp = false;  // without SP the quantum is merge alone
  EXPECT_EQ(synth::models::sample_images(s)[0].groups[0], (synth::models::ImageGroup{6, 20}));
  s.data.images_per_sample = {0, 0};
  for (const auto& mb : synth::models::sample_images(s)) {
    EXPECT_TRUE(mb.groups.empty());
  }
}

TEST(MultimodalMix, RangesStayWithinTheirBoundsAndReachThem) {
  synth::Scenario s = mm_scenario(1, 1, 1, false, 400);
  s.data.images_per_sample = {1, 3};
  s.data.tokens_per_image = {9, 30};  // rounds to 12..32
  const auto mix = synth::models::sample_images(s);
  ASSERT_EQ(mix.size(), 400u);
  std::set<std::int64_t> images_seen;
  std::set<std::int64_t> patches_seen;
  for (const auto& mb : mix) {
    const std::int64_t images = mb.images();
    EXPECT_GE(images, 1);
    EXPECT_LE(images, 3);
    images_seen.insert(images);
    for (std::size_t i = 0; i < mb.groups.size(); ++i) {
      const auto& g = mb.groups[i];
      EXPECT_GE(g.images, 1);
      EXPECT_GE(g.patches, 12);
      EXPECT_LE(g.patches, 32);
      EXPECT_EQ(g.patches % 4, 0);
      if (i > 0) {
        EXPECT_LT(mb.groups[i - 1].patches, g.patches) << "groups ascend by size, one per size";
      }
      patches_seen.insert(g.patches);
    }
  }
  EXPECT_EQ(images_seen, (std::set<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(patches_seen, (std::set<std::int64_t>{12, 16, 20, 24, 28, 32}));
}

// ---------------------------------------------------------------------------------------------
// YAML scenarios in a temporary folder

using tessera::testing::TempDir;

// A small multimodal scenario on `devices` = pp H100s with the given schedule and data blocks.
constexpr const char* kData = "data: {images_per_sample: [0, 2], tokens_per_image: [4, 40]}\n";
std::string mm_yaml(const std::string& schedule, const std::string& data = kData, int pp = 4,
                    int global_batch = 8, int seq_len = 128) {
  return fmt::format(
      "model: {{layers: 4, hidden: 256, heads: 4, vocab: 1024}}\n"
      "encoder: {{layers: 2, hidden: 128, heads: 4, merge: 4, patch_pixels: 48}}\n"
      "{}"
      "training: {{seq_len: {}, global_batch: {}, micro_batch: 1}}\n"
      "parallelism: {{tp: 1, pp: {}, dp: 1}}\n"
      "schedule: {}\n"
      "cluster: {{hardware: h100-sxm, topology: single-node, devices: {}}}\n",
      data, seq_len, global_batch, pp, schedule, pp);
}

TEST(MultimodalMix, SamplesFileLinesAreUsedInOrderAndCycled) {
  TempDir dir;
  dir.write("samples.csv",
            "# images,tokens_per_image\n"
            "2,10\n"
            "\n"
            "0,7   # a text-only sample\n"
            "1, 33\n");
  // seq_len 512: see SamplesFileAloneBoundsTheSequenceCheck.
  const std::string path =
      dir.write("mm.yaml", mm_yaml("1f1b", "data: {samples_file: samples.csv}\n", 2, 7, 512));
  const synth::Scenario s = synth::load_scenario(path);
  ASSERT_EQ(s.data.samples.size(), 3u);
  EXPECT_EQ(s.data.samples[0], (std::pair<std::int64_t, std::int64_t>{2, 10}));
  EXPECT_EQ(s.data.samples[1], (std::pair<std::int64_t, std::int64_t>{0, 7}));
  EXPECT_EQ(s.data.samples[2], (std::pair<std::int64_t, std::int64_t>{1, 33}));
  const auto mix = synth::models::sample_images(s);
  ASSERT_EQ(mix.size(), 7u);
  using G = std::vector<synth::models::ImageGroup>;
  for (std::size_t j = 0; j < mix.size(); ++j) {
    const G want = j % 3 == 0 ? G{{2, 12}} : j % 3 == 1 ? G{} : G{{1, 36}};
    EXPECT_EQ(mix[j].groups, want) << "microbatch " << j;
  }
  // Two samples per microbatch: they continue through the list across microbatches.
  synth::Scenario two = s;
  two.training.micro_batch = 2;
  two.training.global_batch = 6;
  const auto mix2 = synth::models::sample_images(two);
  ASSERT_EQ(mix2.size(), 3u);
  EXPECT_EQ(mix2[0].groups, (G{{2, 12}}));           // samples 0, 1
  EXPECT_EQ(mix2[1].groups, (G{{2, 12}, {1, 36}}));  // samples 2, 0
  EXPECT_EQ(mix2[2].groups, (G{{1, 36}}));           // samples 1, 2
}

// The longest sample of this file needs 2 x ceil(33 / 4) = 18 LLM tokens, well within 128.
TEST(MultimodalMix, SamplesFileAloneBoundsTheSequenceCheck) {
  // (validate_encoder once checked samples files against the default 1024-patch image.)
  TempDir dir;
  dir.write("samples.csv", "2,10\n0,7\n1,33\n");
  const std::string path =
      dir.write("mm.yaml", mm_yaml("1f1b", "data: {samples_file: samples.csv}\n", 2, 7, 128));
  EXPECT_NO_THROW(synth::load_scenario(path));
}

// A scenario that loads never draws a sample longer than training.seq_len: with SP the
// patches of an image round up to merge x tp, and the check must round the same way.
TEST(MultimodalMix, EverySampleOfALoadedScenarioFitsTheSequence) {
  TempDir dir;
  // 25 images of 20 patches: 25 x 5 = 125 LLM tokens with merge 4; 20 rounds up to 24 with
  // SP over tp=2, so 25 x 6 = 150 > 128.
  const std::string path =
      dir.write("sp.yaml",
                "model: {layers: 4, hidden: 256, heads: 4, vocab: 1024}\n"
                "encoder: {layers: 2, hidden: 128, heads: 4, merge: 4}\n"
                "data: {images_per_sample: 25, tokens_per_image: 20}\n"
                "training: {seq_len: 128, global_batch: 4, micro_batch: 1}\n"
                "parallelism: {tp: 2, pp: 2, dp: 1, sp: true}\n"
                "schedule: 1f1b\n"
                "cluster: {hardware: h100-sxm, topology: single-node, devices: 4}\n");
  synth::Scenario s;
  try {
    s = synth::load_scenario(path);
  } catch (const base::InputError&) {
    return;  // rejected: fine
  }
  for (const auto& mb : synth::models::sample_images(s)) {
    EXPECT_LE(mb.patches() / s.encoder.merge, s.training.seq_len);
  }
}

// ---------------------------------------------------------------------------------------------
// 8. The region form of the schedule block

void expect_same_schedule(const synth::ScheduleConfig& a, const synth::ScheduleConfig& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.chunks, b.chunks);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.encoder, b.encoder);
  EXPECT_EQ(a.encoder_stages, b.encoder_stages);
  EXPECT_EQ(a.owners, b.owners);
  EXPECT_EQ(a.encoder_backward, b.encoder_backward);
  EXPECT_EQ(synth::schedule_label(a), synth::schedule_label(b));
}

TEST(MultimodalRegions, RegionFormsParseLikeTheShorthand) {
  TempDir dir;
  struct Pair {
    std::string shorthand;
    std::string regions;
    int pp = 4;
  };
  const std::vector<Pair> pairs = {
      {"1f1b", "{regions: [{span: model, skeleton: 1f1b}]}"},
      {"transpose",
       "{regions: [{span: encoder, layout: replicated, skeleton: transpose}, "
       "{span: llm, layout: sharded, skeleton: 1f1b}]}"},
      {"{kind: 1f1b, encoder: stages, encoder_stages: 2}",
       "{regions: [{span: encoder, layout: sharded, skeleton: 1f1b, stages: 2}, "
       "{span: llm, skeleton: 1f1b}]}"},
      {"{kind: gpipe, encoder: stages}",
       "{regions: [{span: encoder}, {span: llm, skeleton: gpipe}]}"},
      {"{kind: 1f1b, encoder: transpose, owners: greedy, encoder_backward: owner}",
       "{regions: [{span: encoder, layout: replicated, skeleton: transpose, owners: greedy, "
       "encoder_backward: owner}, {span: llm, layout: sharded, skeleton: 1f1b}]}"},
      {"{kind: interleaved, chunks: 2}",
       "{regions: [{span: model, skeleton: interleaved, chunks: 2}]}", 2},
  };
  for (const Pair& p : pairs) {
    SCOPED_TRACE(p.regions);
    const auto a = synth::load_scenario(dir.write("short.yaml", mm_yaml(p.shorthand, kData, p.pp)));
    const auto b = synth::load_scenario(dir.write("regions.yaml", mm_yaml(p.regions, kData, p.pp)));
    expect_same_schedule(a.schedule, b.schedule);
  }
  // Spot checks of what the shorthands mean.
  const auto t = synth::load_scenario(dir.write(
      "t.yaml",
      mm_yaml("{kind: 1f1b, encoder: transpose, owners: greedy, encoder_backward: owner}")));
  EXPECT_EQ(t.schedule.encoder, EncoderPlacement::kTranspose);
  EXPECT_EQ(t.schedule.owners, OwnerMode::kGreedy);
  EXPECT_EQ(t.schedule.encoder_backward, EncoderBackward::kOwner);
  EXPECT_EQ(t.schedule.kind, synth::ScheduleKind::k1F1B);
  const auto st = synth::load_scenario(
      dir.write("st.yaml", mm_yaml("{kind: 1f1b, encoder: stages, encoder_stages: 2}")));
  EXPECT_EQ(st.schedule.encoder, EncoderPlacement::kStages);
  EXPECT_EQ(st.schedule.encoder_stages, 2);
}

// ---------------------------------------------------------------------------------------------
// 9. The spill prediction over a scenario's transposed plan

// The costs plan_transpose uses: FLOPs of each microbatch's encoder forward and of one LLM
// stage's forward (layers / p layers).
synth::schedule::TransposeCosts flop_costs(const synth::Scenario& s) {
  synth::schedule::TransposeCosts c;
  const synth::parallel::EncoderPrograms enc(s);
  for (std::int32_t j = 0; j < static_cast<std::int32_t>(s.microbatches()); ++j) {
    c.encoder_forward.push_back(enc.forward_flops(j));
  }
  const synth::StepPrograms progs = synth::build_programs(s);
  double fwd = 0.0;
  for (std::int32_t i = 0; i < progs.layer.n_fwd; ++i) {
    fwd += progs.layer.ops[static_cast<std::size_t>(i)].model_flops;
  }
  c.stage_forward = fwd * static_cast<double>(s.model.layers) / static_cast<double>(s.parallel.pp);
  c.stage_backward = 2.0 * c.stage_forward;
  return c;
}

TEST(MultimodalSpill, PredictionFollowsThePlan) {
  for (auto mode : {OwnerMode::kRoundRobin, OwnerMode::kMin, OwnerMode::kGreedy}) {
    for (std::int64_t mbs : {3, 6, 10}) {
      const synth::Scenario s = apply(mm_scenario(1, 4, 1, false, mbs),
                                      {"t", EncoderPlacement::kTranspose, 1, mode, false, {}});
      SCOPED_TRACE(fmt::format("owners {}, {} microbatches", synth::owner_mode_name(mode), mbs));
      const auto plan = synth::transpose_plan(s);
      ASSERT_EQ(plan.size(), 4u);
      const auto costs = flop_costs(s);
      const auto pred = synth::schedule::predict_spill(plan, costs);
      ASSERT_EQ(pred.slack.size(), 4u);
      for (std::size_t r = 1; r < pred.slack.size(); ++r) {
        EXPECT_GT(pred.slack[r], pred.slack[r - 1]) << "rank " << r;
      }
      EXPECT_EQ(pred.slack[0], costs.encoder_forward[0]);
      // The owner map the plan was built from.
      const auto map_mode = mode == OwnerMode::kMin      ? synth::schedule::OwnerMap::kMin
                            : mode == OwnerMode::kGreedy ? synth::schedule::OwnerMap::kGreedy
                                                         : synth::schedule::OwnerMap::kRoundRobin;
      const auto owners = synth::schedule::owner_map(map_mode, 4, static_cast<int>(mbs), costs);
      std::vector<int> seen(static_cast<std::size_t>(mbs), 0);
      for (std::size_t r = 0; r < plan.size(); ++r) {
        std::set<int> prefix;
        bool in_prefix = true;
        for (const Step& st : plan[r]) {
          in_prefix = in_prefix && st.kind != Step::kBody;
          if (st.kind == Step::kEncoderForward) {
            ++seen[static_cast<std::size_t>(st.microbatch)];
            EXPECT_EQ(owners[static_cast<std::size_t>(st.microbatch)], static_cast<int>(r))
                << "microbatch " << st.microbatch;
            if (in_prefix) {
              prefix.insert(st.microbatch);
            } else {
              EXPECT_EQ(mode, OwnerMode::kMin) << "only min runs forwards inline";
              EXPECT_EQ(r, 0u);
            }
          }
        }
        std::set<int> owned;
        double assigned = 0.0;
        for (int j = 0; j < static_cast<int>(mbs); ++j) {
          if (owners[static_cast<std::size_t>(j)] == static_cast<int>(r) &&
              (mode != OwnerMode::kMin || r != 0 || owned.empty())) {
            owned.insert(j);
            assigned += costs.encoder_forward[static_cast<std::size_t>(j)];
          }
        }
        EXPECT_EQ(prefix, owned) << "rank " << r;
        EXPECT_NEAR(pred.assigned[r], assigned, 1e-9 * assigned) << "rank " << r;
        EXPECT_EQ(pred.spill[r], std::max(0.0, pred.assigned[r] - pred.slack[r])) << "rank " << r;
      }
      for (std::size_t j = 0; j < seen.size(); ++j) {
        EXPECT_EQ(seen[j], 1) << "microbatch " << j << " forwards in the plan";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 10. The encoder on devices of its own (DistTrain-style disaggregation)

// TP1 x PP2 x DP2 plus two encoder devices on one node: every (replica, microbatch) with
// images runs its encoder once, on one encoder device, and both first-stage replicas get
// their features; memory balances; the model FLOPs equal the inline placement's.
struct SeparateCase {
  bool trained;
  std::int64_t tp;
  bool sp;
};

class SeparateEncoder : public ::testing::TestWithParam<SeparateCase> {};

TEST_P(SeparateEncoder, RunsEachReplicasMicrobatchOnceOnItsOwnDevices) {
  const SeparateCase& sc = GetParam();
  const std::int64_t dp = sc.tp == 1 ? 2 : 1;  // one node: the LLM's 4 devices and 2 more
  synth::Scenario s = mm_scenario(sc.tp, 2, dp, sc.sp);
  s.encoder.trainable = sc.trained;
  const std::int64_t llm = 2 * dp * sc.tp;
  s.schedule.encoder = EncoderPlacement::kSeparate;
  s.schedule.encoder_devices = 2;
  s.cluster.devices = llm + 2;
  const graph::ExecGraph g = synth::synthesize(s);
  ASSERT_EQ(g.num_ranks, llm + 2);
  // First-stage ranks talk to different encoder devices: every rank is a class of its own.
  ASSERT_EQ(g.classes.size(), static_cast<std::size_t>(llm + 2));
  const auto mix = synth::models::sample_images(s);
  std::map<std::int32_t, int> forwards;  // per microbatch, over both replicas
  int sends = 0;
  int recvs = 0;
  for (std::size_t c = 0; c < g.classes.size(); ++c) {
    const bool device = g.class_rep[c] >= llm;
    std::int64_t alloc = 0;
    std::int64_t freed = 0;
    for (const graph::Node& n : g.classes[c].nodes) {
      alloc += n.mem_alloc;
      freed += n.mem_free;
      const std::string& name = g.names[n.name];
      if (name == "encoder.patch_embed" && n.phase == graph::Phase::kForward) {
        EXPECT_TRUE(device) << "the LLM's ranks run no encoder";
        ++forwards[n.microbatch];
      }
      sends += name == "encoder.send_features" ? 1 : 0;
      recvs += name == "encoder.recv_features" ? 1 : 0;
    }
    EXPECT_EQ(alloc, freed) << "class " << c;
  }
  int with_images = 0;
  for (std::size_t j = 0; j < mix.size(); ++j) {
    const auto groups = static_cast<int>(mix[j].groups.size());
    with_images += groups > 0 ? 1 : 0;
    EXPECT_EQ(forwards[static_cast<std::int32_t>(j)], static_cast<int>(dp) * groups)
        << "microbatch " << j;
  }
  EXPECT_EQ(sends, static_cast<int>(dp * sc.tp) * with_images);  // to every first-stage rank
  EXPECT_EQ(recvs, static_cast<int>(dp * sc.tp) * with_images);
  synth::Scenario inline_s = s;
  inline_s.schedule.encoder = EncoderPlacement::kInline;
  inline_s.cluster.devices = llm;
  EXPECT_NEAR(g.info.model_flops, synth::synthesize(inline_s).info.model_flops,
              1e-9 * g.info.model_flops);
  const Outcome o = run(s, /*share=*/true);
  EXPECT_GT(o.stats.step_time_s, 0.0);
  EXPECT_EQ(o.stats.ranks.size(), static_cast<std::size_t>(llm + 2));
}

INSTANTIATE_TEST_SUITE_P(Multimodal, SeparateEncoder,
                         ::testing::Values(SeparateCase{false, 1, false},
                                           SeparateCase{true, 1, false},
                                           SeparateCase{true, 2, false},
                                           SeparateCase{true, 2, true}),
                         [](const ::testing::TestParamInfo<SeparateCase>& i) {
                           return fmt::format("{}_tp{}{}", i.param.trained ? "trained" : "frozen",
                                              i.param.tp, i.param.sp ? "_sp" : "");
                         });

// Tied embeddings with the encoder as the first stage: the embedding lives on the LLM's
// first stage (pipeline rank 1), so that rank and the last one sum the table's gradients.
TEST(MultimodalStages, TiedEmbeddingsPairTheLlmsFirstStageWithTheLast) {
  synth::Scenario s = mm_scenario(1, 4, 1);
  s.model.tied_embeddings = true;
  s.schedule.encoder = EncoderPlacement::kStages;
  s.schedule.encoder_stages = 1;
  const graph::ExecGraph g = synth::synthesize(s);
  int pairs = 0;
  for (const graph::Group& grp : g.groups) {
    if (grp.ranks == std::vector<std::int32_t>{1, 3}) {
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 1);
  const Outcome o = run(s, /*share=*/true);
  EXPECT_GT(o.stats.step_time_s, 0.0);
}

}  // namespace
}  // namespace tessera::integration
