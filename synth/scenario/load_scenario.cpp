// SPDX-License-Identifier: Apache-2.0
// Strict scenario loading: every key checked, every cross-field constraint reported at the
// position of the value that breaks it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"
#include "synth/scenario/model_presets.h"
#include "synth/scenario/scenario.h"
#include "synth/scenario/unmodelled_keys.h"
#include "synth/schedule/encoder_placements.h"
#include "synth/schedule/pipeline_schedule.h"
#include "synth/schedule/schedule_spec.h"
#include "synth/schedule/skeletons/skeleton.h"

namespace tessera::synth {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 9> kTopKeys = {"name",     "description", "model",
                                                      "training", "parallelism", "schedule",
                                                      "cluster",  "encoder",     "data"};
constexpr std::array<std::string_view, 12> kModelKeys = {
    "preset", "layers",     "hidden", "heads",           "kv_heads", "ffn",
    "vocab",  "activation", "norm",   "tied_embeddings", "dropout",  "bias"};
constexpr std::array<std::string_view, 9> kTrainingKeys = {
    "seq_len",   "global_batch", "micro_batch",
    "precision", "recompute",    "distributed_optimizer",
    "attention", "grad_bucket",  "overlap_grad_reduce"};
// Upper bounds of the integers a scenario gives: far beyond any real model or cluster, low
// enough that products of a few of them (tensor sizes, tp*pp*dp) stay within 64 bits.
constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 22;  // hidden, heads, ffn, patch pixels
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 30;    // sequences
constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;  // a million devices
// Elements of one microbatch's largest tensor on one rank: 2^44 (32 TiB in bf16) is beyond
// every device's memory, and keeps a stage's summed bytes within 64 bits.
constexpr double kMaxTensorElements = 17592186044416.0;

constexpr std::array<std::string_view, 5> kParallelKeys = {"tp", "pp", "dp", "sp", "order"};
constexpr std::array<std::string_view, 3> kClusterKeys = {"hardware", "topology", "devices"};

// "gpt3-175b (modified: model.layers=8)" when keys beside `preset` change the preset.
std::string modified_label(const YamlNode& n, const std::string& preset, std::string_view path) {
  std::string changes;
  for (const auto& key : n.keys()) {
    YamlNode v = n.at(key);
    if (key != "preset" && v.is_scalar()) {
      changes += fmt::format("{}{}.{}={}", changes.empty() ? "" : ", ", path, key, v.as_string());
    }
  }
  return changes.empty() ? preset : fmt::format("{} (modified: {})", preset, changes);
}

void read_model_preset(const YamlNode& n, ModelConfig& m) {
  auto names = model_preset_names();
  std::string name = n.as_string();
  auto preset = model_preset(name);
  if (!preset) {
    std::string guess = base::nearest(name, names);
    std::string list;
    for (auto s : names) {
      list += (list.empty() ? "" : ", ") + std::string(s);
    }
    n.fail(fmt::format("unknown model preset '{}'", name),
           guess.empty() ? "presets: " + list
                         : fmt::format("did you mean '{}'? (presets: {})", guess, list));
  }
  m = *preset;
}

// The keys a decoder and an encoder share: depth, width, heads, MLP width (default 4h),
// activation, norm and biases. Depth, width and heads are required unless a preset set them.
struct TransformerKeys {
  std::int64_t& layers;
  std::int64_t& hidden;
  std::int64_t& heads;
  std::int64_t& ffn;
  Activation& activation;
  NormKind& norm;
  bool& bias;
};

void read_transformer_keys(const YamlNode& n, const TransformerKeys& k) {
  auto int_key = [&](std::string_view key, std::int64_t& field) {
    if (auto v = n.find(key)) {
      field = v->as_int(1, key == "layers" ? kMaxLayers : kMaxWidth);
    } else if (field == 0) {
      n.fail(fmt::format("missing required key '{}' (or give a 'preset')", key));
    }
  };
  int_key("layers", k.layers);
  int_key("hidden", k.hidden);
  int_key("heads", k.heads);
  if (auto v = n.find("ffn")) {
    k.ffn = v->as_int(1, kMaxWidth);
  } else if (k.ffn == 0) {
    k.ffn = 4 * k.hidden;
  }
  constexpr std::array<std::string_view, 2> kActs = {"gelu", "swiglu"};
  constexpr std::array<std::string_view, 2> kNorms = {"layernorm", "rmsnorm"};
  if (auto v = n.find("activation")) {
    k.activation = v->as_choice(kActs) == "gelu" ? Activation::kGelu : Activation::kSwiglu;
  }
  if (auto v = n.find("norm")) {
    k.norm = v->as_choice(kNorms) == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  }
  if (auto v = n.find("bias")) {
    k.bias = v->as_bool();
  }
}

void read_model(const YamlNode& n, ModelConfig& m) {
  if (n.is_scalar()) {
    read_model_preset(n, m);
    return;
  }
  n.check_keys(kModelKeys);
  if (auto p = n.find("preset")) {
    read_model_preset(*p, m);
    m.preset = modified_label(n, m.preset, "model");
  }
  read_transformer_keys(n, {m.layers, m.hidden, m.heads, m.ffn, m.activation, m.norm, m.bias});
  if (auto v = n.find("kv_heads")) {
    m.kv_heads = v->as_int(1, kMaxWidth);
  } else if (m.kv_heads == 0) {
    m.kv_heads = m.heads;
  }
  if (auto v = n.find("vocab")) {
    m.vocab = v->as_int(1, kMaxVocab);
  } else if (m.vocab == 0) {
    n.fail("missing required key 'vocab' (or give a 'preset')");
  }
  if (auto v = n.find("tied_embeddings")) {
    m.tied_embeddings = v->as_bool();
  }
  if (auto v = n.find("dropout")) {
    m.dropout = v->as_double();
    if (m.dropout < 0.0 || m.dropout >= 1.0) {
      v->fail(fmt::format("expected a probability in [0, 1), got {}", m.dropout));
    }
  }
  if (m.hidden % m.heads != 0) {
    n.at("heads").fail(fmt::format("heads={} does not divide hidden={}", m.heads, m.hidden));
  }
  if (m.heads % m.kv_heads != 0) {
    (n.has("kv_heads") ? n.at("kv_heads") : n)
        .fail(fmt::format("kv_heads={} does not divide heads={}", m.kv_heads, m.heads));
  }
}

void read_encoder(const YamlNode& n, EncoderConfig& e) {
  constexpr std::array<std::string_view, 11> kKeys = {"preset", "layers",       "hidden",   "heads",
                                                      "ffn",    "activation",   "norm",     "bias",
                                                      "merge",  "patch_pixels", "trainable"};
  n.check_keys(kKeys);
  if (auto p = n.find("preset")) {
    auto preset = encoder_preset(p->as_string());
    if (!preset) {
      auto names = encoder_preset_names();
      std::string guess = base::nearest(p->as_string(), names);
      p->fail(fmt::format("unknown encoder preset '{}'", p->as_string()),
              guess.empty() ? "presets: qwen2-vl-vit" : fmt::format("did you mean '{}'?", guess));
    }
    e = *preset;
  }
  e.present = true;
  read_transformer_keys(n, {e.layers, e.hidden, e.heads, e.ffn, e.activation, e.norm, e.bias});
  if (auto v = n.find("merge")) {
    e.merge = v->as_int(1, 64);
  }
  if (auto v = n.find("patch_pixels")) {
    e.patch_pixels = v->as_int(1, kMaxWidth);
  }
  if (auto v = n.find("trainable")) {
    e.trainable = v->as_bool();
  }
  if (e.hidden % e.heads != 0) {
    n.at(n.has("heads") ? "heads" : "preset")
        .fail(fmt::format("encoder heads={} does not divide hidden={}", e.heads, e.hidden));
  }
}

// A fixed value ("4") or an inclusive range ("[0, 4]").
IntRange read_range(const YamlNode& n, std::int64_t min, std::int64_t max) {
  if (!n.is_seq()) {
    std::int64_t v = n.as_int(min, max);
    return {v, v};
  }
  auto items = n.items();
  if (items.size() != 2) {
    n.fail("expected a value or a range [lo, hi]");
  }
  IntRange r{items[0].as_int(min, max), items[1].as_int(min, max)};
  if (r.hi < r.lo) {
    n.fail(fmt::format("the range [{}, {}] is empty", r.lo, r.hi));
  }
  return r;
}

// "images,tokens_per_image" per line; '#' starts a comment.
std::vector<std::pair<std::int64_t, std::int64_t>> read_samples(const YamlNode& at,
                                                                const std::string& file) {
  std::filesystem::path path = std::filesystem::path(at.file()).parent_path() / file;
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) {  // not a FIFO or /dev/zero: no endless read
    in.open(path);
  }
  if (!in) {
    at.fail(
        fmt::format("cannot read the samples file '{}' (expected a regular file)", path.string()));
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    long long images = -1;
    long long tokens = -1;
    char comma = 0;
    std::istringstream fields(line);
    fields >> images >> comma >> tokens;
    std::string rest;
    fields >> rest;
    if (fields.fail() && !fields.eof()) {
      images = -1;
    }
    if (comma != ',' || images < 0 || tokens < 1 || !rest.empty() || images > 1024 ||
        tokens > (1 << 20)) {
      throw base::InputError(base::SourceLoc{path.string(), no, 1},
                             "expected 'images,tokens_per_image' (0 <= images <= 1024, "
                             "1 <= tokens_per_image <= 1048576), got '" +
                                 line + "'");
    }
    out.emplace_back(images, tokens);
  }
  if (out.empty()) {
    at.fail(fmt::format("the samples file '{}' lists no samples", path.string()));
  }
  return out;
}

