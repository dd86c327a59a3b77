// SPDX-License-Identifier: Apache-2.0
// Scenarios built in code for synthesizer tests (no files, no hardware).
#pragma once

#include "synth/scenario/model_presets.h"
#include "synth/scenario/scenario.h"
#include "synth/scenario/validate.h"

namespace tessera::synth::testing {

// A GPT-style decoder as the loader would build it, before validation: for builders that
// change it further (integration_fixtures.h validates the result).
inline Scenario gpt_scenario_unchecked(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                       std::int64_t tp, std::int64_t pp, std::int64_t dp) {
  Scenario s;
  s.name = "test";
  s.model = *model_preset("gpt3-175b");
  s.model.layers = layers;
  s.model.hidden = hidden;
  s.model.heads = heads;
  s.model.kv_heads = heads;
  s.model.ffn = 4 * hidden;
  s.model.tied_embeddings = false;
  s.training.seq_len = 2048;
  s.training.micro_batch = 1;
  s.training.global_batch = 8 * dp;
  s.training.precision = base::DType::kFP16;
  s.training.attention = AttentionKernel::kUnfused;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.dp = dp;
  s.cluster.devices = tp * pp * dp;
  return s;
}

// The same, validated as the loader validates a scenario file (validate.h).
inline Scenario gpt_scenario(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                             std::int64_t tp, std::int64_t pp, std::int64_t dp) {
  Scenario s = gpt_scenario_unchecked(layers, hidden, heads, tp, pp, dp);
  check_or_throw(s);
  return s;
}

// A GQA decoder layer (16 heads of 64, 4 KV heads) on TP2 with cp ranks of a 4096-token
// sequence, flash attention, bf16: the context-parallel tests' scenario.
inline Scenario cp_scenario(std::int64_t cp, CpComm comm) {
  Scenario s = gpt_scenario_unchecked(2, 1024, 16, 2, 1, 1);
  s.model.kv_heads = 4;
  s.training.seq_len = 4096;
  s.training.precision = base::DType::kBF16;
  s.training.attention = AttentionKernel::kFlash;
  s.parallel.cp = cp;
  if (cp > 1) {
    s.parallel.cp_comm = comm;
  }
  s.cluster.devices = 2 * cp;
  check_or_throw(s);
  return s;
}

}  // namespace tessera::synth::testing
