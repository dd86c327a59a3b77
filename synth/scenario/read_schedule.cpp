// SPDX-License-Identifier: Apache-2.0
// `schedule:`: a spec string (schedule/schedule_spec.h), the mapping form with the encoder's
// placement keys, or the region form of the schedule algebra (synth/schedule/README.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "base/error.h"
#include "synth/scenario/readers.h"
#include "synth/schedule/encoder_placements.h"
#include "synth/schedule/pipeline_schedule.h"
#include "synth/schedule/schedule_spec.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

ScheduleKind read_skeleton(const YamlNode& kind) {
  return *schedule_kind(kind.as_choice(schedule_names()));
}

void read_encoder_keys(const YamlNode& n, ScheduleConfig& cfg) {
  constexpr std::array<std::string_view, 3> kOwners = {"round_robin", "min", "greedy"};
  constexpr std::array<std::string_view, 2> kBackward = {"recompute", "owner"};
  if (auto v = n.find("owners")) {
    std::string o = v->as_choice(kOwners);
    cfg.owners = o == "round_robin" ? OwnerMode::kRoundRobin
                 : o == "min"       ? OwnerMode::kMin
                                    : OwnerMode::kGreedy;
  }
  if (auto v = n.find("encoder_backward")) {
    cfg.encoder_backward =
        v->as_choice(kBackward) == "owner" ? EncoderBackward::kOwner : EncoderBackward::kRecompute;
  }
  if (cfg.encoder != EncoderPlacement::kTranspose &&
      (n.has("owners") || n.has("encoder_backward"))) {
    n.at(n.has("owners") ? "owners" : "encoder_backward")
        .fail("only the transpose encoder placement takes this key");
  }
}

// The region form of the schedule algebra (synth/schedule/README.md):
//   regions:
//     - {span: encoder, layout: replicated, skeleton: transpose, owners: greedy}
//     - {span: llm, layout: sharded, skeleton: 1f1b}
// A model is the encoder region followed by the LLM region, or one region over both. The
// LLM is always sharded over the pipeline. A replicated region runs the transpose skeleton;
// a sharded encoder region takes `stages` pipeline ranks of the LLM's own pipeline, so its
// skeleton must be the LLM's.
void read_regions(const YamlNode& n, ScheduleConfig& cfg) {
  constexpr std::array<std::string_view, 8> kRegionKeys = {
      "span", "layout", "skeleton", "stages", "owners", "encoder_backward", "chunks", "devices"};
  constexpr std::array<std::string_view, 3> kSpans = {"encoder", "llm", "model"};
  constexpr std::array<std::string_view, 3> kLayouts = {"sharded", "replicated", "separate"};
  auto regions = n.items();
  if (regions.empty() || regions.size() > 2) {
    n.fail(
        fmt::format("expected one region (span: model) or two (span: encoder, then span: "
                    "llm), got {}",
                    regions.size()));
  }
  std::vector<std::string> spans;
  std::vector<bool> replicated;
  std::vector<bool> separate;
  // The keys each kind of region takes.
  constexpr std::array<std::string_view, 4> kLlmKeys = {"span", "layout", "skeleton", "chunks"};
  constexpr std::array<std::string_view, 5> kReplicatedKeys = {"span", "layout", "skeleton",
                                                               "owners", "encoder_backward"};
  constexpr std::array<std::string_view, 4> kShardedKeys = {"span", "layout", "skeleton", "stages"};
  constexpr std::array<std::string_view, 3> kSeparateKeys = {"span", "layout", "devices"};
  for (const YamlNode& r : regions) {
    r.check_keys(kRegionKeys);
    spans.push_back(r.at("span").as_choice(kSpans));
    std::string layout = r.has("layout") ? r.at("layout").as_choice(kLayouts) : "sharded";
    replicated.push_back(layout == "replicated");
    separate.push_back(layout == "separate");
    if (spans.back() != "encoder") {
      r.check_keys(kLlmKeys);
    } else if (layout == "replicated") {
      r.check_keys(kReplicatedKeys);
    } else if (layout == "separate") {
      r.check_keys(kSeparateKeys);
    } else {
      r.check_keys(kShardedKeys);
    }
  }
  for (std::size_t i = 0; i + 1 < regions.size(); ++i) {
    if (replicated[i] && replicated[i + 1]) {
      regions[i + 1].at("layout").fail(
          "two adjacent replicated regions: they need no communication between them, so write "
          "them as one region (the algebra's normal form)");
    }
  }
  const YamlNode& llm = regions.back();
  if (spans.back() == "encoder" || (regions.size() == 2 && spans.front() != "encoder")) {
    llm.at("span").fail(
        "regions run in model order: the encoder region first, then the llm region");
  }
  if (replicated.back() || separate.back()) {
    llm.at("layout").fail("the LLM region must be sharded over the pipeline");
  }
  if (!llm.has("skeleton")) {
    llm.fail(
        fmt::format("missing required key 'skeleton' ({})", fmt::join(schedule_names(), ", ")));
  }
  YamlNode body = llm.at("skeleton");
  if (body.as_string() == "transpose") {
    body.fail("the transpose skeleton runs a replicated region; the LLM needs a pipeline skeleton");
  }
  cfg.kind = read_skeleton(body);
  if (auto c = llm.find("chunks")) {
    if (!schedule::takes_chunks(cfg.kind)) {
      c->fail("only the interleaved skeleton takes this key");
    }
    cfg.chunks = c->as_int(2, kMaxLayers);
  } else if (schedule::takes_chunks(cfg.kind)) {
    llm.fail("the interleaved skeleton needs its number of model chunks per rank",
             "write chunks: 2");
  }
  cfg.encoder = EncoderPlacement::kInline;
  if (regions.size() == 1) {
    return;
  }
  const YamlNode& enc = regions.front();
  if (separate.front()) {  // disaggregated: the encoder on devices of its own
    cfg.encoder = EncoderPlacement::kSeparate;
    cfg.encoder_devices = enc.has("devices") ? enc.at("devices").as_int(1, 1 << 16) : 1;
  } else if (replicated.front()) {
    if (!enc.has("skeleton") || enc.at("skeleton").as_string() != "transpose") {
      (enc.has("skeleton") ? enc.at("skeleton") : enc)
          .fail("a replicated region runs the transpose skeleton", "write skeleton: transpose");
    }
    cfg.encoder = EncoderPlacement::kTranspose;
  } else {
    if (enc.has("skeleton") && read_skeleton(enc.at("skeleton")) != cfg.kind) {
      enc.at("skeleton")
          .fail(
              "a sharded encoder region shares the LLM's pipeline, so it needs the LLM's skeleton");
    }
    cfg.encoder = EncoderPlacement::kStages;
    cfg.encoder_stages = enc.has("stages") ? enc.at("stages").as_int(1, kMaxLayers) : 1;
  }
  read_encoder_keys(enc, cfg);
}

