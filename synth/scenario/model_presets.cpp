// SPDX-License-Identifier: Apache-2.0
#include "synth/scenario/model_presets.h"

#include <array>

namespace tessera::synth {

namespace {

struct Preset {
  std::string_view name;
  ModelConfig config;
};

ModelConfig gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
  // GPT-3 family (Brown et al. 2020, Table 2.1), as trained by Megatron-LM: learned
  // positions are ignored (no FLOPs), vocab padded to 51200, FFN 4h, LayerNorm, GeLU, bias,
  // dropout 0.1, tied input/output embeddings.
  ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn = 4 * hidden;
  m.vocab = 51200;
  m.activation = Activation::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.tied_embeddings = true;
  m.dropout = 0.1;
  m.bias = true;
  return m;
}

ModelConfig llama(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                  std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab) {
  // Llama 2 (Touvron et al. 2023) / Llama 3 (Dubey et al. 2024): RMSNorm, SwiGLU, no bias,
  // no dropout, untied embeddings, grouped-query attention.
  ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = ffn;
  m.vocab = vocab;
  m.activation = Activation::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.tied_embeddings = false;
  m.dropout = 0.0;
  m.bias = false;
  return m;
}

// A Llama-style decoder whose every layer's MLP is `experts` routed experts of width
// `expert_ffn`, `top_k` per token, with a softmax router and no shared experts (Mixtral,
// Qwen3-MoE). `head_dim` 0: hidden / heads.
ModelConfig moe(ModelConfig m, std::int64_t experts, std::int64_t top_k, std::int64_t expert_ffn,
                std::int64_t head_dim = 0) {
  m.head_size = head_dim;
  m.moe.experts = experts;
  m.moe.top_k = top_k;
  m.moe.expert_ffn = expert_ffn;
  return m;
}

// DeepSeek's MoE decoders (DeepSeek-V2, arXiv:2405.04434; DeepSeek-V3, arXiv:2412.19437, and
// their released configurations): latent attention, `first_dense` leading dense layers of
// width `ffn`, then MoE layers with `shared` shared experts beside the routed ones.
ModelConfig deepseek(ModelConfig m, MlaConfig mla, std::int64_t first_dense, std::int64_t experts,
                     std::int64_t top_k, std::int64_t expert_ffn, std::int64_t shared,
                     RouterScore router) {
  m = moe(m, experts, top_k, expert_ffn);
  m.mla = mla;
  m.moe.first_dense_layers = first_dense;
  m.moe.shared_experts = shared;
  m.moe.shared_expert_ffn = expert_ffn;
  m.moe.router = router;
  return m;
}

// Group-limited routing: a token's experts from its best `top_groups` of `groups` groups.
ModelConfig node_limited(ModelConfig m, std::int64_t groups, std::int64_t top_groups) {
  m.moe.router_groups = groups;
  m.moe.router_group_topk = top_groups;
  return m;
}

// Sliding-window attention (docs/sliding_window.md): windows of `window` tokens, every
// `full_every`-th layer attending to the whole sequence.
ModelConfig windowed(ModelConfig m, std::int64_t window, std::int64_t full_every) {
  m.sliding_window = window;
  m.full_attention_every = full_every;
  return m;
}

ModelConfig mtp(ModelConfig m, std::int64_t depth) {
  m.mtp_depth = depth;
  return m;
}

const std::array<Preset, 18>& presets() {
  static const std::array<Preset, 18> kPresets = {
      Preset{"gpt3-1.3b", gpt(24, 2048, 16)},
      Preset{"gpt3-6.7b", gpt(32, 4096, 32)},
      Preset{"gpt3-13b", gpt(40, 5120, 40)},
      Preset{"gpt3-175b", gpt(96, 12288, 96)},
      Preset{"llama2-7b", llama(32, 4096, 32, 32, 11008, 32000)},
      Preset{"llama2-70b", llama(80, 8192, 64, 8, 28672, 32000)},
      Preset{"llama3-8b", llama(32, 4096, 32, 8, 14336, 128256)},
      Preset{"llama3-70b", llama(80, 8192, 64, 8, 28672, 128256)},
      Preset{"llama3-405b", llama(126, 16384, 128, 8, 53248, 128256)},
      // Qwen2-7B (Yang et al. 2024, Table 1): Llama-style, 152k vocabulary; its QKV biases
      // (3584 + 2 x 512 parameters a layer) are left out.
      Preset{"qwen2-7b", llama(28, 3584, 28, 4, 18944, 152064)},
      // Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1) and 8x22B (the
      // released mistralai/Mixtral-8x22B-v0.1 configuration, its v3 tokenizer's 32768-token
      // vocabulary): 8 experts, top-2, each expert the width of the dense model's FFN.
      Preset{"mixtral-8x7b", moe(llama(32, 4096, 32, 8, 14336, 32000), 8, 2, 14336)},
      Preset{"mixtral-8x22b", moe(llama(56, 6144, 48, 8, 16384, 32768), 8, 2, 16384)},
      // Qwen3-30B-A3B and Qwen3-235B-A22B (Qwen3 technical report, Table 2; the released
      // configurations): 128 experts, top-8, 128-wide heads over a narrower stream, every
      // layer MoE; their per-head QK norms (2 x 128 weights a layer) are left out.
      Preset{"qwen3-30b-a3b", moe(llama(48, 2048, 32, 4, 6144, 151936), 128, 8, 768, 128)},
      Preset{"qwen3-235b-a22b", moe(llama(94, 4096, 64, 4, 12288, 151936), 128, 8, 1536, 128)},
      // GPT-OSS 20B and 120B (OpenAI, gpt-oss model card, 2025; the released configurations):
      // 64 heads of 64 over a 2880-wide stream, 8 KV heads, top-4 of 32 or 128 experts of
      // width 2880, 128-token windows on every other layer from the first. Their attention and
      // expert biases, attention sinks and clamped SwiGLU are left out.
      Preset{"gpt-oss-20b",
             windowed(moe(llama(24, 2880, 64, 8, 2880, 201088), 32, 4, 2880, 64), 128, 2)},
      Preset{"gpt-oss-120b",
             windowed(moe(llama(36, 2880, 64, 8, 2880, 201088), 128, 4, 2880, 64), 128, 2)},
      // DeepSeek-V2-Lite: no query latent, 64 experts (top-6) and 2 shared after one dense
      // layer, softmax router. DeepSeek-V3: 61 layers, the first 3 dense, 256 experts (top-8)
      // and 1 shared, sigmoid router limited to 4 of 8 expert groups (n_group, topk_group),
      // one multi-token prediction module.
      Preset{"deepseek-v2-lite",
             deepseek(llama(27, 2048, 16, 16, 10944, 102400), {0, 512, 128, 64, 128}, 1, 64, 6,
                      1408, 2, RouterScore::kSoftmax)},
      Preset{"deepseek-v3", mtp(node_limited(deepseek(llama(61, 7168, 128, 128, 18432, 129280),
                                                      {1536, 512, 128, 64, 128}, 3, 256, 8, 2048, 1,
                                                      RouterScore::kSigmoid),
                                             8, 4),
                                1)},
  };
  return kPresets;
}

}  // namespace

