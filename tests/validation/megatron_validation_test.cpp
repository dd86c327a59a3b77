// SPDX-License-Identifier: Apache-2.0
// Runs every case of a100_megatron.yaml (published A100 measurements: Narayanan et al. SC'21
// Table 1; Korthikanti et al. 2022 Table 5 and its memory table) through the whole pipeline and
// prints predicted against measured with the error of each case. The README's validation
// table is this output. The assertions only catch a broken pipeline (every case simulated,
// errors finite and below 50%); the errors themselves are reported, not tuned.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "hwprofiles/hw_profile.h"
#include "sim/simulation.h"
#include "synth/build/synthesize.h"
#include "synth/scenario/model_presets.h"
#include "synth/scenario/validate.h"
#include "topology/cluster.h"

namespace tessera {
namespace {

struct Row {
  std::string id;
  std::string metric;
  double predicted = 0.0;
  double measured = 0.0;
  std::string note;
  [[nodiscard]] double error() const { return (predicted - measured) / measured; }
};

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
  s.training.overlap_grad_reduce = false;                   // LocalDDP: reduce after backward
  s.training.overlap_p2p_comm = false;  // Megatron of 2021: blocking p2p, interleaved too
  s.parallel.tp_comm_overlap = false;   // TE userbuffers came in 2023
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

Outcome simulate(const synth::Scenario& s) {
  synth::check_or_throw(s);
  hw::Profile profile = hw::load_profile(s.cluster.hardware);
  topology::Cluster cluster(s.cluster.topology, profile, static_cast<int>(s.cluster.devices));
  graph::ExecGraph g = synth::synthesize(s);
  sim::SimOptions opt;
  opt.dtype = s.training.precision;
  sim::RunStats r = sim::simulate(g, cluster, profile, opt);
  Outcome o;
  o.step_s = r.step_time_s;
  o.hardware_flops = g.info.hardware_flops;
  o.model_flops = g.info.model_flops;
  constexpr double kGiB = 1073741824.0;
  o.static_gib = r.ranks[0].static_memory / kGiB;
  o.dynamic_gib = (r.ranks[0].peak_memory - r.ranks[0].static_memory) / kGiB;
  return o;
}

std::vector<Row> narayanan(const YAML::Node& doc) {
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
    Outcome o = simulate(s);
    double tflops = o.hardware_flops / o.step_s / static_cast<double>(s.cluster.devices) / 1e12;
    rows.push_back({s.name, "TFLOP/s per GPU", tflops, c["tflops_per_gpu"].as<double>(), note});
  }
  return rows;
}

std::vector<Row> korthikanti(const YAML::Node& doc) {
  std::vector<Row> rows;
  const YAML::Node t = doc["korthikanti2022_table5"];
  const YAML::Node mem = t["memory_gib_per_gpu"]["cases"];
  std::size_t i = 0;
  for (const auto& c : t["cases"]) {
    synth::Scenario s = megatron_case(c, t["common"]);
    s.training.micro_batch = c["mbs"].as<std::int64_t>();
    s.training.global_batch = c["gbs"].as<std::int64_t>();
    s.training.recompute = synth::Recompute::kFull;
    Outcome full = simulate(s);
    rows.push_back(
        {s.name, "step time, full recompute (s)", full.step_s, c["step_s_full"].as<double>(), ""});
    s.parallel.sp = true;
    s.training.recompute = synth::Recompute::kSelective;
    Outcome sel = simulate(s);
    rows.push_back({s.name, "step time, SP + selective (s)", sel.step_s,
                    c["step_s_seq_sel"].as<double>(), ""});
    double devices = static_cast<double>(s.cluster.devices);
    double peak = 312e12;
    rows.push_back({s.name, "MFU, SP + selective", sel.model_flops / (sel.step_s * devices * peak),
                    c["mfu"].as<double>(), ""});
    rows.push_back({s.name, "HFU, SP + selective",
                    sel.hardware_flops / (sel.step_s * devices * peak), c["hfu"].as<double>(), ""});
    const YAML::Node m = mem[i++];
    rows.push_back({s.name, "params + optimizer, stage 0 (GiB)", sel.static_gib,
                    m["params_and_optimizer"].as<double>(), ""});
    rows.push_back({s.name, "activations, SP + selective, stage 0 (GiB)", sel.dynamic_gib,
                    m["activations_seq_sel"].as<double>(), "peak dynamic memory"});
    s.parallel.sp = false;
    s.training.recompute = synth::Recompute::kNone;
    Outcome none = simulate(s);
    rows.push_back({s.name, "activations, no recompute, stage 0 (GiB)", none.dynamic_gib,
                    m["activations_no_recompute"].as<double>(), "peak dynamic memory"});
    if (s.parallel.pp > 1 && s.model.layers / s.parallel.pp > 2) {
      // The measured 175B and 530B figures fit Korthikanti's formula with the interleaved
      // factor 1 + (p-1)/(p*v) at v = 3; interleaving is not simulated yet.
      rows[rows.size() - 1].note = "measured with interleaving (fits v = 3); simulated 1F1B";
      rows[rows.size() - 2].note = rows[rows.size() - 1].note;
    }
  }
  return rows;
}

double mean_abs_error(const std::vector<Row>& rows) {
  double sum = 0.0;
  for (const Row& r : rows) {
    sum += std::abs(r.error());
  }
  return sum / static_cast<double>(rows.size());
}

std::string table(const std::vector<Row>& rows) {
  std::string out =
      "| case | metric | predicted | measured | error | note |\n|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    out += fmt::format("| {} | {} | {:.3g} | {:.3g} | {:+.1f}% | {} |\n", r.id, r.metric,
                       r.predicted, r.measured, 100.0 * r.error(), r.note);
  }
  out += fmt::format("\nmean absolute error over {} rows: {:.1f}%\n", rows.size(),
                     100.0 * mean_abs_error(rows));
  return out;
}