void read_data(const YamlNode& n, DataConfig& d) {
  constexpr std::array<std::string_view, 4> kKeys = {"seed", "images_per_sample",
                                                     "tokens_per_image", "samples_file"};
  n.check_keys(kKeys);
  if (auto v = n.find("seed")) {
    d.seed = static_cast<std::uint64_t>(v->as_int(0));
  }
  if (auto v = n.find("samples_file")) {
    if (n.has("images_per_sample") || n.has("tokens_per_image")) {
      v->fail("give either samples_file or images_per_sample/tokens_per_image, not both");
    }
    d.samples_file = v->as_string();
    d.samples = read_samples(*v, d.samples_file);
    return;
  }
  if (auto v = n.find("images_per_sample")) {
    d.images_per_sample = read_range(*v, 0, 1024);
  }
  if (auto v = n.find("tokens_per_image")) {
    d.tokens_per_image = read_range(*v, 1, 1 << 20);
  }
}

void read_training(const YamlNode& n, TrainingConfig& t) {
  reject_unmodelled(n, "training");
  n.check_keys(kTrainingKeys);
  t.seq_len = n.at("seq_len").as_int(1, std::int64_t{1} << 24);
  t.global_batch = n.at("global_batch").as_int(1, kMaxBatch);
  t.micro_batch = n.at("micro_batch").as_int(1, kMaxBatch);
  constexpr std::array<std::string_view, 2> kPrec = {"bf16", "fp16"};
  constexpr std::array<std::string_view, 3> kRecompute = {"none", "selective", "full"};
  constexpr std::array<std::string_view, 2> kAttention = {"flash", "unfused"};
  if (auto v = n.find("precision")) {
    t.precision = v->as_choice(kPrec) == "bf16" ? base::DType::kBF16 : base::DType::kFP16;
  }
  if (auto v = n.find("recompute")) {
    std::string r = v->as_choice(kRecompute);
    t.recompute = r == "none"        ? Recompute::kNone
                  : r == "selective" ? Recompute::kSelective
                                     : Recompute::kFull;
  }
  if (auto v = n.find("distributed_optimizer")) {
    t.distributed_optimizer = v->as_bool();
  }
  if (auto v = n.find("attention")) {
    t.attention =
        v->as_choice(kAttention) == "flash" ? AttentionKernel::kFlash : AttentionKernel::kUnfused;
  }
  if (auto v = n.find("overlap_grad_reduce")) {
    t.overlap_grad_reduce = v->as_bool();
  }
  if (auto v = n.find("grad_bucket")) {
    t.grad_bucket_bytes = v->as_quantity(base::Dimension::kBytes);
  }
}

