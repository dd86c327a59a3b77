// SPDX-License-Identifier: Apache-2.0
// Turning one entry of a runs file (the corpus schema, tests/validation/runs/README.md) into a
// scenario: the readers of its sections, sharing one Translation. Internal to experiments/runs;
// the rules are docs/runs.md's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/yaml_reader.h"
#include "experiments/runs/runs_file.h"
#include "experiments/runs/scenario_text.h"

namespace tessera::experiments::runs {

// The framework a run used, from its source (or its `framework:` key): it decides the
// defaults a published table leaves unsaid (docs/runs.md §3), never a factor.
enum class Framework : unsigned char { kMegatron, kTorchTitan, kComposer, kAutomodel };

// The largest batch (sequences) a runs file may state.
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 30;

// One run as it is being translated.
struct Translation {
  ScenarioText text;
  std::vector<std::string> notes;  // what was assumed, approximated or not read
  std::string skip;                // non-empty: why the run cannot be simulated
  base::SourceLoc skip_at;
  Framework framework = Framework::kMegatron;
  std::string precision_group = "bf16";  // bf16, fp8, mxfp8
  std::string hardware;                  // the profile, once matched
  std::int64_t tp = 1;                   // the parallel sizes, once read
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::optional<bool> async_tp;  // a variant's TorchTitan async TP, over the case's key
  bool compiled = false;         // torch.compile: training.compile, or the source's table says so
  bool megatron_bridge = false;  // Megatron-Bridge: its model providers' defaults apply
  std::int64_t layers = 0;       // the model's decoder layers and MTP modules, once read
  std::int64_t mtp = 0;

  void set(const std::string& path, const std::string& value, const base::YamlNode& from) {
    text.set(path, value, from.loc());
  }
  void set(const std::string& path, std::int64_t value, const base::YamlNode& from) {
    text.set(path, std::to_string(value), from.loc());
  }
  // The first reason the run cannot be simulated wins.
  void cannot(const base::YamlNode& at, std::string why) {
    if (skip.empty()) {
      skip = std::move(why);
      skip_at = at.loc();
    }
  }
  void note(std::string what) { notes.push_back(std::move(what)); }
};

// Free text helpers.
[[nodiscard]] std::string lower(std::string_view text);
[[nodiscard]] bool contains(std::string_view text, std::string_view word);  // case-insensitive
// The text of a scalar (numbers too); "" for a null node.
[[nodiscard]] std::string text_of(const base::YamlNode& n);
// Whether a value says it is not known: null, "not stated", "'-' in table", "n/a", "?",
// "[U] not in table" (the collector's flag with no value before it).
[[nodiscard]] bool unknown(const base::YamlNode& n);
// An integer in [min, max]: a number, or text that starts with one and annotates it
// ("8192 [U: default toml]"); nullopt when the value says it is unknown. Anything else is an
// error at the value.
[[nodiscard]] std::optional<std::int64_t> lenient_int(const base::YamlNode& n, std::int64_t min,
                                                      std::int64_t max);
// The same for a positive number.
[[nodiscard]] std::optional<double> lenient_number(const base::YamlNode& n);
// A boolean: true/false, or text that starts with one of them; nullopt when unknown.
[[nodiscard]] std::optional<bool> lenient_bool(const base::YamlNode& n);

// The sections. `model` is the run's model node (a mapping, already resolved from `models:`).
void translate_model(const base::YamlNode& model, const base::YamlNode& run, Translation& t);
void translate_training(const base::YamlNode& training, Translation& t);
// `moe`: whether the model has experts (the expert-parallel sizes are read then).
void translate_parallelism(const base::YamlNode& parallelism, const base::YamlNode& training,
                           bool moe, Translation& t);
// `cluster`; returns the devices.
std::int64_t translate_cluster(const base::YamlNode& cluster, Translation& t);

// `models` is the file's `models:` section, `path` the file (scenario paths
// are looked up beside it).
// A case is one run, or two where it measured two variants side by side.
std::vector<Run> translate_case(const base::YamlNode& c,
                                const std::optional<base::YamlNode>& models,
                                const std::string& path);

}  // namespace tessera::experiments::runs
