// SPDX-License-Identifier: Apache-2.0
// A run's `training:` -> the scenario's `training:` (and the MoE and pipeline keys a table
// states there): the precision and recompute vocabularies of docs/runs.md §2.
#include <fmt/format.h>

#include <array>

#include "experiments/runs/translate.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

// FP8 recipes by what the text names; plain "fp8" is Transformer Engine's default (delayed),
// plain "float8" torchao's Float8Linear default (dynamic tensorwise).
std::string fp8_recipe(const YamlNode& p, Translation& t) {
  const std::string text = text_of(p);
  if (contains(text, "blockwise")) {
    return "blockwise";
  }
  if (contains(text, "current scaling") || contains(text, "fp8-cs") ||
      contains(text, "tensorwise")) {
    return "tensorwise";
  }
  if (contains(text, "rowwise")) {
    t.cannot(p, "rowwise float8 scaling (torchao) is not modelled yet");
    return "tensorwise";
  }
  if (contains(text, "delayed")) {
    return "delayed";
  }
  if (contains(text, "float8")) {
    t.note("float8 without a recipe: torchao's default, dynamic tensorwise scaling");
    return "tensorwise";
  }
  t.note("fp8 without a recipe: Transformer Engine's default, delayed scaling");
  return "delayed";
}

void translate_precision(const YamlNode& p, Translation& t) {
  const std::string text = text_of(p);
  if (contains(text, "mxfp8") || contains(text, "fp8-mx")) {
    t.precision_group = "mxfp8";
    t.set("training.precision", "fp8", p);
    t.set("training.fp8_recipe", "mxfp8", p);
  } else if (contains(text, "fp8") || contains(text, "float8")) {
    t.precision_group = "fp8";
    t.set("training.precision", "fp8", p);
    t.set("training.fp8_recipe", fp8_recipe(p, t), p);
    // torchao's enable_fsdp_float8_all_gather: FSDP gathers the weights cast to float8.
    if (contains(text, "float8 all-gather")) {
      t.set("training.fp8_param_gather", "true", p);
    }
  } else if (contains(text, "bf16")) {
    t.set("training.precision", "bf16", p);
  } else if (contains(text, "fp16")) {
    t.precision_group = "fp16";
    t.set("training.precision", "fp16", p);
  } else {
    p.fail(fmt::format("expected a precision (bf16, fp16, fp8 ..., float8 ..., mxfp8), got '{}'",
                       text));
  }
}

void translate_recompute(const YamlNode& r, Translation& t) {
  const std::string text = lower(text_of(r));
  std::string mode;
  if (unknown(r)) {
    mode = "none";
    t.note("recompute not stated: none");
  } else if (contains(text, "selective") &&
             (contains(text, "op-level") || contains(text, "per-op") ||
              contains(text, "selective op"))) {
    mode = "selective_op";  // TorchTitan's selective_ac_option = "op"
  } else if (contains(text, "selective") && text.find('[') != std::string::npos &&
             !contains(text, "core_attn")) {
    // Megatron-Core's --recompute-modules without the attention core (layernorm, moe_act,
    // mla_up_proj, mlp, moe): Tessera reruns only whole layers or the attention core.
    mode = "none";
    t.note(fmt::format("recompute of modules {} not modelled: nothing rerun",
                       text.substr(text.find('['), text.find(']') - text.find('[') + 1)));
  } else if (contains(text, "selective")) {
    mode = "selective";
    if (text.find('[') != std::string::npos) {
      t.note("recompute of chosen modules modelled as selective (the attention core)");
    }
  } else if (contains(text, "full") || contains(text, "checkpointing")) {
    mode = "full";
  } else if (text.starts_with("none")) {
    mode = "none";
    if (contains(text, "offload")) {
      t.note("CPU activation offloading not modelled");
    }
  } else {
    r.fail(fmt::format("expected a recompute mode (none, selective, selective op, full), got '{}'",
                       text_of(r)));
  }
  t.set("training.recompute", mode, r);
}

// How the experts' GEMMs run: one grouped kernel (the grouped_gemm library's gmm,
// torch._grouped_mm: NeMo AutoModel's experts) or, as the scenario's default, Transformer
// Engine's GroupedLinear expert by expert (Megatron-Core's TEGroupedMLP).
void translate_grouped_gemm(const YamlNode& tr, Translation& t) {
  for (std::string_view key : {"grouped_gemm", "kernels"}) {
    if (auto k = tr.find(key)) {
      const std::string text = text_of(*k);
      if (contains(text, "gmm") || contains(text, "grouped_mm") || contains(text, "torch_mm") ||
          contains(text, "single")) {
        t.set("model.moe.grouped_gemm", "single", *k);
      } else if (key == "grouped_gemm" && contains(text, "per_expert")) {
        t.set("model.moe.grouped_gemm", "per_expert", *k);
      }
    }
  }
}

