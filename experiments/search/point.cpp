// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/point.h"

#include <fmt/format.h>

#include "base/error.h"
#include "synth/scenario/validate.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::experiments::search {

namespace {

using synth::Scenario;

// Where an axis has no effect at this point, every value of it is the same run: the first
// value stands for them and the others are duplicates (the reason names the axis and where).
// Megatron turns sequence parallelism off at tp 1; a single stage runs no pipeline schedule;
// cp_comm needs cp.
struct Duplicate {
  std::string reason;
  std::string detail;
};

Duplicate duplicate_of(const Scenario& s, const Space& space, const std::vector<std::size_t>& p) {
  auto moved = [&](std::string_view axis) { return p[space.position(axis)] != 0; };
  auto first = [&](std::string_view axis) { return space.axis(axis).values.front(); };
  if (s.parallel.tp == 1 && moved("sp")) {
    return {"sp at tp=1", fmt::format("the same run as sp={}: Megatron turns sequence "
                                      "parallelism off at tp=1",
                                      first("sp"))};
  }
  if (s.parallel.pp == 1 && !s.encoder.present && moved("schedule")) {
    return {"schedule at pp=1",
            fmt::format("the same run as schedule={}: a single stage runs no pipeline schedule",
                        first("schedule"))};
  }
  if (s.parallel.cp == 1 && moved("cp_comm")) {
    return {"cp_comm at cp=1",
            fmt::format("the same run as cp_comm={}: without context parallelism it has no effect",
                        first("cp_comm"))};
  }
  return {};
}

// A new pipeline shape gets Megatron's split of the layers: even, the remainder to the first
// stages where the stages do not divide the layers; the base's own split stays with its shape.
// Returns why the shape cannot hold the layers: more virtual stages than layers ("" if it can).
std::string split_layers(Scenario& s, const Scenario& base) {
  if (s.parallel.pp == base.parallel.pp && s.schedule.kind == base.schedule.kind &&
      s.schedule.chunks == base.schedule.chunks) {
    return "";
  }
  auto& p = s.parallel;
  p.layout.clear();
  p.stage_layers.clear();
  p.first_stage_layers = p.last_stage_layers = 0;
  const synth::schedule::Placement place(s.schedule, static_cast<int>(p.pp));
  const bool enc_stages =
      s.encoder.present && s.schedule.encoder == synth::EncoderPlacement::kStages;
  const std::int64_t n = place.stages_per_pipe() - (enc_stages ? s.schedule.encoder_stages : 0);
  const std::int64_t layers = s.model.layers;
  if (n > layers) {
    return fmt::format(
        "pp={} with {} chunks a rank makes {} virtual stages, more than the {} "
        "layers",
        p.pp, place.chunks(), n, layers);
  }
  if (n > 0 && layers % n != 0) {
    for (std::int64_t i = 0; i < n; ++i) {
      p.stage_layers.push_back(layers / n + (i < layers % n ? 1 : 0));
    }
  }
  return "";
}

// ZeRO-3 under a pipeline keeps each unit's weights gathered and its gradients unsharded over
// the step (reshard_after_forward: false), as TorchTitan's default policy does where pipeline
// parallelism is on, to spare every microbatch its all-gathers; the scenario's own setting
// stays. Without ZeRO-3 the key has no effect.
void reshard_policy(Scenario& s, const Scenario& base) {
  if (s.zero_stage() != 3) {
    s.training.reshard_after_forward.reset();
  } else if (!base.training.reshard_after_forward && s.parallel.pp > 1) {
    s.training.reshard_after_forward = false;
  }
}

}  // namespace

std::optional<Scenario> make_point(const Scenario& base, const Space& space, std::uint64_t index,
                                   PointResult& out) {
  out.index = index;
  const std::vector<std::size_t> p = space.point(index);
  Scenario s = base;
  for (std::size_t k = 0; k < p.size(); ++k) {
    space.axes()[k].axis->apply(s, space.axes()[k].values[p[k]]);
  }
  auto reject = [&](Status st, std::string reason, std::string detail) {
    out.status = st;
    out.reason = std::move(reason);
    out.detail = std::move(detail);
    return std::nullopt;
  };
  if (Duplicate dup = duplicate_of(s, space, p); !dup.reason.empty()) {
    return reject(Status::kDuplicate, dup.reason, dup.detail);
  }
  s.parallel.sp = s.parallel.sp && s.parallel.tp > 1;
  if (s.parallel.cp == 1) {
    s.parallel.cp_comm.reset();
  }
  if (std::string why = split_layers(s, base); !why.empty()) {
    return reject(Status::kInvalid, "pipeline stages", why);
  }
  reshard_policy(s, base);
  s.parallel.dp = synth::devices_left_dp(s);
  if (s.parallel.dp == 0) {
    return reject(Status::kInvalid, "devices",
                  fmt::format("tp x cp x pp = {} does not divide the {} devices",
                              s.parallel.tp * s.parallel.cp * s.parallel.pp, s.cluster.devices));
  }
  out.dp = s.parallel.dp;
  if (const auto v = synth::validate(s); !v.empty()) {
    return reject(Status::kInvalid, v.front().key, v.front().message);
  }
  out.microbatches = s.microbatches();
  return s;
}

}  // namespace tessera::experiments::search