std::vector<Axis> read_order(const YamlNode& n) {
  constexpr std::array<std::string_view, 6> kOrders = {"tp-dp-pp", "tp-pp-dp", "dp-tp-pp",
                                                       "dp-pp-tp", "pp-tp-dp", "pp-dp-tp"};
  std::string text = n.as_choice(kOrders);
  std::vector<Axis> out;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    std::string_view a = std::string_view(text).substr(i, 2);
    out.push_back(a == "tp" ? Axis::kTP : a == "dp" ? Axis::kDP : Axis::kPP);
  }
  return out;
}

void read_parallel(const YamlNode& n, ParallelConfig& p) {
  reject_unmodelled(n, "parallelism");
  n.check_keys(kParallelKeys);
  p.tp = n.has("tp") ? n.at("tp").as_int(1, kMaxDevices) : 1;
  p.pp = n.has("pp") ? n.at("pp").as_int(1, kMaxDevices) : 1;
  p.dp = 0;  // 0 (absent or `auto`): whatever the devices leave
  if (auto dp = n.find("dp"); dp && !(dp->is_scalar() && dp->as_string() == "auto")) {
    p.dp = dp->as_int(1, kMaxDevices);
  }
  if (auto v = n.find("sp")) {
    p.sp = v->as_bool();
  }
  if (auto v = n.find("order")) {
    p.order = read_order(*v);
  }
}