std::optional<EncoderConfig> encoder_preset(std::string_view name) {
  if (name == "qwen2-vl-vit") {
    // Qwen2-VL's vision transformer (Wang et al. 2024, "Qwen2-VL", section 2.1; the released
    // configuration): 32 layers, width 1280, 16 heads, MLP 5120 with GeLU, LayerNorm, biases,
    // 14x14 patches over 2 frames of 3 channels, a 2x2 merge into the LLM's width.
    EncoderConfig e;
    e.present = true;
    e.preset = std::string(name);
    e.layers = 32;
    e.hidden = 1280;
    e.heads = 16;
    e.ffn = 5120;
    e.activation = Activation::kGelu;
    e.norm = NormKind::kLayerNorm;
    e.bias = true;
    e.patch_pixels = 3 * 2 * 14 * 14;
    e.merge = 4;
    return e;
  }
  return std::nullopt;
}

std::vector<std::string_view> encoder_preset_names() {
  return {"qwen2-vl-vit"};
}

std::optional<ModelConfig> model_preset(std::string_view name) {
  for (const auto& p : presets()) {
    if (p.name == name) {
      ModelConfig m = p.config;
      m.preset = std::string(name);
      return m;
    }
  }
  return std::nullopt;
}

std::vector<std::string_view> model_preset_names() {
  std::vector<std::string_view> out;
  for (const auto& p : presets()) {
    out.push_back(p.name);
  }
  return out;
}

}  // namespace tessera::synth
