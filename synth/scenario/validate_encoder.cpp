// SPDX-License-Identifier: Apache-2.0
// The encoder's constraints: a placement needs an encoder; the encoder's heads and MLP split
// over tp; encoder stages need a flat skeleton and leave the LLM its stages; the largest
// sample's LLM tokens fit the sequence.
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth::detail {

namespace {

// Where the encoder's stage count is written: encoder_stages, or the region form's stages.
Violation at_encoder_stages(std::string message) {
  return {"schedule.encoder_stages", std::move(message), "", "schedule.regions[0].stages"};
}

// "gpipe, 1f1b or zb-h1": the skeletons the encoder may take stages under.
std::string flat_skeletons() {
  std::string out;
  std::string last;
  for (std::string_view name : schedule_names()) {
    if (schedule::builtin_schedules().find(name)->takes_encoder_stages()) {
      out += (out.empty() || last.empty() ? "" : ", ") + last;
      last = name;
    }
  }
  return out.empty() ? last : out + " or " + last;
}

void check_encoder_stages(const Scenario& s, Violations& out) {
  const auto& p = s.parallel;
  const auto& cfg = s.schedule;
  if (!schedule::builtin_schedules().get(cfg.kind).takes_encoder_stages()) {
    out.push_back({"schedule.kind",
                   fmt::format("the encoder as its own pipeline stages needs a flat skeleton "
                               "({}), not {}",
                               flat_skeletons(), schedule_name(cfg.kind))});
  }
  if (cfg.encoder_stages >= p.pp) {
    out.push_back(at_encoder_stages(
        fmt::format("encoder_stages={} leaves no pipeline rank for the LLM (pp={})",
                    cfg.encoder_stages, p.pp)));
  }
  if (s.encoder.layers < cfg.encoder_stages || s.model.layers < p.pp - cfg.encoder_stages) {
    out.push_back(at_encoder_stages(fmt::format(
        "{} encoder layers and {} LLM layers cannot fill {} and {} stages", s.encoder.layers,
        s.model.layers, cfg.encoder_stages, p.pp - cfg.encoder_stages)));
  }
}

// The largest sample's LLM tokens: patches per image round up to whole merged tokens (and,
// with SP, to a multiple of tp), as models::sample_images does.
void check_tokens(const Scenario& s, Violations& out) {
  const auto& e = s.encoder;
  const auto& d = s.data;
  const std::int64_t quantum = e.merge * (s.parallel.sp ? s.parallel.tp : 1);
  auto llm_tokens = [&](std::int64_t images, std::int64_t patches) {
    return images * ((patches + quantum - 1) / quantum * quantum / e.merge);
  };
  std::int64_t images = d.images_per_sample.hi;
  std::int64_t patches = d.tokens_per_image.hi;
  std::int64_t worst = d.samples.empty() ? llm_tokens(images, patches) : 0;
  for (const auto& [i, t] : d.samples) {
    if (llm_tokens(i, t) > worst) {
      worst = llm_tokens(i, t);
      images = i;
      patches = t;
    }
  }
  if (worst > s.training.seq_len) {
    out.push_back({"data",
                   fmt::format("a sample with {} images of {} patches needs {} LLM tokens, more "
                               "than training.seq_len={}",
                               images, patches, worst, s.training.seq_len),
                   "", "encoder"});
  }
}

}  // namespace

void check_divides(Violations& out, std::string_view key, std::int64_t d, std::string_view dname,
                   std::int64_t n, std::string_view nname) {
  if (n % d != 0) {
    out.push_back(
        {std::string(key), fmt::format("{}={} does not divide {}={}", dname, d, nname, n)});
  }
}

void check_encoder(const Scenario& s, Violations& out) {
  if (!s.encoder.present) {
    if (s.schedule.encoder != EncoderPlacement::kInline) {
      out.push_back({"schedule",
                     "this schedule places an encoder region, but the scenario has no encoder",
                     "add an 'encoder:' block (for example preset: qwen2-vl-vit)"});
    }
    return;
  }
  if (schedule::placement_shape(s.schedule.kind) == schedule::PlacementShape::kDual) {
    out.push_back({"schedule.kind",
                   "DualPipe's second pipe starts on the last rank; an encoder region is not "
                   "supported with it yet",
                   "use dualpipev, 1f1b, interleaved or a zero-bubble schedule"});
  }
  check_divides(out, "encoder", s.parallel.tp, "parallelism.tp", s.encoder.heads, "encoder.heads");
  check_divides(out, "encoder", s.parallel.tp, "parallelism.tp", s.encoder.ffn, "encoder.ffn");
  if (s.schedule.encoder == EncoderPlacement::kStages) {
    check_encoder_stages(s, out);
  }
  check_tokens(s, out);
}

}  // namespace tessera::synth::detail