// The profile file a `hardware:` scalar names: a shipped profile, or a path relative to the
// scenario's folder (or, for older scenarios, to the working directory).
bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

std::string hardware_file(const YamlNode& hw) {
  std::string text = hw.as_string();
  if (looks_like_path(text)) {
    std::string found = hw.find_beside(text);
    if (found.empty()) {
      hw.fail(fmt::format("hardware profile file '{}' does not exist", text),
              fmt::format("a relative path is looked up beside the scenario ('{}')",
                          (std::filesystem::path(hw.file()).parent_path() / text).string()));
    }
    return found;
  }
  auto names = hw::profile_names();
  if (std::find(names.begin(), names.end(), text) == names.end()) {
    std::vector<std::string_view> views(names.begin(), names.end());
    std::string guess = base::nearest(text, views);
    std::string list;
    for (const auto& s : names) {
      list += (list.empty() ? "" : ", ") + s;
    }
    hw.fail(fmt::format("unknown hardware profile '{}'", text),
            guess.empty() ? "profiles: " + list
                          : fmt::format("did you mean '{}'? (profiles: {})", guess, list));
  }
  return hw::profile_file(text, hw.loc());
}

// A shipped name or a path; or a mapping: a whole profile, which is what a `--set` below a
// profile name expands it into.
void read_hardware(const YamlNode& hw, ClusterConfig& c) {
  c.hardware_at = hw.loc();
  if (!hw.is_map()) {
    std::string file = hardware_file(hw);
    c.hardware = looks_like_path(hw.as_string()) ? file : hw.as_string();
    c.profile = hw::load_profile(file, hw.loc());
    return;
  }
  std::string name = hw.has("name") ? hw.at("name").as_string() : "inline";
  c.hardware = hw.file();
  c.profile = hw::profile_from_yaml(hw, name);
  auto changes = hw.overrides_below();
  if (!changes.empty()) {
    c.profile->name = fmt::format("{} (modified: {})", name, fmt::join(changes, ", "));
  }
}

void read_topology(const YamlNode& cluster, ClusterConfig& c) {
  const YamlNode topo = cluster.at("topology");
  c.topology = topology::parse_topology(topo);
  if (topo.is_map() && topo.file() != cluster.file()) {  // a preset or file a --set expanded
    c.topology.where = cluster.key_loc("topology");
    c.topology.source =
        fmt::format("{} (modified: {})", std::filesystem::path(topo.file()).stem().string(),
                    fmt::join(topo.overrides_below(), ", "));
  }
}

