// SPDX-License-Identifier: Apache-2.0
// A run's `model` (a `models:` entry or inline) -> the scenario's `model:` (docs/runs.md §2).
#include <fmt/format.h>

#include <array>
#include <cstdio>

#include "experiments/runs/translate.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

constexpr std::int64_t kMaxWidth = std::int64_t{1} << 22;

// Keys a model entry may carry that only document it.
bool documentation(const std::string& key) {
  return key == "name" || key == "dims_source" || key.ends_with("_note") ||
         key.ends_with("_source") || key == "notes";
}

void copy_int(const YamlNode& m, std::string_view key, const std::string& to, Translation& t,
              bool required) {
  auto v = m.find(key);
  if (!v) {
    if (required) {
      m.fail(fmt::format("the model needs '{}'", key));
    }
    return;
  }
  if (auto x = lenient_int(*v, 1, kMaxWidth)) {
    t.set(to, *x, *v);
  } else if (required) {
    t.cannot(*v, fmt::format("model.{} is not stated", key));
  }
}

// Activation, norm and biases: Megatron's names, with the defaults of each family.
void translate_mlp_style(const YamlNode& m, Translation& t) {
  const YamlNode act = m.has("activation") ? m.at("activation") : m;
  const std::string a = m.has("activation") ? text_of(act) : "swiglu";
  if (!m.has("activation")) {
    t.note("activation not given: SwiGLU");
  }
  bool gelu = false;
  if (contains(a, "swiglu")) {
    t.set("model.activation", "swiglu", act);
  } else if (contains(a, "relu")) {
    t.set("model.activation", "gelu", act);
    t.note("squared ReLU modelled as GELU (a non-gated MLP: the same GEMMs)");
  } else if (contains(a, "gelu")) {
    t.set("model.activation", "gelu", act);
    gelu = true;
  } else {
    act.fail(fmt::format("expected an activation (swiglu, gelu, squared-relu), got '{}'", a));
  }
  bool layernorm = !contains(a, "swiglu");
  if (auto n = m.find("norm")) {
    const std::string norm = text_of(*n);
    if (!contains(norm, "rms") && !contains(norm, "layer")) {
      n->fail(fmt::format("expected a norm (rmsnorm, layernorm), got '{}'", norm));
    }
    layernorm = contains(norm, "layer");
  }
  t.set("model.norm", layernorm ? "layernorm" : "rmsnorm", m.has("norm") ? m.at("norm") : act);
  bool bias = gelu && layernorm && !contains(a, "no bias");
  if (auto b = m.find("bias")) {
    bias = lenient_bool(*b).value_or(bias);
  }
  t.set("model.bias", bias ? "true" : "false", m.has("bias") ? m.at("bias") : act);
  if (contains(a, "alibi")) {
    t.note("ALiBi attention bias not modelled (an elementwise add in the attention kernel)");
  }
}

