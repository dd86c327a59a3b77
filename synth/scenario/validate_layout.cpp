// SPDX-License-Identifier: Apache-2.0
// parallelism.pipeline_layout against the pipeline and the model (docs/pipeline_schedules.md,
// "Pipeline layouts"): one stage per virtual stage of a pipe, every decoder layer once, the
// embedding first, the loss last, multi-token prediction after the last decoder layer.
#include <fmt/format.h>

#include "synth/scenario/validate_checks.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth::detail {

namespace {

constexpr const char* kKey = "parallelism.pipeline_layout";

// The parts the first (E) and the last (L) stage alone hold, once each.
void check_ends(const std::vector<PipelineStage>& l, Violations& out) {
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (l[i].embeddings != (i == 0 ? 1 : 0)) {
      out.push_back({kKey, fmt::format("stage {} has {} E; the embedding is the first stage's, "
                                       "once",
                                       i, l[i].embeddings)});
      return;
    }
    if (l[i].losses != (i + 1 == l.size() ? 1 : 0)) {
      out.push_back({kKey, fmt::format("stage {} has {} L; the loss is the last stage's, once", i,
                                       l[i].losses)});
      return;
    }
  }
}

// Multi-token prediction: mtp_depth modules, after every decoder layer, in the last stage or
// the one before it (Megatron-Core's "m|L").
void check_mtp(const Scenario& s, const std::vector<PipelineStage>& l, Violations& out) {
  std::int64_t count = 0;
  std::size_t at = 0;
  std::size_t last_layer = 0;
  for (std::size_t i = 0; i < l.size(); ++i) {
    count += l[i].mtp;
    at = l[i].mtp > 0 ? i : at;
    last_layer = l[i].layers > 0 ? i : last_layer;
  }
  if (count != s.model.mtp_depth) {
    out.push_back({kKey, fmt::format("the layout has {} m, but model.mtp_depth is {}", count,
                                     s.model.mtp_depth)});
    return;
  }
  if (count > 0 && (at < last_layer || at + 2 < l.size())) {
    out.push_back({kKey, fmt::format("m sits in stage {}: multi-token prediction follows the last "
                                     "decoder layer, in the last stage or the one before it",
                                     at)});
  } else if (count > 0 && at + 1 < l.size() && s.schedule.kind == ScheduleKind::kDualPipe) {
    out.push_back({kKey,
                   "multi-token prediction on a stage of its own under dualpipe (two "
                   "pipes, each with its copy) is not modelled yet",
                   "put m in the loss's stage: \"...|mL\""});
  }
}

}  // namespace

void check_layout(const Scenario& s, Violations& out) {
  const std::vector<PipelineStage>& l = s.parallel.layout;
  if (s.encoder.present && s.schedule.encoder == EncoderPlacement::kStages) {
    out.push_back({kKey, "pipeline_layout with the encoder as pipeline stages is not modelled yet",
                   "give the LLM's stages with stage_layers instead"});
    return;
  }
  const schedule::Placement place(s.schedule, static_cast<int>(s.parallel.pp));
  if (static_cast<int>(l.size()) != place.stages_per_pipe()) {
    out.push_back({kKey, fmt::format("the layout has {} stages, but a pipe of this schedule has "
                                     "{} (pp={}, {} per rank and pipe)",
                                     l.size(), place.stages_per_pipe(), s.parallel.pp,
                                     place.stages_per_pipe() / s.parallel.pp)});
    return;
  }
  std::int64_t layers = 0;
  for (const PipelineStage& st : l) {
    layers += st.layers;
  }
  if (layers != s.model.layers) {
    out.push_back(
        {kKey, fmt::format("the layout has {} t, but model.layers is {}", layers, s.model.layers)});
    return;
  }
  check_ends(l, out);
  check_mtp(s, l, out);
}

}  // namespace tessera::synth::detail
