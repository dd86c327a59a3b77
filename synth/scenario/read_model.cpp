// SPDX-License-Identifier: Apache-2.0
// `model:` and `encoder:`: a preset, spelled-out transformer keys, or a preset changed by keys.
#include <fmt/format.h>

#include <array>

#include "synth/scenario/model_presets.h"
#include "synth/scenario/readers.h"
#include "synth/scenario/unmodelled_keys.h"

namespace tessera::synth::reader {

using base::YamlNode;

namespace {

constexpr std::array<std::string_view, 18> kModelKeys = {
    "preset", "layers", "hidden",     "heads",     "kv_heads",        "head_dim",
    "ffn",    "vocab",  "activation", "norm",      "tied_embeddings", "dropout",
    "bias",   "moe",    "mla",        "mtp_depth", "sliding_window",  "full_attention_every"};

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

// `sliding_window` (0: none, undoing a preset's) and `full_attention_every`
// (docs/sliding_window.md).
void read_window(const YamlNode& n, ModelConfig& m) {
  if (auto v = n.find("sliding_window")) {
    m.sliding_window = v->as_int(0, kMaxSeq);
  }
  if (auto v = n.find("full_attention_every")) {
    m.full_attention_every = v->as_int(1, kMaxLayers);
    if (m.sliding_window == 0) {
      v->fail("`full_attention_every` needs `sliding_window` (the other layers' window)",
              "GPT-OSS: sliding_window: 128 and full_attention_every: 2");
    }
  }
}

}  // namespace

void read_model(const YamlNode& n, ModelConfig& m) {
  if (n.is_scalar()) {
    read_model_preset(n, m);
    return;
  }
  reject_unmodelled(n, "model");
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
  if (auto v = n.find("head_dim")) {
    m.head_size = v->as_int(1, kMaxWidth);
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
  if (auto v = n.find("moe")) {
    read_moe(*v, m.moe, m.layers);
  }
  if (auto v = n.find("mla")) {
    read_mla(*v, m.mla);
  }
  read_window(n, m);
  if (auto v = n.find("mtp_depth")) {
    m.mtp_depth = v->as_int(0, 16);
    if (m.mtp_depth > 1) {
      throw base::InputError(v->loc(),
                             "`model.mtp_depth` above 1 (chained prediction modules) is not "
                             "modelled yet",
                             "DeepSeek-V3 trains with one module: mtp_depth: 1");
    }
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
}

}  // namespace tessera::synth::reader