void read_cluster(const YamlNode& n, ClusterConfig& c) {
  n.check_keys(kClusterKeys);
  read_hardware(n.at("hardware"), c);
  read_topology(n, c);
  YamlNode dev = n.at("devices");
  c.devices = dev.as_int(1, kMaxDevices);
  c.devices_at = dev.loc();
}

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
    if (cfg.kind != ScheduleKind::kInterleaved) {
      c->fail("only the interleaved skeleton takes this key");
    }
    cfg.chunks = c->as_int(2, kMaxLayers);
  } else if (cfg.kind == ScheduleKind::kInterleaved) {
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
  if (cfg.kind == ScheduleKind::kInterleaved) {
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

void check_divides(const YamlNode& at, std::int64_t d, std::string_view dname, std::int64_t n,
                   std::string_view nname) {
  if (n % d != 0) {
    at.fail(fmt::format("{}={} does not divide {}={}", dname, d, nname, n));
  }
}

// The encoder region and the data mix against the model, the parallelism and the schedule.
void validate_encoder(const YamlNode& root, const Scenario& s) {
  const YamlNode sched = root.at("schedule");
  const auto& e = s.encoder;
  const auto& p = s.parallel;
  if (!e.present) {
    if (s.schedule.encoder != EncoderPlacement::kInline) {
      sched.fail("this schedule places an encoder region, but the scenario has no encoder",
                 "add an 'encoder:' block (for example preset: qwen2-vl-vit)");
    }
    if (root.has("data")) {
      root.at("data").fail("a data mix needs an encoder: the scenario has no 'encoder:' block");
    }
    return;
  }
  const YamlNode enc = root.at("encoder");
  if (s.schedule.kind == ScheduleKind::kDualPipe) {
    (sched.is_map() && sched.has("kind") ? sched.at("kind") : sched)
        .fail(
            "DualPipe's second pipe starts on the last rank; an encoder region is not "
            "supported with it yet",
            "use dualpipev, 1f1b, interleaved or a zero-bubble schedule");
  }
  check_divides(enc, p.tp, "parallelism.tp", e.heads, "encoder.heads");
  check_divides(enc, p.tp, "parallelism.tp", e.ffn, "encoder.ffn");
  if (s.schedule.encoder == EncoderPlacement::kStages) {
    // Point at the value that breaks it: encoder_stages (or the regions' stages) if written.
    YamlNode at = sched;
    if (sched.is_map() && sched.has("encoder_stages")) {
      at = sched.at("encoder_stages");
    } else if (sched.is_map() && sched.has("regions") && sched.at("regions").is_seq() &&
               sched.at("regions").items().front().has("stages")) {
      at = sched.at("regions").items().front().at("stages");
    }
    if (!schedule::builtin_schedules().get(s.schedule.kind).takes_encoder_stages()) {
      (sched.is_map() && sched.has("kind") ? sched.at("kind") : sched)
          .fail(fmt::format("the encoder as its own pipeline stages needs a flat skeleton "
                            "(gpipe, 1f1b or zb-h1), not {}",
                            schedule_name(s.schedule.kind)));
    }
    if (s.schedule.encoder_stages >= p.pp) {
      at.fail(fmt::format("encoder_stages={} leaves no pipeline rank for the LLM (pp={})",
                          s.schedule.encoder_stages, p.pp));
    }
    if (e.layers < s.schedule.encoder_stages || s.model.layers < p.pp - s.schedule.encoder_stages) {
      at.fail(fmt::format("{} encoder layers and {} LLM layers cannot fill {} and {} stages",
                          e.layers, s.model.layers, s.schedule.encoder_stages,
                          p.pp - s.schedule.encoder_stages));
    }
  }
  // The largest sample's LLM tokens: patches per image round up to whole merged tokens
  // (and, with SP, to a multiple of tp), as models::sample_images does.
  const auto& d = s.data;
  const std::int64_t quantum = e.merge * (p.sp ? p.tp : 1);
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
    (root.has("data") ? root.at("data") : enc)
        .fail(fmt::format("a sample with {} images of {} patches needs {} LLM tokens, more than "
                          "training.seq_len={}",
                          images, patches, worst, s.training.seq_len));
  }
}

// One microbatch's largest tensor on one rank, in elements, before tensor parallelism shards
// it: tokens times the widest dimension (the logits, usually), or the unfused attention
// scores. Its bytes, summed over a stage's layers, must stay countable.
void check_tensor_sizes(const YamlNode& training, const Scenario& s) {
  const auto& m = s.model;
  const auto& t = s.training;
  const auto mb = static_cast<double>(t.micro_batch);
  const auto seq = static_cast<double>(t.seq_len);
  double width = static_cast<double>(
      std::max({m.hidden, 2 * m.ffn, (m.heads + 2 * m.kv_heads) * m.head_dim(), m.vocab}));
  if (s.encoder.present) {
    // The encoder sees at most seq_len x merge^2 patches per sequence.
    const auto& e = s.encoder;
    width =
        std::max(width, static_cast<double>(e.merge * e.merge) *
                            static_cast<double>(std::max({e.hidden, 2 * e.ffn, e.patch_pixels})));
  }
  double largest = mb * seq * width;
  if (t.attention == AttentionKernel::kUnfused) {
    largest = std::max(largest, mb * static_cast<double>(m.heads) * seq * seq);
  }
  const double layers = static_cast<double>(m.layers + (s.encoder.present ? s.encoder.layers : 0));
  if (largest * layers > kMaxTensorElements * 256.0 || largest > kMaxTensorElements) {
    training.at("micro_batch")
        .fail(fmt::format("one microbatch's largest tensor would hold {:.3g} elements; Tessera "
                          "counts at most {:.3g} per tensor and {:.3g} over the model's {} layers",
                          largest, kMaxTensorElements, kMaxTensorElements * 256.0,
                          static_cast<std::int64_t>(layers)),
              "use a smaller micro_batch, seq_len or model width");
  }
}

// The cluster's devices fill whole nodes and fit in the topology (topology::Cluster checks
// the same, but can only point at the topology).
void check_nodes(const YamlNode& dev, const Scenario& s) {
  if (!s.cluster.profile) {
    return;
  }
  const auto& topo = s.cluster.topology;
  const std::int64_t per_node =
      topo.devices_per_node > 0 ? topo.devices_per_node : s.cluster.profile->devices_per_node;
  const std::int64_t n = s.cluster.devices;
  if (n > per_node && n % per_node != 0) {
    dev.fail(
        fmt::format("devices={} is not a multiple of the {} devices per node of {}", n, per_node,
                    topo.devices_per_node > 0 ? "topology '" + topo.source + "'"
                                              : "'" + s.cluster.profile->name + "'"),
        "a cluster of more than one node is made of whole nodes");
  }
  const std::int64_t nodes = (n + per_node - 1) / per_node;
  if (topo.max_nodes > 0 && nodes > topo.max_nodes) {
    dev.fail(
        fmt::format("devices={} needs {} nodes of {} devices, but topology '{}' holds at "
                    "most {}",
                    n, nodes, per_node, topo.source, topo.max_nodes));
  }
}

void validate(const YamlNode& root, Scenario& s) {
  check_nodes(root.at("cluster").at("devices"), s);
  const YamlNode par = root.at("parallelism");
  const YamlNode tp_at = par.has("tp") ? par.at("tp") : par;
  const YamlNode pp_at = par.has("pp") ? par.at("pp") : par;
  auto& p = s.parallel;
  const auto& m = s.model;
  check_divides(tp_at, p.tp, "tp", m.heads, "model.heads");
  check_divides(tp_at, p.tp, "tp", m.kv_heads, "model.kv_heads");
  check_divides(tp_at, p.tp, "tp", m.ffn, "model.ffn");
  if (!(s.encoder.present && s.schedule.encoder == EncoderPlacement::kStages)) {
    check_divides(pp_at, p.pp, "pp", m.layers, "model.layers");  // encoder stages: uneven split
  }
  const YamlNode sched = root.at("schedule");
  schedule::Placement place(s.schedule, static_cast<int>(p.pp));
  // Each pipe holds the whole model (DualPipe: two copies), cut into its stages.
  if (m.layers % place.stages_per_pipe() != 0 && s.schedule.encoder != EncoderPlacement::kStages) {
    (sched.is_map() && sched.has("chunks") ? sched.at("chunks") : sched)
        .fail(fmt::format("the schedule's {} pipeline stages do not divide model.layers={}",
                          place.stages_per_pipe(), m.layers));
  }
  if (p.sp && p.tp == 1) {
    par.at("sp").fail("sequence parallelism needs tp > 1");
  }
  if (p.sp) {
    check_divides(tp_at, p.tp, "tp", s.training.seq_len, "training.seq_len");
  }
  const YamlNode dev = root.at("cluster").at("devices");
  const std::int64_t enc_devices = s.encoder_devices();
  const std::int64_t llm_devices = s.cluster.devices - enc_devices;
  if (llm_devices < 1) {
    dev.fail(fmt::format("devices={} leaves none for the LLM after the encoder's {}",
                         s.cluster.devices, enc_devices));
  }
  if (p.dp == 0) {
    if (llm_devices % (p.tp * p.pp) != 0) {
      dev.fail(fmt::format("devices={}{} is not a multiple of tp*pp={}", s.cluster.devices,
                           enc_devices > 0 ? fmt::format(" - {} encoder devices", enc_devices) : "",
                           p.tp * p.pp));
    }
    p.dp = llm_devices / (p.tp * p.pp);
  }
  if (p.tp * p.pp * p.dp != llm_devices) {
    dev.fail(
        fmt::format("tp*pp*dp = {}*{}*{} = {}{} but the cluster has {} devices", p.tp, p.pp, p.dp,
                    p.tp * p.pp * p.dp,
                    enc_devices > 0 ? fmt::format(" plus {} encoder devices", enc_devices) : "",
                    s.cluster.devices));
  }
  const YamlNode tr = root.at("training");
  auto& t = s.training;
  if (t.global_batch % p.dp != 0) {
    tr.at("global_batch")
        .fail(fmt::format("global_batch={} is not divisible by dp={}", t.global_batch, p.dp));
  }
  if ((t.global_batch / p.dp) % t.micro_batch != 0) {
    tr.at("micro_batch")
        .fail(fmt::format("micro_batch={} does not divide global_batch/dp = {}/{} = {}",
                          t.micro_batch, t.global_batch, p.dp, t.global_batch / p.dp));
  }
  check_tensor_sizes(tr, s);
  try {
    schedule::check_schedule(s.schedule, static_cast<int>(p.pp),
                             static_cast<int>(s.microbatches()));
  } catch (const base::InputError& e) {
    root.at("schedule").fail(e.message());
  }
  validate_encoder(root, s);
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlNode root = YamlNode::load_file(path);
  // A preset or schedule name stays when a key below it is set: `--set model.layers=8`; a
  // hardware profile or topology preset is replaced by its file's mapping, which the --set
  // then changes: `--set cluster.topology.oversubscription=4`.
  auto expand_file = [](std::string (*file_of)(const YamlNode&)) {
    return [file_of](const YamlNode& scalar) {
      std::string file = file_of(scalar);
      return YamlNode::Expansion{YamlNode::load_file(file).raw(), file};
    };
  };
  const std::map<std::string, YamlNode::ScalarExpander> expand = {
      {"model", YamlNode::keep_under("preset")},
      {"encoder", YamlNode::keep_under("preset")},
      {"schedule", YamlNode::keep_under("kind")},
      {"cluster.hardware", expand_file(&hardware_file)},
      {"cluster.topology", expand_file(&topology::topology_file)}};
  for (const auto& o : overrides) {
    root.apply_override(o, expand);
  }
  root.check_keys(kTopKeys);
  Scenario s;
  s.file = path;
  s.name =
      root.has("name") ? root.at("name").as_string() : std::filesystem::path(path).stem().string();
  read_model(root.at("model"), s.model);
  read_training(root.at("training"), s.training);
  read_parallel(root.at("parallelism"), s.parallel);
  s.schedule = read_schedule(root.at("schedule"));
  read_cluster(root.at("cluster"), s.cluster);
  if (auto e = root.find("encoder")) {
    read_encoder(*e, s.encoder);
  }
  if (auto d = root.find("data")) {
    read_data(*d, s.data);
  }
  validate(root, s);
  return s;
}

hw::Profile hardware_profile(const Scenario& s) {
  return s.cluster.profile ? *s.cluster.profile
                           : hw::load_profile(s.cluster.hardware, s.cluster.hardware_at);
}

double ModelConfig::parameters() const {
  auto h = static_cast<double>(hidden);
  double qkv = h * static_cast<double>((heads + 2 * kv_heads) * head_dim());
  double ffn_in = h * static_cast<double>(ffn) * (activation == Activation::kSwiglu ? 2.0 : 1.0);
  double layer = qkv + h * h + ffn_in + static_cast<double>(ffn) * h + 2.0 * h;
  if (bias) {
    layer +=
        static_cast<double>((heads + 2 * kv_heads) * head_dim()) + h + ffn_in / h + h + 2.0 * h;
  }
  double embed = static_cast<double>(vocab) * h;
  return static_cast<double>(layers) * layer + embed * (tied_embeddings ? 1.0 : 2.0) + h;
}

std::string_view owner_mode_name(OwnerMode m) {
  switch (m) {
    case OwnerMode::kRoundRobin:
      return "round_robin";
    case OwnerMode::kMin:
      return "min";
    case OwnerMode::kGreedy:
      return "greedy";
  }
  return "?";
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

}  // namespace tessera::synth
