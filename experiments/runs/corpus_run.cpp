// SPDX-License-Identifier: Apache-2.0
// One case of a runs file in the corpus schema -> a Run: its source, framework, hardware,
// measurement and scenario (docs/runs.md).
#include <fmt/format.h>

#include <array>

#include "experiments/runs/translate.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

std::string source_of(const YamlNode& c) {
  auto s = c.find("source");
  if (!s) {
    return "unknown";
  }
  std::string ref = s->is_map() ? (s->has("ref") ? text_of(s->at("ref")) : "") : text_of(*s);
  ref = ref.substr(0, ref.find(' '));
  return ref.substr(0, ref.find('@'));
}

// torch.compile: the training section's `compile`, or, where it says nothing, the title of the
// source's table ("FSDP + CP + torch.compile + Float8").
bool torch_compile(const YamlNode& c) {
  if (auto k = c.at("training").find("compile")) {
    return lenient_bool(*k).value_or(false);
  }
  const auto s = c.find("source");
  return s && s->is_map() && s->has("table") && contains(text_of(s->at("table")), "compile");
}

Framework framework_of(const YamlNode& c, const std::string& source, Translation& t) {
  std::string text = source;
  if (auto f = c.find("framework")) {
    text = text_of(*f);
  }
  if (contains(text, "automodel")) {
    return Framework::kAutomodel;
  }
  if (contains(text, "torchtitan")) {
    return Framework::kTorchTitan;
  }
  if (contains(text, "llm-foundry") || contains(text, "composer")) {
    return Framework::kComposer;
  }
  if (!contains(text, "megatron") && !contains(text, "nemo")) {
    t.note("framework not known from the source: Megatron-Core's defaults");
  }
  return Framework::kMegatron;
}

// The measurement, most direct first: a step time, tokens/s per GPU, model TFLOP/s per GPU,
// then the values the collector derived.
Measurement measurement_of(const YamlNode& c) {
  struct Field {
    std::string_view section, key;
    Measurement::Kind kind;
    double scale;
  };
  using K = Measurement::Kind;
  constexpr std::array<Field, 8> kFields = {{
      {"measured", "step_time_s", K::kStepTime, 1.0},
      {"measured", "step_time_ms", K::kStepTime, 1e-3},
      {"measured", "tokens_per_s_per_gpu", K::kTokensPerSecond, 1.0},
      {"measured", "model_tflops_per_gpu", K::kModelTflops, 1.0},
      {"measured", "tflops_per_gpu_with_cp", K::kModelTflops, 1.0},
      {"derived", "step_time_s", K::kStepTime, 1.0},
      {"derived", "tokens_per_s_per_gpu", K::kTokensPerSecond, 1.0},
      {"derived", "model_tflops_per_gpu", K::kModelTflops, 1.0},
  }};
  const YamlNode measured = c.at("measured");
  measured.expect_map();
  // A table of rows (one configuration varied): its first row, the baseline.
  std::optional<YamlNode> first_row;
  if (auto rows = measured.find("rows"); rows && rows->is_seq() && !rows->items().empty()) {
    first_row = rows->items().front();
  }
  for (const Field& f : kFields) {
    auto section = f.section == "measured" && first_row ? first_row : c.find(f.section);
    auto v = section && section->is_map() ? section->find(f.key) : std::nullopt;
    if (!v) {
      continue;
    }
    if (auto x = lenient_number(*v)) {
      const bool row = f.section == "measured" && first_row;
      return {f.kind, *x * f.scale,
              fmt::format("{}.{}", row ? "measured.rows[0]" : f.section, f.key), v->loc()};
    }
  }
  measured.fail("the run has no measurement Tessera can compare",
                "give measured.step_time_s, tokens_per_s_per_gpu or model_tflops_per_gpu");
}

}  // namespace

std::int64_t translate_cluster(const YamlNode& cl, Translation& t) {
  cl.expect_map();
  std::string profile;
  const YamlNode hw = cl.has("profile") ? cl.at("profile") : cl.at("hardware");
  if (cl.has("profile")) {
    profile = text_of(hw);
    (void)hw::profile_file(profile, hw.loc());  // an unknown name is an error here
  } else {
    profile = hw::profile_for_device(text_of(hw));
    if (profile.empty()) {
      t.cannot(hw, fmt::format("no hardware profile matches '{}'", text_of(hw)));
    }
  }
  const YamlNode gpus = cl.at("gpus");
  const std::int64_t devices = lenient_int(gpus, 1, std::int64_t{1} << 20).value_or(0);
  if (devices == 0) {
    gpus.fail("expected the number of GPUs the run used");
  }
  t.set("cluster.devices", devices, gpus);
  if (profile.empty()) {
    return devices;
  }
  t.hardware = profile;
  t.set("cluster.hardware", quoted(profile), hw);
  // "500 W power cap": the cluster's power limit.
  const std::string text = text_of(hw);
  if (const auto at = lower(text).find(" w power cap"); at != std::string::npos) {
    const auto start = text.find_last_not_of("0123456789", at - 1) + 1;
    if (start < at) {
      t.set("cluster.power_limit", quoted(text.substr(start, at - start) + " W"), hw);
    }
  }
  std::string topology = cl.has("topology") ? text_of(cl.at("topology")) : "";
  if (topology.empty()) {
    topology = hw::load_profile(profile, hw.loc()).topology;
  }
  if (topology.empty()) {
    hw.fail(fmt::format("profile '{}' names no topology", profile), "give cluster.topology");
  }
  t.set("cluster.topology", quoted(topology), cl.has("topology") ? cl.at("topology") : hw);
  return devices;
}

