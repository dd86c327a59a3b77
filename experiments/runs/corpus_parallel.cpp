// SPDX-License-Identifier: Apache-2.0
// A run's `parallelism:` -> the scenario's parallel sizes, sharding and schedule, with the
// framework's defaults where the table is silent (docs/runs.md §3).
#include <fmt/format.h>

#include <cstdlib>

#include "experiments/runs/translate.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;

// A parallel size: absent or unknown is `fallback` when one is given, else the run cannot run.
std::int64_t size_of(const YamlNode& p, std::string_view key, std::int64_t fallback,
                     Translation& t) {
  auto v = p.find(key);
  if (!v || v->is_null()) {
    return fallback;
  }
  auto x = lenient_int(*v, 0, kMaxDevices);
  if (!x) {
    if (fallback == 0) {
      t.cannot(*v, fmt::format("parallelism.{} is not stated", key));
    }
    return fallback > 0 ? fallback : 1;
  }
  return std::max<std::int64_t>(*x, 1);
}

// A pipe of `stages` virtual stages over layers they do not divide: the embedding and the loss
// count as a layer each and the stages share the slots evenly, the first ones one more
// (Megatron-Core's account_for_embedding_in_pipeline_split and ..._loss_..., which NeMo's
// recipes set for such models; TorchTitan's default split weighs them the same way).
std::string counted_layout(std::int64_t layers, std::int64_t stages, std::int64_t mtp) {
  const std::int64_t slots = layers + 2;
  std::string out;
  for (std::int64_t i = 0; i < stages; ++i) {
    std::int64_t n = slots / stages + (i < slots % stages ? 1 : 0);
    const bool first = i == 0;
    const bool last = i + 1 == stages;
    n -= (first ? 1 : 0) + (last ? 1 : 0);
    out += (first ? "" : "|") + std::string(first ? "E" : "") +
           std::string(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), 't') +
           (last ? std::string(static_cast<std::size_t>(mtp), 'm') + "L" : "");
  }
  return out;
}

// vp > 1: Megatron's interleaved schedule; else 1F1B. TorchTitan states its schedule by name.
void translate_schedule(const YamlNode& p, const YamlNode& training, std::int64_t pp,
                        Translation& t) {
  std::optional<YamlNode> named = p.find("pp_schedule");
  if (!named) {
    named = training.find("pp_schedule");
  }
  std::int64_t vp = 1;
  if (auto v = p.find("vp")) {
    vp = lenient_int(*v, 0, 1 << 16).value_or(1);
  }
  if (pp == 1) {
    t.set("schedule", "1f1b", p);  // one stage: no pipeline to order
    return;
  }
  // TorchTitan's `layers_per_stage N`: stages of N slots, the embedding and the loss one each.
  std::string text = named ? text_of(*named) : "";
  if (auto more = training.find("pp_schedule")) {
    text += " " + text_of(*more);
  }
  if (vp == 1 && contains(text, "interleaved") &&
      text.find("layers_per_stage ") != std::string::npos) {
    const std::int64_t per =
        std::max<std::int64_t>(1, std::atoll(text.c_str() + text.find("layers_per_stage ") + 17));
    const std::int64_t total = (t.layers + 2 + per - 1) / per;
    vp = total % pp == 0 ? total / pp : 1;
  }
  const std::int64_t stages = pp * vp;
  if (t.layers % stages != 0 && t.layers + 2 >= stages &&
      !t.text.has("parallelism.pipeline_layout")) {
    t.set("parallelism.pipeline_layout", quoted(counted_layout(t.layers, stages, t.mtp)),
          p.at("pp"));
    t.note(
        fmt::format("{} layers on {} pipeline stages: the embedding and the loss count as a "
                    "layer each",
                    t.layers, stages));
  }
  if (vp > 1) {
    t.set("schedule", fmt::format("interleaved:{}", vp), named ? *named : p.at("vp"));
  } else if (named && contains(text_of(*named), "interleaved")) {
    t.cannot(*named, "an interleaved schedule without its virtual stages (vp) per rank");
  } else {
    t.set("schedule", "1f1b", named ? *named : p);
  }
}

// FSDP over all of DP (x CP, as FSDP2 and Megatron-FSDP shard), or HSDP's shard groups.
void translate_sharding(const YamlNode& p, Translation& t) {
  std::int64_t fsdp = 0;
  std::optional<YamlNode> at = p.find("fsdp");
  if (at) {
    fsdp = lenient_int(*at, 0, kMaxDevices).value_or(0);
  }
  if (auto z = p.find("zero")) {
    if (lenient_int(*z, 0, 3).value_or(0) == 3 && fsdp == 0) {
      fsdp = t.dp * t.cp;
      at = z;
    }
  }
  if (fsdp == 0) {
    return;
  }
  t.set("parallelism.zero", 3, *at);
  if (fsdp < t.dp) {
    if (t.dp % fsdp != 0) {
      at->fail(fmt::format("FSDP shard groups of {} do not divide dp = {}", fsdp, t.dp));
    }
    t.set("parallelism.dp_shard", fsdp, *at);
  } else if (fsdp != t.dp && fsdp != t.dp * t.cp) {
    at->fail(fmt::format("FSDP over {} ranks is neither dp ({}) nor dp x cp ({})", fsdp, t.dp,
                         t.dp * t.cp));
  }
  if (auto r = p.find("reshard_after_forward")) {
    if (auto on = lenient_bool(*r)) {
      t.set("training.reshard_after_forward", *on ? "true" : "false", *r);
    }
  } else if ((t.framework == Framework::kTorchTitan || t.framework == Framework::kAutomodel) &&
             t.pp > 1) {
    // FSDP2 under PyTorch's pipelining, as TorchTitan and NeMo AutoModel (its MoE models, as
    // of October 2025) default: no resharding (one all-gather per unit and step instead of one
    // per microbatch), docs/runs.md.
    t.set("training.reshard_after_forward", "false", *at);
  }
}