// One line per row (case, metric, predicted, measured) and a last line with the mean error,
// at full precision: the golden form of the table.
std::string golden_csv(const std::vector<Row>& rows) {
  std::string out = "case,metric,predicted,measured\n";
  for (const Row& r : rows) {
    out += fmt::format("{},\"{}\",{:.17g},{:.17g}\n", r.id, r.metric, r.predicted, r.measured);
  }
  out += fmt::format("all,mean absolute error,{:.17g},0\n", mean_abs_error(rows));
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

// The number after the last comma but one (the predicted column), or the whole line.
double predicted_of(const std::string& line) {
  std::size_t last = line.rfind(',');
  std::size_t before = line.rfind(',', last - 1);
  return std::stod(line.substr(before + 1, last - before - 1));
}

void expect_matches_golden(const std::string& now) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/golden/validation.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << ": run scripts/regen-golden.sh";
  std::ostringstream golden;
  golden << in.rdbuf();
  std::vector<std::string> want = lines(golden.str());
  std::vector<std::string> got = lines(now);
  ASSERT_EQ(want.size(), got.size()) << "the validation table has other rows than " << path;
  for (std::size_t i = 1; i < want.size(); ++i) {
    std::string want_key = want[i].substr(0, want[i].rfind(',', want[i].rfind(',') - 1));
    std::string got_key = got[i].substr(0, got[i].rfind(',', got[i].rfind(',') - 1));
    ASSERT_EQ(want_key, got_key) << "line " << i + 1 << " of " << path;
    double a = predicted_of(want[i]);
    double b = predicted_of(got[i]);
    EXPECT_NEAR(a, b, 1e-9 * std::max(std::abs(a), std::abs(b)))
        << want_key << " moved from its golden value (regenerate on purpose: "
        << "scripts/regen-golden.sh)";
  }
}

TEST(Validation, MegatronA100) {
  YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/tests/validation/a100_megatron.yaml");
  std::vector<Row> rows = narayanan(doc);
  std::vector<Row> k = korthikanti(doc);
  rows.insert(rows.end(), k.begin(), k.end());
  std::string t = table(rows);
  std::cout << t;
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/validation_table.md") << t;
  std::string csv = golden_csv(rows);
  std::ofstream(std::string(TESSERA_BINARY_DIR) + "/validation.csv") << csv;
  EXPECT_EQ(rows.size(), 10u + 4u * 7u);
  for (const Row& r : rows) {
    EXPECT_TRUE(std::isfinite(r.predicted) && r.predicted > 0.0) << r.id << " " << r.metric;
    EXPECT_LT(std::abs(r.error()), 0.5) << r.id << " " << r.metric << ": the pipeline is broken";
  }
  expect_matches_golden(csv);
}

}  // namespace
}  // namespace tessera