// A spec string (schedule/schedule_spec.h): `1f1b`, `interleaved:2`, `transpose:greedy`, ...
ScheduleConfig read_spec(const YamlNode& kind) {
  try {
    return schedule::parse_schedule_spec(kind.as_string());
  } catch (const base::InputError& e) {
    kind.fail(e.message());
  }
}

}  // namespace

ScheduleConfig read_schedule(const YamlNode& n) {
  constexpr std::array<std::string_view, 9> kKeys = {
      "kind",   "chunks",           "group",   "encoder",        "encoder_stages",
      "owners", "encoder_backward", "regions", "encoder_devices"};
  if (n.is_map() && n.has("regions")) {
    ScheduleConfig cfg;
    if (n.keys().size() != 1) {
      n.fail("the region form takes only the key 'regions'");
    }
    read_regions(n.at("regions"), cfg);
    return cfg;
  }
  const YamlNode kind = n.is_map() ? n.at("kind") : n;
  if (n.is_map()) {
    n.check_keys(kKeys);
  }
  ScheduleConfig cfg = read_spec(kind);
  if (n.is_map()) {
    if (auto v = n.find("encoder")) {
      cfg.encoder = schedule::builtin_encoder_placements()
                        .find(v->as_choice(encoder_placement_names()))
                        ->placement;
    }
    if (auto v = n.find("encoder_devices")) {
      if (cfg.encoder != EncoderPlacement::kSeparate) {
        v->fail("only the 'separate' encoder placement takes this key");
      }
      cfg.encoder_devices = v->as_int(1, 1 << 16);
    }
    if (auto v = n.find("encoder_stages")) {
      if (cfg.encoder != EncoderPlacement::kStages) {
        v->fail("only the 'stages' encoder placement takes this key");
      }
      cfg.encoder_stages = v->as_int(1, kMaxLayers);
    }
    read_encoder_keys(n, cfg);
  }
  if (schedule::takes_chunks(cfg.kind)) {
    const bool bare = kind.as_string() == "interleaved";  // a scenario states its chunks
    if (bare && !n.is_map()) {
      n.fail("the interleaved schedule needs its number of model chunks per rank",
             "write schedule: interleaved:2 or {kind: interleaved, chunks: 2}");
    }
    if (bare || n.has("chunks")) {
      cfg.chunks = n.at("chunks").as_int(2, kMaxLayers);
    }
    if (auto g = n.is_map() ? n.find("group") : std::nullopt) {
      cfg.group = g->as_int(1, kMaxDevices);
    }
  } else if (n.is_map() && (n.has("chunks") || n.has("group"))) {
    n.at(n.has("chunks") ? "chunks" : "group").fail("only the interleaved schedule takes this key");
  }
  return cfg;
}

}  // namespace tessera::synth::reader