// TorchTitan before April 2025 (pytorch/torchtitan#1073) split each rank's batch into one
// microbatch per pipeline rank unless told otherwise; the corpus's TorchTitan pipeline runs
// (December 2024) leave the count unsaid.
void torchtitan_microbatches(const YamlNode& training, Translation& t) {
  const YamlNode mb = training.at("micro_batch");
  if (t.framework != Framework::kTorchTitan || t.pp == 1 || lenient_int(mb, 1, kMaxBatch)) {
    return;
  }
  auto global = lenient_int(training.at("global_batch"), 1, kMaxBatch);
  if (!global || *global % (t.dp * t.pp) != 0) {
    return;
  }
  const std::int64_t micro = *global / (t.dp * t.pp);
  t.set("training.micro_batch", micro, mb);
  std::erase(t.notes, std::string("micro_batch not stated: 1"));
  t.note(
      fmt::format("micro_batch not stated: {}, TorchTitan's default of one microbatch per "
                  "pipeline rank until April 2025",
                  micro));
}

// What the framework does that the table does not say.
void framework_defaults(const YamlNode& p, Translation& t) {
  const bool sharded = t.text.has("parallelism.zero");
  if (t.framework == Framework::kMegatron && !sharded &&
      !t.text.has("training.distributed_optimizer")) {
    t.set("training.distributed_optimizer", "true", p);  // every NeMo/Bridge recipe
  }
  // Megatron-Bridge's GPTModelProvider fuses the cross-entropy (cross_entropy_loss_fusion,
  // True since the repository began; Megatron-Core's own default is off).
  if (t.megatron_bridge && !t.text.has("training.cross_entropy_fusion")) {
    t.set("training.cross_entropy_fusion", "true", p);
  }
  // Its FP8 presets keep the weights in FP8 (fp8_param_gather in every bf16_with_fp8_* and
  // bf16_with_mxfp8 mixed-precision config).
  if (t.megatron_bridge && t.precision_group != "bf16" &&
      !t.text.has("training.fp8_param_gather")) {
    t.set("training.fp8_param_gather", "true", p);
  }
  if (t.framework != Framework::kMegatron && t.tp > 1) {
    bool async = false;
    if (auto a = p.find("async_tp")) {
      async = lenient_bool(*a).value_or(false);
    }
    async = t.async_tp.value_or(async);
    t.set("parallelism.tp_comm_overlap", async ? "true" : "false",
          p.has("async_tp") ? p.at("async_tp") : p);
  }
}

// Sequence parallelism (on with TP unless stated) and Transformer Engine's userbuffers overlap
// of its collectives (Megatron turns it off at TP 1).
void translate_sequence_parallel(const YamlNode& p, Translation& t) {
  const std::optional<YamlNode> stated = p.find("sp");
  const std::optional<bool> given = stated ? lenient_bool(*stated) : std::optional<bool>();
  const bool sp = given.value_or(true);
  if (!given.has_value()) {
    t.note("sequence parallelism not stated: on, as with TP in every recipe");
  }
  t.set("parallelism.sp", sp ? "true" : "false", stated ? *stated : p);
  if (auto o = p.find("tp_comm_overlap")) {
    if (auto on = lenient_bool(*o); on && sp) {
      t.set("parallelism.tp_comm_overlap", *on ? "true" : "false", *o);
    }
  }
}

}  // namespace

void translate_parallelism(const YamlNode& p, const YamlNode& training, bool moe, Translation& t) {
  p.expect_map();
  t.tp = size_of(p, "tp", 1, t);
  t.pp = size_of(p, "pp", 1, t);
  const std::int64_t pp = t.pp;
  t.cp = size_of(p, "cp", 1, t);
  t.dp = size_of(p, "dp", 0, t);
  t.set("parallelism.tp", t.tp, p.has("tp") ? p.at("tp") : p);
  t.set("parallelism.pp", pp, p.has("pp") ? p.at("pp") : p);
  t.set("parallelism.cp", t.cp, p.has("cp") ? p.at("cp") : p);
  t.set("parallelism.dp", t.dp, p.has("dp") ? p.at("dp") : p);
  if (t.cp > 1) {
    t.note("context parallelism: Megatron's default, p2p ring attention");
  }
  if (moe) {
    const std::int64_t ep = size_of(p, "ep", 0, t);
    t.set("parallelism.ep", ep, p.has("ep") ? p.at("ep") : p);
    if (auto e = p.find("etp"); e && !unknown(*e)) {
      t.set("parallelism.etp", size_of(p, "etp", 1, t), *e);
    }
  }
  if (t.tp > 1) {
    translate_sequence_parallel(p, t);
  }
  translate_schedule(p, training, pp, t);
  translate_sharding(p, t);
  framework_defaults(p, t);
  torchtitan_microbatches(training, t);
}

}  // namespace tessera::experiments::runs
