// SPDX-License-Identifier: Apache-2.0
// Strict scenario loading: every key checked, every cross-field constraint reported at the
// position of the value that breaks it.
#include <fmt/format.h>

#include <array>
#include <filesystem>

#include "hwprofiles/hw_profile.h"
#include "sim/base/yaml_reader.h"
#include "synth/scenario/model_presets.h"
#include "synth/scenario/scenario.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 7> kTopKeys = {
    "name", "description", "model", "training", "parallelism", "schedule", "cluster"};
constexpr std::array<std::string_view, 12> kModelKeys = {
    "preset", "layers",     "hidden", "heads",           "kv_heads", "ffn",
    "vocab",  "activation", "norm",   "tied_embeddings", "dropout",  "bias"};
constexpr std::array<std::string_view, 9> kTrainingKeys = {
    "seq_len",   "global_batch", "micro_batch",
    "precision", "recompute",    "distributed_optimizer",
    "attention", "grad_bucket",  "overlap_grad_reduce"};
constexpr std::array<std::string_view, 5> kParallelKeys = {"tp", "pp", "dp", "sp", "order"};
constexpr std::array<std::string_view, 3> kClusterKeys = {"hardware", "topology", "devices"};

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

void read_model(const YamlNode& n, ModelConfig& m) {
  if (n.is_scalar()) {
    read_model_preset(n, m);
    return;
  }
  n.check_keys(kModelKeys);
  if (auto p = n.find("preset")) {
    read_model_preset(*p, m);
  }
  auto int_key = [&](std::string_view key, std::int64_t& field) {
    if (auto v = n.find(key)) {
      field = v->as_int(1);
    } else if (field == 0) {
      n.fail(fmt::format("missing required key '{}' (or give a 'preset')", key));
    }
  };
  int_key("layers", m.layers);
  int_key("hidden", m.hidden);
  int_key("heads", m.heads);
  if (auto v = n.find("kv_heads")) {
    m.kv_heads = v->as_int(1);
  } else if (m.kv_heads == 0) {
    m.kv_heads = m.heads;
  }
  if (auto v = n.find("ffn")) {
    m.ffn = v->as_int(1);
  } else if (m.ffn == 0) {
    m.ffn = 4 * m.hidden;
  }
  int_key("vocab", m.vocab);
  constexpr std::array<std::string_view, 2> kActs = {"gelu", "swiglu"};
  constexpr std::array<std::string_view, 2> kNorms = {"layernorm", "rmsnorm"};
  if (auto v = n.find("activation")) {
    m.activation = v->as_choice(kActs) == "gelu" ? Activation::kGelu : Activation::kSwiglu;
  }
  if (auto v = n.find("norm")) {
    m.norm = v->as_choice(kNorms) == "layernorm" ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  }
  if (auto v = n.find("tied_embeddings")) {
    m.tied_embeddings = v->as_bool();
  }
  if (auto v = n.find("bias")) {
    m.bias = v->as_bool();
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

void read_training(const YamlNode& n, TrainingConfig& t) {
  n.check_keys(kTrainingKeys);
  t.seq_len = n.at("seq_len").as_int(1, std::int64_t{1} << 24);
  t.global_batch = n.at("global_batch").as_int(1);
  t.micro_batch = n.at("micro_batch").as_int(1);
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
  n.check_keys(kParallelKeys);
  p.tp = n.has("tp") ? n.at("tp").as_int(1) : 1;
  p.pp = n.has("pp") ? n.at("pp").as_int(1) : 1;
  p.dp = n.has("dp") ? n.at("dp").as_int(1) : 0;  // 0: whatever the devices leave
  if (auto v = n.find("sp")) {
    p.sp = v->as_bool();
  }
  if (auto v = n.find("order")) {
    p.order = read_order(*v);
  }
}

void read_cluster(const YamlNode& n, ClusterConfig& c) {
  n.check_keys(kClusterKeys);
  YamlNode hw = n.at("hardware");
  c.hardware = hw.as_string();
  c.hardware_at = hw.loc();
  auto names = hw::profile_names();
  bool is_path = c.hardware.find('/') != std::string::npos || c.hardware.ends_with(".yaml");
  if (is_path && !std::filesystem::exists(c.hardware)) {
    hw.fail(fmt::format("hardware profile file '{}' does not exist", c.hardware));
  }
  if (!is_path && std::find(names.begin(), names.end(), c.hardware) == names.end()) {
    std::vector<std::string_view> views(names.begin(), names.end());
    std::string guess = base::nearest(c.hardware, views);
    std::string list;
    for (const auto& s : names) {
      list += (list.empty() ? "" : ", ") + s;
    }
    hw.fail(fmt::format("unknown hardware profile '{}'", c.hardware),
            guess.empty() ? "profiles: " + list
                          : fmt::format("did you mean '{}'? (profiles: {})", guess, list));
  }
  c.topology = topology::parse_topology(n.at("topology"));
  YamlNode dev = n.at("devices");
  c.devices = dev.as_int(1, 1 << 20);  // a million devices: beyond that nothing fits
  c.devices_at = dev.loc();
}

ScheduleConfig read_schedule(const YamlNode& n) {
  constexpr std::array<std::string_view, 7> kSchedules = {
      "gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "dualpipev", "dualpipe"};
  constexpr std::array<std::string_view, 3> kKeys = {"kind", "chunks", "group"};
  ScheduleConfig cfg;
  const YamlNode kind = n.is_map() ? n.at("kind") : n;
  if (n.is_map()) {
    n.check_keys(kKeys);
  }
  std::string k = kind.as_choice(kSchedules);
  cfg.kind = k == "gpipe"       ? ScheduleKind::kGpipe
             : k == "1f1b"      ? ScheduleKind::k1F1B
             : k == "zb-h1"     ? ScheduleKind::kZbH1
             : k == "zb-h2"     ? ScheduleKind::kZbH2
             : k == "dualpipev" ? ScheduleKind::kDualPipeV
             : k == "dualpipe"  ? ScheduleKind::kDualPipe
                                : ScheduleKind::kInterleaved;
  if (cfg.kind == ScheduleKind::kInterleaved) {
    if (!n.is_map()) {
      n.fail("the interleaved schedule needs its number of model chunks per rank",
             "write schedule: {kind: interleaved, chunks: 2}");
    }
    cfg.chunks = n.at("chunks").as_int(2);
    if (auto g = n.find("group")) {
      cfg.group = g->as_int(1);
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

void validate(const YamlNode& root, Scenario& s) {
  const YamlNode par = root.at("parallelism");
  const YamlNode tp_at = par.has("tp") ? par.at("tp") : par;
  const YamlNode pp_at = par.has("pp") ? par.at("pp") : par;
  auto& p = s.parallel;
  const auto& m = s.model;
  check_divides(tp_at, p.tp, "tp", m.heads, "model.heads");
  check_divides(tp_at, p.tp, "tp", m.kv_heads, "model.kv_heads");
  check_divides(tp_at, p.tp, "tp", m.ffn, "model.ffn");
  check_divides(pp_at, p.pp, "pp", m.layers, "model.layers");
  const YamlNode sched = root.at("schedule");
  schedule::Placement place(s.schedule, static_cast<int>(p.pp));
  // Each pipe holds the whole model (DualPipe: two copies), cut into its stages.
  if (m.layers % place.stages_per_pipe() != 0) {
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
  if (p.dp == 0) {
    if (s.cluster.devices % (p.tp * p.pp) != 0) {
      dev.fail(
          fmt::format("devices={} is not a multiple of tp*pp={}", s.cluster.devices, p.tp * p.pp));
    }
    p.dp = s.cluster.devices / (p.tp * p.pp);
  }
  if (p.tp * p.pp * p.dp != s.cluster.devices) {
    dev.fail(fmt::format("tp*pp*dp = {}*{}*{} = {} but the cluster has {} devices", p.tp, p.pp,
                         p.dp, p.tp * p.pp * p.dp, s.cluster.devices));
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
  try {
    schedule::check_schedule(s.schedule, static_cast<int>(p.pp),
                             static_cast<int>(s.microbatches()));
  } catch (const base::InputError& e) {
    root.at("schedule").fail(e.message());
  }
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlNode root = YamlNode::load_file(path);
  for (const auto& o : overrides) {
    root.apply_override(o);
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
  validate(root, s);
  return s;
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

std::string_view schedule_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::kGpipe:
      return "gpipe";
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
    case ScheduleKind::kZbH1:
      return "zb-h1";
    case ScheduleKind::kZbH2:
      return "zb-h2";
    case ScheduleKind::kDualPipeV:
      return "dualpipev";
    case ScheduleKind::kDualPipe:
      return "dualpipe";
  }
  return "?";
}

std::string schedule_label(const ScheduleConfig& cfg) {
  if (cfg.kind == ScheduleKind::kInterleaved) {
    return fmt::format("interleaved (v={})", cfg.chunks);
  }
  return std::string(schedule_name(cfg.kind));
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