void translate_mla(const YamlNode& a, Translation& t) {
  for (std::string_view key :
       {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
    if (auto v = a.find(key)) {
      if (auto x = lenient_int(*v, 0, kMaxWidth)) {
        t.set(fmt::format("model.mla.{}", key), *x, *v);
      }
    } else if (key != "q_lora_rank") {
      a.fail(fmt::format("multi-head latent attention needs '{}'", key));
    }
  }
}

// Sliding-window attention as the corpus writes it: "alternating sliding-window(128)/full
// attention, attention sinks" (GPT-OSS: every other layer attends to the whole sequence).
void translate_window(const YamlNode& note, Translation& t) {
  const std::string text = text_of(note);
  const std::size_t at = text.find("sliding-window(");
  long long window = 0;
  if (at == std::string::npos ||
      std::sscanf(text.c_str() + at, "sliding-window(%lld)", &window) != 1 || window < 1) {
    t.cannot(note, "sliding-window attention without its window (sliding-window(N) tokens)");
    return;
  }
  t.set("model.sliding_window", static_cast<std::int64_t>(window), note);
  if (contains(text, "alternating")) {
    t.set("model.full_attention_every", std::int64_t{2}, note);
  }
  if (contains(text, "sink")) {
    t.note("attention sinks not modelled (one learned logit per head in each softmax)");
  }
}

void translate_attention(const YamlNode& m, Translation& t) {
  if (auto a = m.find("attention")) {
    a->expect_map();
    const std::string type = a->has("type") ? text_of(a->at("type")) : "";
    if (!contains(type, "mla")) {
      a->at("type").fail(fmt::format("expected attention type MLA, got '{}'", type),
                         "a plain attention needs no `attention:` block");
    }
    translate_mla(*a, t);
  }
  if (auto note = m.find("attention_note"); note && contains(text_of(*note), "sliding")) {
    translate_window(*note, t);
  }
  if (auto q = m.find("qk_layernorm"); q && lenient_bool(*q).value_or(false)) {
    t.note("QK layernorm not modelled (two small norms per layer)");
  }
}

// The router's score and its group limit, as the corpus writes them: "sigmoid score, ...,
// group-limited (8 groups, top-4 groups)".
void translate_router(const YamlNode& r, Translation& t) {
  const std::string text = text_of(r);
  if (contains(text, "sigmoid")) {
    t.set("model.moe.router", "sigmoid", r);
  }
  const std::size_t at = text.find("group-limited (");
  long long groups = 0;
  long long top = 0;
  if (at != std::string::npos &&
      std::sscanf(text.c_str() + at, "group-limited (%lld groups, top-%lld", &groups, &top) == 2) {
    t.set("model.moe.router_groups", static_cast<std::int64_t>(groups), r);
    t.set("model.moe.router_group_topk", static_cast<std::int64_t>(top), r);
  }
}

void translate_moe(const YamlNode& m, Translation& t) {
  const YamlNode moe = m.at("moe");
  moe.expect_map();
  copy_int(moe, "routed_experts", "model.moe.experts", t, true);
  copy_int(moe, "top_k", "model.moe.top_k", t, true);
  copy_int(moe, "expert_ffn", "model.moe.expert_ffn", t, true);
  if (auto v = moe.find("shared_experts")) {
    if (auto x = lenient_int(*v, 0, 1024)) {
      t.set("model.moe.shared_experts", *x, *v);
    }
  }
  copy_int(moe, "shared_expert_ffn", "model.moe.shared_expert_ffn", t, false);
  if (auto v = m.find("first_dense_layers")) {
    if (auto x = lenient_int(*v, 0, 1 << 16)) {
      t.set("model.moe.first_dense_layers", *x, *v);
    }
  }
  if (auto r = moe.find("router")) {
    translate_router(*r, t);
  }
  if (auto v = moe.find("latent_size")) {
    t.cannot(*v, "LatentMoE (experts in a smaller latent space) is not modelled yet");
  }
  if (auto v = moe.find("moe_every_layer"); v && !lenient_bool(*v).value_or(true)) {
    t.cannot(*v, "MoE layers interleaved with other kinds are not modelled yet");
  }
}

// Multi-token prediction is trained when the run says so: its capabilities list `mtp`, or
// its pipeline layout places an `m`.
void translate_mtp(const YamlNode& m, const YamlNode& run, Translation& t) {
  std::optional<YamlNode> depth = m.find("mtp_depth");
  if (auto block = m.find("mtp")) {
    depth = block->at("depth");
  }
  bool trained = false;
  if (auto caps = run.find("capabilities"); caps && caps->is_seq()) {
    for (const YamlNode& c : caps->items()) {
      trained = trained || text_of(c) == "mtp";
    }
  }
  if (auto l = run.at("training").find("pp_layout")) {
    const std::string layout = text_of(*l);
    trained = trained || layout.substr(0, layout.find(' ')).find('m') != std::string::npos;
  }
  if (!depth || !trained) {
    return;
  }
  auto d = lenient_int(*depth, 0, 16);
  if (d && *d > 1) {
    t.cannot(*depth, fmt::format("{} chained multi-token prediction modules are not modelled "
                                 "yet (one is)",
                                 *d));
  } else if (d) {
    t.set("model.mtp_depth", *d, *depth);
    t.mtp = *d;
  }
}

}  // namespace

void translate_model(const YamlNode& m, const YamlNode& run, Translation& t) {
  m.expect_map();
  if (auto h = m.find("hybrid")) {
    t.cannot(*h, "hybrid models (Mamba-2 layers, model.hybrid) are not modelled yet");
  }
  copy_int(m, "layers", "model.layers", t, true);
  t.layers = lenient_int(m.at("layers"), 1, 1 << 16).value_or(0);
  copy_int(m, "hidden", "model.hidden", t, true);
  copy_int(m, "heads", "model.heads", t, true);
  copy_int(m, "kv_heads", "model.kv_heads", t, false);
  copy_int(m, "head_dim", "model.head_dim", t, false);
  copy_int(m, m.has("dense_ffn") ? "dense_ffn" : "ffn", "model.ffn", t, false);
  copy_int(m, "vocab", "model.vocab", t, true);
  translate_mlp_style(m, t);
  translate_attention(m, t);
  if (m.has("moe")) {
    translate_moe(m, t);
  }
  translate_mtp(m, run, t);
  if (auto v = m.find("tied_embeddings")) {
    t.set("model.tied_embeddings", lenient_bool(*v).value_or(false) ? "true" : "false", *v);
  }
  constexpr std::array<std::string_view, 21> kRead = {"hybrid",
                                                      "layers",
                                                      "hidden",
                                                      "heads",
                                                      "kv_heads",
                                                      "head_dim",
                                                      "dense_ffn",
                                                      "ffn",
                                                      "vocab",
                                                      "activation",
                                                      "norm",
                                                      "bias",
                                                      "attention",
                                                      "moe",
                                                      "mtp_depth",
                                                      "mtp",
                                                      "tied_embeddings",
                                                      "qk_layernorm",
                                                      "first_dense_layers",
                                                      "mamba",
                                                      "attention_note"};
  for (const std::string& key : m.keys()) {
    if (!documentation(key) &&
        std::find(kRead.begin(), kRead.end(), std::string_view(key)) == kRead.end()) {
      t.note(fmt::format("not read: model.{}", key));
    }
  }
}

}  // namespace tessera::experiments::runs
