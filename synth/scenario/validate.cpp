// SPDX-License-Identifier: Apache-2.0
// The cross-field constraints of a scenario: divisibility of the model by the parallelism,
// devices against nodes and tp*pp*dp, the batch against dp, tensor sizes, the schedule's
// microbatch needs. The encoder's are in validate_encoder.cpp.
#include "synth/scenario/validate.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "synth/parallel/layer_split.h"
#include "synth/scenario/validate_checks.h"
#include "synth/schedule/pipeline_schedule.h"

namespace tessera::synth {

namespace {

// Elements of one microbatch's largest tensor on one rank: 2^44 (32 TiB in bf16) is beyond
// every device's memory, and keeps a stage's summed bytes within 64 bits.
constexpr double kMaxTensorElements = 17592186044416.0;

using detail::Violations;

// What the other checks divide by: never zero.
void check_positive(const Scenario& s, Violations& out) {
  auto positive = [&](std::int64_t v, const char* key) {
    if (v < 1) {
      out.push_back({key, fmt::format("expected an integer >= 1, got {}", v)});
    }
  };
  positive(s.model.layers, "model.layers");
  positive(s.model.hidden, "model.hidden");
  positive(s.model.heads, "model.heads");
  positive(s.model.kv_heads, "model.kv_heads");
  positive(s.model.ffn, "model.ffn");
  positive(s.model.vocab, "model.vocab");
  positive(s.training.seq_len, "training.seq_len");
  positive(s.training.global_batch, "training.global_batch");
  positive(s.training.micro_batch, "training.micro_batch");
  positive(s.parallel.tp, "parallelism.tp");
  positive(s.parallel.pp, "parallelism.pp");
  positive(s.cluster.devices, "cluster.devices");
  if (s.encoder.present) {
    positive(s.encoder.heads, "encoder.heads");
    positive(s.encoder.merge, "encoder.merge");
  }
}

void check_heads(const Scenario& s, Violations& out) {
  const auto& m = s.model;
  if (m.head_size == 0 && m.hidden % m.heads != 0) {
    out.push_back(
        {"model.heads", fmt::format("heads={} does not divide hidden={}", m.heads, m.hidden)});
  }
  if (m.heads % m.kv_heads != 0) {
    out.push_back({"model.kv_heads",
                   fmt::format("kv_heads={} does not divide heads={}", m.kv_heads, m.heads)});
  }
  const auto& e = s.encoder;
  if (e.present && e.hidden % e.heads != 0) {
    out.push_back({"encoder.heads",
                   fmt::format("encoder heads={} does not divide hidden={}", e.heads, e.hidden), "",
                   "encoder.preset"});
  }
}

// The cluster's devices fill whole nodes, or spread evenly over nodes in the topology's
// allocation units, and fit in the topology (topology::Cluster checks the same, but can only
// point at the topology).
void check_nodes(const Scenario& s, Violations& out) {
  if (!s.cluster.profile) {
    return;
  }
  const auto& topo = s.cluster.topology;
  const int node = topology::node_devices(topo, *s.cluster.profile);
  const std::int64_t n = s.cluster.devices;
  const std::string where = topo.devices_per_node > 0 ? "topology '" + topo.source + "'"
                                                      : "'" + s.cluster.profile->name + "'";
  const int per_node = topology::job_devices_per_node(topo, node, n);
  if (per_node == 0 && topo.allocation_unit > 0) {
    out.push_back({"cluster.devices",
                   fmt::format("devices={} cannot be spread evenly over {} nodes of {} devices "
                               "({}) in whole allocation units of {}",
                               n, (n + node - 1) / node, node, where, topo.allocation_unit),
                   fmt::format("a job takes whole nodes, or the same number of units of {} from "
                               "each of the fewest nodes that hold it",
                               topo.allocation_unit)});
  } else if (per_node == 0) {
    out.push_back({"cluster.devices",
                   fmt::format("devices={} is not a multiple of the {} devices per node of {}", n,
                               node, where),
                   "a cluster of more than one node is made of whole nodes"});
  }
  const std::int64_t nodes = (n + node - 1) / node;
  if (topo.max_nodes > 0 && nodes > topo.max_nodes) {
    out.push_back({"cluster.devices",
                   fmt::format("devices={} needs {} nodes of {} devices, but topology '{}' holds "
                               "at most {}",
                               n, nodes, node, topo.source, topo.max_nodes)});
  }
}

// stage_layers, or first/last_stage_layers, must describe every LLM stage of a pipe.
void check_uneven_split(const Scenario& s, Violations& out) {
  const auto& p = s.parallel;
  if (!p.stage_layers.empty() && (p.first_stage_layers > 0 || p.last_stage_layers > 0)) {
    out.push_back({"parallelism.stage_layers",
                   "give either stage_layers or first_stage_layers/last_stage_layers, not both"});
    return;
  }
  schedule::Placement place(s.schedule, static_cast<int>(p.pp));
  const bool encoder_stages = s.encoder.present && s.schedule.encoder == EncoderPlacement::kStages;
  const std::int64_t stages =
      place.stages_per_pipe() - (encoder_stages ? s.schedule.encoder_stages : 0);
  if (!p.stage_layers.empty()) {
    std::int64_t sum = 0;
    for (std::int64_t c : p.stage_layers) {
      sum += c;
    }
    if (static_cast<std::int64_t>(p.stage_layers.size()) != stages || sum != s.model.layers) {
      out.push_back({"parallelism.stage_layers",
                     fmt::format("{} counts summing to {}, but a pipe has {} LLM stages and the "
                                 "model {} layers",
                                 p.stage_layers.size(), sum, stages, s.model.layers)});
    }
    return;
  }
  if (parallel::first_last_split(s.model.layers, stages, p.first_stage_layers, p.last_stage_layers)
          .empty()) {
    out.push_back(
        {p.first_stage_layers > 0 ? "parallelism.first_stage_layers"
                                  : "parallelism.last_stage_layers",
         fmt::format("first_stage_layers={} and last_stage_layers={} leave {} layers, "
                     "which the other stages of a pipe of {} cannot share evenly",
                     p.first_stage_layers, p.last_stage_layers,
                     s.model.layers - p.first_stage_layers - p.last_stage_layers, stages)});
  }
}

void check_shards(const Scenario& s, Violations& out) {
  const auto& p = s.parallel;
  const auto& m = s.model;
  detail::check_divides(out, "parallelism.tp", p.tp, "tp", m.heads, "model.heads");
  detail::check_divides(out, "parallelism.tp", p.tp, "tp", m.kv_heads, "model.kv_heads");
  detail::check_divides(out, "parallelism.tp", p.tp, "tp", m.ffn, "model.ffn");
  const bool encoder_stages = s.encoder.present && s.schedule.encoder == EncoderPlacement::kStages;
  const bool uneven =
      !p.stage_layers.empty() || p.first_stage_layers > 0 || p.last_stage_layers > 0;
  if (!p.layout.empty()) {
    detail::check_layout(s, out);
  } else if (uneven) {
    check_uneven_split(s, out);
  } else if (!encoder_stages) {  // encoder stages: an uneven split
    detail::check_divides(out, "parallelism.pp", p.pp, "pp", m.layers, "model.layers");
  }
  // Each pipe holds the whole model (DualPipe: two copies), cut into its stages.
  schedule::Placement place(s.schedule, static_cast<int>(p.pp));
  if (!uneven && m.layers % place.stages_per_pipe() != 0 && !encoder_stages) {
    out.push_back({"schedule.chunks",
                   fmt::format("the schedule's {} pipeline stages do not divide model.layers={}",
                               place.stages_per_pipe(), m.layers)});
  }
  if (p.sp && p.tp == 1) {
    out.push_back({"parallelism.sp", "sequence parallelism needs tp > 1"});
  }
  if (p.tp_comm_overlap.value_or(false) && !p.sp) {  // Megatron asserts the same
    out.push_back({"parallelism.tp_comm_overlap",
                   "TP communication overlap pipelines the sequence-parallel all-gathers and "
                   "reduce-scatters with their GEMMs: it needs sp: true"});
  }
  if (p.sp) {
    detail::check_divides(out, "parallelism.tp", p.tp, "tp", s.local_seq(),
                          p.cp > 1 ? "training.seq_len/cp" : "training.seq_len");
  }
}

void check_devices(const Scenario& s, Violations& out) {
  const auto& p = s.parallel;
  const std::int64_t enc = s.encoder_devices();
  const std::int64_t llm = s.cluster.devices - enc;
  if (llm < 1) {
    out.push_back(
        {"cluster.devices", fmt::format("devices={} leaves none for the LLM after the encoder's {}",
                                        s.cluster.devices, enc)});
  } else if (p.dp < 1) {
    out.push_back({"cluster.devices",
                   fmt::format("devices={}{} is not a multiple of {}={}", s.cluster.devices,
                               enc > 0 ? fmt::format(" - {} encoder devices", enc) : "",
                               p.cp > 1 ? "tp*cp*pp" : "tp*pp", p.tp * p.cp * p.pp)});
  } else if (p.stage_ranks() * p.pp != llm) {
    const std::string cp = p.cp > 1 ? fmt::format("*{}", p.cp) : "";
    out.push_back({"cluster.devices",
                   fmt::format("tp{}*pp*dp = {}{}*{}*{} = {}{} but the cluster has {} devices",
                               p.cp > 1 ? "*cp" : "", p.tp, cp, p.pp, p.dp, p.stage_ranks() * p.pp,
                               enc > 0 ? fmt::format(" plus {} encoder devices", enc) : "",
                               s.cluster.devices)});
  }
}

void check_batch(const Scenario& s, Violations& out) {
  const auto& t = s.training;
  const std::int64_t dp = s.parallel.dp;
  if (t.global_batch % dp != 0) {
    out.push_back({"training.global_batch",
                   fmt::format("global_batch={} is not divisible by dp={}", t.global_batch, dp)});
  } else if ((t.global_batch / dp) % t.micro_batch != 0) {
    out.push_back({"training.micro_batch",
                   fmt::format("micro_batch={} does not divide global_batch/dp = {}/{} = {}",
                               t.micro_batch, t.global_batch, dp, t.global_batch / dp)});
  }
}

// One microbatch's largest tensor on one rank, in elements, before tensor parallelism shards
// it: tokens times the widest dimension (the logits, usually), or the unfused attention
// scores. Its bytes, summed over a stage's layers, must stay countable.
void check_tensor_sizes(const Scenario& s, Violations& out) {
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
    out.push_back({"training.micro_batch",
                   fmt::format("one microbatch's largest tensor would hold {:.3g} elements; "
                               "Tessera counts at most {:.3g} per tensor and {:.3g} over the "
                               "model's {} layers",
                               largest, kMaxTensorElements, kMaxTensorElements * 256.0,
                               static_cast<std::int64_t>(layers)),
                   "use a smaller micro_batch, seq_len or model width"});
  }
}

void check_schedule_runs(const Scenario& s, Violations& out) {
  try {
    schedule::check_schedule(s.schedule, static_cast<int>(s.parallel.pp),
                             static_cast<int>(s.microbatches()));
  } catch (const base::InputError& e) {
    out.push_back({"schedule", e.message()});
  }
}

}  // namespace