void translate_moe_options(const YamlNode& tr, Translation& t) {
  if (auto r = tr.find("routing")) {
    const std::string text = text_of(*r);
    // "token-dropless" names the opposite of token dropping.
    if ((contains(text, "tokendrop") || contains(text, "token-drop")) &&
        !contains(text, "dropless")) {
      t.set("model.moe.capacity_factor", "1.0", *r);
      t.note("token dropping at capacity factor 1.0 (NeMo's default)");
    }
    if (contains(text, "fake balanced")) {  // NeMo AutoModel's FakeBalancedGate
      t.set("model.moe.routing", "round_robin", *r);
    }
  }
  // Megatron-Core's flex dispatcher (DeepEP or HybridEP), or NeMo AutoModel's DeepEP kernels.
  for (std::string_view key : {"dispatcher", "moe_dispatcher", "kernels"}) {
    if (auto d = tr.find(key)) {
      const std::string text = text_of(*d);
      if (contains(text, "allgather")) {
        t.set("model.moe.dispatcher", "allgather", *d);
      } else if ((key != "kernels" && contains(text, "flex")) || contains(text, "deepep") ||
                 contains(text, "hybridep")) {
        t.set("model.moe.dispatcher", "deepep", *d);
      }
    }
  }
  translate_grouped_gemm(tr, t);
  if (auto o = tr.find("ep_overlap")) {
    if (auto on = lenient_bool(*o)) {
      t.set("parallelism.ep_comm_overlap", *on ? "true" : "false", *o);
    }
  }
  if (auto o = tr.find("shared_expert_overlap"); o && lenient_bool(*o).value_or(false)) {
    t.set("model.moe.shared_expert_overlap", "true", *o);
  }
}

// The switches a run (or its recipe) states: the dtype gradients are reduced in, the FP8
// weights' all-gather, and when FSDP1 gathers a unit for its backward (BACKWARD_PRE or _POST).
void translate_switches(const YamlNode& tr, Translation& t) {
  if (auto g = tr.find("grad_reduce_in_fp32")) {
    if (auto on = lenient_bool(*g)) {
      t.set("training.grad_reduce_in_fp32", *on ? "true" : "false", *g);
    }
  }
  if (auto b = tr.find("backward_prefetch")) {
    const std::string text = lower(text_of(*b));
    const bool post = text == "post" || contains(text, "backward_post");
    if (post || text == "pre" || contains(text, "backward_pre")) {
      t.set("training.backward_prefetch", post ? "post" : "pre", *b);
    }
  }
  const bool fp8 = t.precision_group == "fp8" || t.precision_group == "mxfp8";
  if (auto g = tr.find("fp8_param_gather"); g && fp8) {
    if (auto on = lenient_bool(*g)) {
      t.set("training.fp8_param_gather", *on ? "true" : "false", *g);
    }
  }
}

void translate_kernels(const YamlNode& tr, Translation& t) {
  if (auto g = tr.find("cuda_graphs")) {
    const std::string text = text_of(*g);
    const bool whole = contains(text, "full iteration") || contains(text, "full_iteration");
    if (contains(text, "scope") && !whole) {
      t.note("CUDA graphs of some modules only (TE scopes) not modelled: eager launches");
    } else if (whole || (!lower(text).starts_with("none") && lenient_bool(*g).value_or(false))) {
      t.set("training.cuda_graphs", "true", *g);
    }
  }
  // TorchTitan without torch.compile runs its norms and SwiGLU op by op (PyTorch eager).
  if (t.framework == Framework::kTorchTitan && !t.compiled) {
    t.set("training.elementwise", "eager", tr);
  }
  // Fused attention: Transformer Engine runs cuDNN's kernels (the platform's best); PyTorch's
  // SDPA dispatched FlashAttention-2 on Hopper until 2.9 and Composer ran flash-attn 2 / Triton.
  const bool eager = t.framework == Framework::kTorchTitan || t.framework == Framework::kComposer;
  if (auto a = tr.find("attention")) {
    const std::string text = text_of(*a);
    const bool fused = contains(text, "flash") || contains(text, "sdpa") || contains(text, "cudnn");
    t.set("training.attention",
          !fused                              ? "unfused"
          : eager && !contains(text, "cudnn") ? "flash2"
                                              : "flash",
          *a);
  } else if (eager) {
    t.set("training.attention", "flash2", tr);
  }
  if (auto o = tr.find("optimizer"); o && contains(text_of(*o), "distributed")) {
    t.set("training.distributed_optimizer", "true", *o);
  }
  if (auto l = tr.find("pp_layout")) {
    std::string layout = text_of(*l);
    layout = layout.substr(0, layout.find(' '));
    t.set("parallelism.pipeline_layout", quoted(layout), *l);
  }
}

}  // namespace

void translate_training(const YamlNode& tr, Translation& t) {
  tr.expect_map();
  for (std::string_view key : {"seq_len", "global_batch"}) {
    const YamlNode v = tr.at(key);
    if (auto x = lenient_int(v, 1, kMaxBatch)) {
      t.set(fmt::format("training.{}", key), *x, v);
    } else {
      t.cannot(v, fmt::format("training.{} is not stated", key));
    }
  }
  const YamlNode mb = tr.at("micro_batch");
  auto micro = lenient_int(mb, 1, kMaxBatch);
  if (!micro) {
    t.note("micro_batch not stated: 1");
  }
  t.set("training.micro_batch", micro.value_or(1), mb);
  translate_precision(tr.at("precision"), t);
  if (auto r = tr.find("recompute")) {
    translate_recompute(*r, t);
  } else {
    t.note("recompute not stated: none");
  }
  translate_moe_options(tr, t);
  translate_kernels(tr, t);
  translate_switches(tr, t);
}

}  // namespace tessera::experiments::runs
