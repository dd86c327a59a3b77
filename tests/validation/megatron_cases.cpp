// SPDX-License-Identifier: Apache-2.0
#include "tests/validation/megatron_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "hwprofiles/hw_profile.h"
#include "sim/simulation.h"
#include "synth/build/synthesize.h"
#include "synth/scenario/model_presets.h"
#include "synth/scenario/validate.h"
#include "topology/cluster.h"

namespace tessera::validation {

namespace {

synth::Scenario megatron_case(const YAML::Node& c, const YAML::Node& common) {
  synth::Scenario s;
  s.name = c["id"].as<std::string>();
  s.model = *synth::model_preset("gpt3-175b");
  s.model.preset = "";
  s.model.layers = c["layers"].as<std::int64_t>();
  s.model.hidden = c["hidden"].as<std::int64_t>();
  s.model.heads = c["heads"].as<std::int64_t>();
  s.model.kv_heads = s.model.heads;
  s.model.ffn = 4 * s.model.hidden;
  s.model.vocab = common["vocab"].as<std::int64_t>();
  s.training.seq_len = common["seq"].as<std::int64_t>();
  s.training.precision = base::DType::kFP16;
  s.training.attention = synth::AttentionKernel::kUnfused;  // Megatron of 2021-22
  // The framework as the yaml's `framework` notes say: Megatron's local linear layers, fp16
  // main gradients (the default with fp16) added to their buffer by a kernel of their own.
  s.training.transformer_impl = synth::TransformerImpl::kLocal;
  s.training.gradient_accumulation_fusion = false;
  // LocalDDP reduces after backward; PyTorch DDP (`ddp: torch`) during the last backward, in
  // its 25 MB buckets.
  const bool torch_ddp = c["ddp"] && c["ddp"].as<std::string>() == "torch";
  s.training.overlap_grad_reduce = torch_ddp;
  s.training.grad_bucket_bytes = torch_ddp ? 25e6 : 0.0;
  s.training.overlap_p2p_comm = false;  // Megatron of 2021: blocking p2p, interleaved too
  s.parallel.tp_comm_overlap = false;   // TE userbuffers came in 2023
  // The code of the time (the yaml's `framework` notes): asynchronous TP all-reduce in
  // backward came in 2022-03.
  s.parallel.async_tp_allreduce = common["async_tp_allreduce"].as<bool>();
  s.parallel.tp = c["tp"].as<std::int64_t>();
  s.parallel.pp = c["pp"].as<std::int64_t>();
  s.cluster.devices = c["gpus"].as<std::int64_t>();
  s.parallel.dp = s.cluster.devices / (s.parallel.tp * s.parallel.pp);
  s.cluster.hardware = "a100-sxm-80gb";
  s.cluster.topology = topology::load_topology_preset("dgx-a100-superpod", {});
  return s;
}

struct Outcome {
  double step_s = 0.0;
  double hardware_flops = 0.0;
  double model_flops = 0.0;
  double static_gib = 0.0;   // stage 0
  double dynamic_gib = 0.0;  // stage 0 peak above static
};

struct Simulated {
  graph::ExecGraph graph;
  sim::RunStats stats;
};

// `s` synthesized and simulated; `timeline`: with rank 0's spans recorded.
Simulated run_case(const synth::Scenario& s, const models::Effects& effects, bool timeline) {
  synth::check_or_throw(s);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  Simulated out{synth::synthesize(s), {}};
  sim::SimOptions opt;
  opt.dtype = s.training.precision;
  opt.effects = effects;
  opt.record_timeline = timeline;
  if (timeline) {
    opt.timeline_ranks = {0};
  }
  out.stats = sim::simulate(out.graph, cluster, profile, opt);
  return out;
}

Outcome simulate(const synth::Scenario& s, const models::Effects& effects) {
  Simulated run = run_case(s, effects, false);
  const graph::ExecGraph& g = run.graph;
  const sim::RunStats& r = run.stats;
  Outcome o;
  o.step_s = r.step_time_s;
  o.hardware_flops = g.info.hardware_flops;
  o.model_flops = g.info.model_flops;
  constexpr double kGiB = 1073741824.0;
  o.static_gib = r.ranks[0].static_memory / kGiB;
  o.dynamic_gib = (r.ranks[0].peak_memory - r.ranks[0].static_memory) / kGiB;
  return o;
}

std::vector<Row> narayanan(const YAML::Node& doc, const models::Effects& effects) {
  std::vector<Row> rows;
  const YAML::Node t = doc["narayanan2021_table1"];
  for (const auto& c : t["cases"]) {
    synth::Scenario s = megatron_case(c, t["common"]);
    s.training.micro_batch = c["mbs"].as<std::int64_t>();
    s.training.global_batch = c["gbs"].as<std::int64_t>();
    s.training.recompute = synth::Recompute::kFull;
    std::string note;
    if (!c["vpp_layers_per_chunk"].IsNull()) {  // Megatron's interleaved schedule
      s.schedule.kind = synth::ScheduleKind::kInterleaved;
      s.schedule.chunks =
          s.model.layers / (s.parallel.pp * c["vpp_layers_per_chunk"].as<std::int64_t>());
      note = fmt::format("interleaved, v = {}", s.schedule.chunks);
    }
    Outcome o = simulate(s, effects);
    double tflops = o.hardware_flops / o.step_s / static_cast<double>(s.cluster.devices) / 1e12;
    rows.push_back({s.name, "TFLOP/s per GPU", tflops, c["tflops_per_gpu"].as<double>(), note});
  }
  return rows;
}

// The paper's memory figures are its closed forms (section 4), not measurements.
constexpr const char* kFormula = "the paper's formula, not a measurement";
constexpr const char* kFormulaPeak =
    "the paper's formula, not a measurement; simulated: peak dynamic memory";

std::vector<Row> korthikanti(const YAML::Node& doc, const models::Effects& effects, bool memory) {
  std::vector<Row> rows;
  const YAML::Node t = doc["korthikanti2022_table5"];
  const YAML::Node mem = t["memory_gib_per_gpu"]["cases"];
  std::size_t i = 0;
  for (const auto& c : t["cases"]) {
    synth::Scenario s = megatron_case(c, t["common"]);
    s.training.micro_batch = c["mbs"].as<std::int64_t>();
    s.training.global_batch = c["gbs"].as<std::int64_t>();
    s.training.recompute = synth::Recompute::kFull;
    std::string note;
    if (c["chunks"]) {  // section 6: interleaved with m = 3 for 175B and 530B
      s.schedule.kind = synth::ScheduleKind::kInterleaved;
      s.schedule.chunks = c["chunks"].as<std::int64_t>();
      note = fmt::format("interleaved, v = {}", s.schedule.chunks);
    }
    Outcome full = simulate(s, effects);
    rows.push_back({s.name, "step time, full recompute (s)", full.step_s,
                    c["step_s_full"].as<double>(), note});
    s.parallel.sp = true;
    s.training.recompute = synth::Recompute::kSelective;
    Outcome sel = simulate(s, effects);
    rows.push_back({s.name, "step time, SP + selective (s)", sel.step_s,
                    c["step_s_seq_sel"].as<double>(), note});
    double devices = static_cast<double>(s.cluster.devices);
    double peak = 312e12;
    rows.push_back({s.name, "MFU, SP + selective", sel.model_flops / (sel.step_s * devices * peak),
                    c["mfu"].as<double>(), note});
    rows.push_back({s.name, "HFU, SP + selective",
                    sel.hardware_flops / (sel.step_s * devices * peak), c["hfu"].as<double>(),
                    note});
    const YAML::Node m = mem[i++];
    if (!memory) {
      continue;
    }
    rows.push_back({s.name, "params + optimizer, stage 0 (GiB)", sel.static_gib,
                    m["params_and_optimizer"].as<double>(), kFormula, false});
    rows.push_back({s.name, "activations, SP + selective, stage 0 (GiB)", sel.dynamic_gib,
                    m["activations_seq_sel"].as<double>(), kFormulaPeak, false});
    s.parallel.sp = false;
    s.training.recompute = synth::Recompute::kNone;
    Outcome none = simulate(s, effects);
    rows.push_back({s.name, "activations, no recompute, stage 0 (GiB)", none.dynamic_gib,
                    m["activations_no_recompute"].as<double>(), kFormulaPeak, false});
  }
  return rows;
}

// The span [first start, last end] of layer `layer`'s spans on rank 0 in its forward
// (`forward`) or in its backward with its recompute: the backward begins with the first span
// of a node name that only backward or recompute nodes carry (a forward all-gather and the
// backward's re-gather share a name).
double layer_span_ms(const graph::ExecGraph& g, const sim::RunStats& r, std::int64_t layer,
                     bool forward) {
  std::unordered_map<std::uint32_t, unsigned> phases;  // name -> bit per phase
  for (const graph::Node& n : g.graph_of(0).nodes) {
    phases[n.name] |= 1U << static_cast<unsigned>(n.phase);
  }
  const unsigned fwd_bit = 1U << static_cast<unsigned>(graph::Phase::kForward);
  const std::string prefix = fmt::format("L{}.", layer);
  std::vector<const sim::Span*> spans;
  base::SimTime backward = std::numeric_limits<base::SimTime>::max();
  for (const sim::Span& sp : r.spans) {
    if (sp.rank == 0 && g.names[sp.name].starts_with(prefix)) {
      spans.push_back(&sp);
      if ((phases[sp.name] & fwd_bit) == 0) {
        backward = std::min(backward, sp.start);
      }
    }
  }
  base::SimTime begin = std::numeric_limits<base::SimTime>::max();
  base::SimTime end = 0;
  for (const sim::Span* sp : spans) {
    if ((sp->start < backward) == forward) {
      begin = std::min(begin, sp->start);
      end = std::max(end, sp->end);
    }
  }
  return end > begin ? base::to_seconds(end - begin) * 1e3 : 0.0;
}

}  // namespace

std::vector<LayerRow> korthikanti_layer_rows(const YAML::Node& doc,
                                             const models::Effects& effects) {
  const YAML::Node t = doc["korthikanti2022_table4"];
  const YAML::Node k = doc["korthikanti2022_table5"];
  std::size_t at = 0;
  while (k["cases"][at]["id"].as<std::string>() != t["case"].as<std::string>()) {
    ++at;
  }
  const YAML::Node c = k["cases"][at];
  std::vector<LayerRow> rows;
  for (const auto& row : t["rows"]) {
    synth::Scenario s = megatron_case(c, k["common"]);
    s.training.micro_batch = c["mbs"].as<std::int64_t>();
    s.training.global_batch = c["gbs"].as<std::int64_t>();
    s.parallel.sp = row["sp"].as<bool>();
    const auto r = row["recompute"].as<std::string>();
    s.training.recompute = r == "none"        ? synth::Recompute::kNone
                           : r == "selective" ? synth::Recompute::kSelective
                                              : synth::Recompute::kFull;
    Simulated run = run_case(s, effects, true);
    const std::int64_t layer = s.model.layers / 2;
    rows.push_back({row["config"].as<std::string>(),
                    layer_span_ms(run.graph, run.stats, layer, true),
                    layer_span_ms(run.graph, run.stats, layer, false),
                    row["forward_ms"].as<double>(), row["backward_ms"].as<double>()});
  }
  return rows;
}

std::vector<Row> megatron_rows(const YAML::Node& doc, const models::Effects& effects, bool memory) {
  std::vector<Row> rows = narayanan(doc, effects);
  std::vector<Row> k = korthikanti(doc, effects, memory);
  rows.insert(rows.end(), k.begin(), k.end());
  return rows;
}

}  // namespace tessera::validation