std::vector<Violation> validate(const Scenario& s) {
  Violations out;
  // Each stage needs the ones before it to hold: what they check is divided by below.
  for (auto check : {check_positive, check_heads}) {
    check(s, out);
    if (!out.empty()) {
      return out;
    }
  }
  for (auto check :
       {check_nodes, check_shards, detail::check_context_parallel, check_devices, check_batch}) {
    check(s, out);
    if (!out.empty()) {
      return out;
    }
  }
  check_tensor_sizes(s, out);
  detail::check_sharded_data_parallel(s, out);
  detail::check_fp8(s, out);
  detail::check_moe(s, out);
  detail::check_mla(s, out);
  check_schedule_runs(s, out);
  detail::check_encoder(s, out);
  return out;
}

std::vector<Violation> node_violations(const Scenario& s) {
  Violations out;
  check_nodes(s, out);
  return out;
}

void check_or_throw(const Scenario& s) {
  auto violations = validate(s);
  if (!violations.empty()) {
    const Violation& v = violations.front();
    throw base::InputError(base::SourceLoc{s.file, 0, 0}, fmt::format("'{}': {}", v.key, v.message),
                           v.hint);
  }
}

std::int64_t devices_left_dp(const Scenario& s) {
  const std::int64_t llm = s.cluster.devices - s.encoder_devices();
  const std::int64_t tp_pp = s.parallel.tp * s.parallel.cp * s.parallel.pp;
  return llm >= 1 && tp_pp >= 1 && llm % tp_pp == 0 ? llm / tp_pp : 0;
}

}  // namespace tessera::synth