// The run's own arithmetic: its parallel sizes use every GPU it names.
void check_devices(const YamlNode& c, const Translation& t, std::int64_t devices) {
  const std::int64_t used = t.tp * t.pp * t.cp * t.dp;
  if (used != devices) {
    c.at("cluster").at("gpus").fail(
        fmt::format("the run's tp x pp x cp x dp = {} x {} x {} x {} = {} GPUs, but it names {}",
                    t.tp, t.pp, t.cp, t.dp, used, devices));
  }
}

// The scenario, loaded: a run the loader rejects keeps the loader's reason, at the place in
// the runs file that made the offending key.
void load(Run& run, const ScenarioText& text, const std::string& name) {
  auto loaded = text.load(name);
  if (auto* r = std::get_if<Rejection>(&loaded)) {
    run.skip = r->hint.empty() ? r->message : fmt::format("{} ({})", r->message, r->hint);
    run.skip_at = r->at.file.empty() ? run.at : r->at;
    return;
  }
  run.scenario = std::move(std::get<synth::Scenario>(loaded));
}

// A case that measured TorchTitan's plain and asynchronous TP side by side
// (`tokens_per_s_per_gpu_vanilla_tp`, `..._async_tp`) is two runs.
struct Variant {
  std::string suffix;
  std::optional<bool> async_tp;
  std::string_view field;  // "": the case's own measurement
};

Run translate_variant(const YamlNode& c, const std::optional<YamlNode>& models,
                      const std::string& path, const Variant& variant) {
  Run run;
  run.id = text_of(c.at("id")) + variant.suffix;
  run.at = c.loc();
  run.source = source_of(c);
  if (variant.field.empty()) {
    run.measured = measurement_of(c);
  } else {
    const YamlNode v = c.at("measured").at(variant.field);
    run.measured = {Measurement::Kind::kTokensPerSecond, lenient_number(v).value_or(0.0),
                    fmt::format("measured.{}", variant.field), v.loc()};
  }
  Translation t;
  t.async_tp = variant.async_tp;
  t.framework = framework_of(c, run.source, t);
  t.megatron_bridge = contains(run.source, "megatron-bridge");
  t.text.set("name", quoted(run.id), run.at);
  YamlNode model = c.at("model");
  if (model.is_scalar()) {
    const std::string key = text_of(model);
    if (!models || !models->has(key)) {
      model.fail(fmt::format("no model '{}' under the file's `models:`", key));
    }
    model = models->at(key);
  }
  translate_model(model, c, t);
  t.compiled = torch_compile(c);
  translate_training(c.at("training"), t);
  translate_parallelism(c.at("parallelism"), c.at("training"), model.has("moe"), t);
  const std::int64_t devices = translate_cluster(c.at("cluster"), t);
  if (t.skip.empty()) {
    check_devices(c, t, devices);
  }
  run.hardware = t.hardware;
  run.precision = t.precision_group;
  run.notes = std::move(t.notes);
  run.skip = std::move(t.skip);
  run.skip_at = t.skip_at;
  run.scenario_text = t.text.render();
  if (run.skip.empty()) {
    load(run, t.text, fmt::format("{}#{}", path, run.id));
  }
  return run;
}

std::vector<Run> translate_case(const YamlNode& c, const std::optional<YamlNode>& models,
                                const std::string& path) {
  c.expect_map();
  const YamlNode m = c.at("measured");
  if (m.is_map() && m.has("tokens_per_s_per_gpu_vanilla_tp") &&
      m.has("tokens_per_s_per_gpu_async_tp")) {
    return {
        translate_variant(c, models, path, {"", false, "tokens_per_s_per_gpu_vanilla_tp"}),
        translate_variant(c, models, path, {"+async-tp", true, "tokens_per_s_per_gpu_async_tp"})};
  }
  return {translate_variant(c, models, path, {})};
}

}  // namespace tessera::experiments::runs
