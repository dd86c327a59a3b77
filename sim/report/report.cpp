// SPDX-License-Identifier: Apache-2.0
#include "sim/report/report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <ostream>

#include "base/error.h"
#include "sim/report/collective_table.h"
#include "sim/report/config_fields.h"
#include "sim/report/expert_load.h"

namespace tessera::sim::report {

using base::format_bytes;
using base::format_seconds;

Metrics compute_metrics(const graph::ExecGraph& g, const RunStats& r, std::int64_t devices) {
  Metrics m;
  double capacity = r.step_time_s * static_cast<double>(devices) * r.peak_flops;
  if (capacity > 0.0) {
    m.mfu = g.info.model_flops / capacity;
    m.mfu_causal = (g.info.model_flops - 0.5 * g.info.causal_attention_flops) / capacity;
    m.hfu = g.info.hardware_flops / capacity;
  }
  if (r.step_time_s > 0.0) {
    m.tokens_per_s = g.info.tokens / r.step_time_s;
    m.tokens_per_s_per_device = m.tokens_per_s / static_cast<double>(devices);
  }
  auto n = static_cast<double>(std::max<std::size_t>(1, r.ranks.size()));
  for (const RankStats& k : r.ranks) {
    m.compute_s += k.compute_s / n;
    for (std::size_t c = 0; c < m.compute_by_class_s.size(); ++c) {
      m.compute_by_class_s[c] += k.compute_by_class_s[c] / n;
    }
    for (int i = 0; i < graph::kNumGroupKinds; ++i) {
      m.exposed_comm_s[static_cast<std::size_t>(i)] +=
          k.exposed_comm_s[static_cast<std::size_t>(i)] / n;
      m.comm_s[static_cast<std::size_t>(i)] += k.comm_s[static_cast<std::size_t>(i)] / n;
    }
    m.host_wait_s += k.host_wait_s / n;
    m.idle_s += k.idle_s / n;
    for (std::size_t i = 0; i < m.comm_bytes.size(); ++i) {
      m.comm_bytes[i] += k.sent_bytes[i] / n;
    }
    if (k.peak_memory > m.peak_hbm) {
      m.peak_hbm = k.peak_memory;
      m.peak_rank = k.rank;
      m.peak_breakdown = k.peak_breakdown;
    }
    m.oom = m.oom || k.oom;
  }
  return m;
}

namespace {

double pct(double part, double whole) {
  return whole > 0.0 ? 100.0 * part / whole : 0.0;
}

std::string kind_name(int i) {
  return std::string(graph::group_kind_name(static_cast<graph::GroupKind>(i)));
}

// The peak's parts in a fixed order, with their summary.json keys.
std::vector<std::pair<std::string, double>> breakdown_parts(const MemoryBreakdown& b) {
  return {{"weights", b.weights},
          {"gradients", b.gradients},
          {"optimizer", b.optimizer},
          {"activations", b.activations},
          {"comm_buffers", b.comm_buffers}};
}

void print_memory(std::ostream& out, const RunStats& r, const Metrics& m) {
  fmt::print(out, "  peak HBM         {} of {} usable (rank {}){}\n", format_bytes(m.peak_hbm),
             format_bytes(r.hbm_capacity), m.peak_rank, m.oom ? "  OUT OF MEMORY" : "");
  for (const auto& [name, bytes] : breakdown_parts(m.peak_breakdown)) {
    std::string label = name == "comm_buffers" ? "comm buffers" : name;
    fmt::print(out, "    {:<17} {:>10}  {:5.1f} %\n", label, format_bytes(bytes),
               pct(bytes, m.peak_hbm));
  }
}

// Bytes a rank sends per group kind (mean over ranks), the kinds the run uses.
void print_comm_bytes(std::ostream& out, const Metrics& m) {
  std::string parts;
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    double b = m.comm_bytes[static_cast<std::size_t>(i)];
    if (b > 0.0 || i <= static_cast<int>(graph::GroupKind::kPP)) {
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", kind_name(i), format_bytes(b));
    }
  }
  fmt::print(out, "  sent per rank    {}   (mean over ranks; ring bytes on the wire)\n", parts);
}

}  // namespace

void print_summary(std::ostream& out, const RunLabel& label, const graph::ExecGraph& g,
                   const RunStats& r, const Metrics& m) {
  double t = r.step_time_s;
  fmt::print(out, "{}: {} on {} x {} ({}), {}, {} schedule{}\n", label.scenario, label.model,
             label.devices, label.hardware, label.topology, label.parallelism, label.schedule,
             label.microbatches > 0
                 ? fmt::format(", {} microbatches per replica", label.microbatches)
                 : "");
  if (!label.effects_off.empty()) {
    fmt::print(out, "  effects off      {}\n", fmt::join(label.effects_off, ", "));
  }
  fmt::print(out, "  step time        {}\n", format_seconds(t));
  fmt::print(out,
             "  MFU              {:.1f} %   (HFU {:.1f} %)   attention without causal halving\n",
             100.0 * m.mfu, 100.0 * m.hfu);
  if (g.info.causal_attention_flops > 0.0) {
    fmt::print(out, "  MFU causal       {:.1f} %   causal attention FLOPs halved\n",
               100.0 * m.mfu_causal);
  }
  fmt::print(out, "  throughput       {:.0f} tokens/s per device ({:.0f} tokens/s total)\n",
             m.tokens_per_s_per_device, m.tokens_per_s);
  fmt::print(out, "  model FLOPs      {:.4g} per step\n", g.info.model_flops);
  fmt::print(out, "  breakdown (mean over ranks):\n");
  auto row = [&](const std::string& name, double v, const std::string& more = "") {
    fmt::print(out, "    {:<17} {:>10}  {:5.1f} %{}\n", name, format_seconds(v), pct(v, t), more);
  };
  row("compute", m.compute_s);
  for (int c = 0; c < graph::kNumOpClasses; ++c) {
    double v = m.compute_by_class_s[static_cast<std::size_t>(c)];
    if (v > 0.0) {
      fmt::print(out, "      {:<15} {:>10}  {:5.1f} %\n",
                 graph::op_class_name(static_cast<graph::OpClass>(c)), format_seconds(v),
                 pct(v, t));
    }
  }
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    double e = m.exposed_comm_s[static_cast<std::size_t>(i)];
    const double busy = m.comm_s[static_cast<std::size_t>(i)];
    if (e > 0.0 || i <= static_cast<int>(graph::GroupKind::kPP)) {
      row("exposed " + kind_name(i) + " comm", e,
          busy > 0.0 ? fmt::format("   of {} in flight, {:.1f} % hidden", format_seconds(busy),
                                   pct(busy - e, busy))
                     : "");
    }
  }
  if (m.host_wait_s > 0.0) {
    row("waiting for host", m.host_wait_s, "   nothing on the device until the host issues it");
  }
  row("idle (bubble)", m.idle_s);
  if (r.host_step_s > 0.0) {
    row("host (step)", r.host_step_s, "   the profile's under_load.step");
  }
  print_comm_bytes(out, m);
  print_collectives(out, r);
  print_expert_load(out, r, m);
  print_memory(out, r, m);
  for (const std::string& note : g.info.notes) {
    fmt::print(out, "  note: {}\n", note);
  }
}

nlohmann::json summary_json(const RunLabel& label, const graph::ExecGraph& g, const RunStats& r,
                            const Metrics& m) {
  nlohmann::json exposed = nlohmann::json::object();
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    exposed[kind_name(i)] = m.exposed_comm_s[static_cast<std::size_t>(i)];
  }
  nlohmann::json sent = nlohmann::json::object();
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    sent[kind_name(i)] = m.comm_bytes[static_cast<std::size_t>(i)];
  }
  nlohmann::json peak_parts = nlohmann::json::object();
  for (const auto& [name, bytes] : breakdown_parts(m.peak_breakdown)) {
    peak_parts[name] = bytes;
  }
  nlohmann::json by_class = nlohmann::json::object();
  for (int c = 0; c < graph::kNumOpClasses; ++c) {
    by_class[std::string(graph::op_class_name(static_cast<graph::OpClass>(c)))] =
        m.compute_by_class_s[static_cast<std::size_t>(c)];
  }
  nlohmann::json j = {
      {"scenario", label.scenario},
      {"model", label.model},
      {"hardware", label.hardware},
      {"topology", label.topology},
      {"parallelism", label.parallelism},
      {"schedule", label.schedule},
      {"devices", label.devices},
      {"microbatches", label.microbatches},
      {"step_time_s", r.step_time_s},
      {"mfu", m.mfu},
      {"mfu_causal", m.mfu_causal},
      {"hfu", m.hfu},
      {"tokens_per_s", m.tokens_per_s},
      {"tokens_per_s_per_device", m.tokens_per_s_per_device},
      {"model_flops_per_step", g.info.model_flops},
      {"hardware_flops_per_step", g.info.hardware_flops},
      {"flops_convention", g.info.flops_convention},
      {"peak_flops_per_device", r.peak_flops},
      {"peak_hbm_bytes", m.peak_hbm},
      {"peak_hbm_rank", m.peak_rank},
      {"peak_hbm_breakdown_bytes", peak_parts},
      {"comm_bytes", sent},
      {"hbm_capacity_bytes", r.hbm_capacity},
      {"out_of_memory", m.oom},
      {"breakdown",
       {{"compute_s", m.compute_s},
        {"compute_by_op_s", by_class},
        {"exposed_comm_s", exposed},
        {"host_wait_s", m.host_wait_s},
        {"idle_s", m.idle_s},
        {"host_step_s", r.host_step_s}}},
      {"notes", g.info.notes},
      {"rank0_collectives", collectives_json(r)},
      {"simulated_ranks", r.simulated_ranks},
      {"events", r.events},
  };
  for (const ConfigField& f : config_fields(label, g.info.config)) {
    j[f.name] = f.value;
  }
  if (!label.effects_off.empty()) {
    j["effects_off"] = label.effects_off;
  }
  if (r.expert_loads) {
    j["expert_load"] = expert_load_json(r, m);
  }
  return j;
}

void write_ranks_csv(const std::string& path, const RunStats& r) {
  std::ofstream out(path);
  if (!out) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "cannot write file");
  }
  out << "rank,stage,end_s,compute_s";
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    out << ",exposed_" << kind_name(i) << "_s";
  }
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    out << ",comm_" << kind_name(i) << "_s";
  }
  out << ",host_wait_s,idle_s,flops,static_memory_bytes,peak_memory_bytes,oom";
  for (int i = 0; i < graph::kNumGroupKinds; ++i) {
    out << ",sent_" << kind_name(i) << "_bytes";
  }
  for (const auto& part : breakdown_parts({})) {
    out << ",peak_" << part.first << "_bytes";
  }
  out << ",tp_index,dp_index"
      << (r.expert_loads ? ",expert_load,expert_load_max,dropped_tokens" : "") << "\n";
  for (const RankStats& k : r.ranks) {
    out << fmt::format("{},{},{:.9g},{:.9g}", k.rank, k.stage, k.end_s, k.compute_s);
    for (double e : k.exposed_comm_s) {
      out << fmt::format(",{:.9g}", e);
    }
    for (double c : k.comm_s) {
      out << fmt::format(",{:.9g}", c);
    }
    out << fmt::format(",{:.9g},{:.9g},{:.9g},{:.0f},{:.0f},{}", k.host_wait_s, k.idle_s, k.flops,
                       k.static_memory, k.peak_memory, k.oom ? 1 : 0);
    for (double b : k.sent_bytes) {
      out << fmt::format(",{:.0f}", b);
    }
    for (const auto& part : breakdown_parts(k.peak_breakdown)) {
      out << fmt::format(",{:.0f}", part.second);
    }
    out << fmt::format(",{},{}", k.tp_index, k.dp_index);
    if (r.expert_loads) {
      out << fmt::format(",{:.6g},{:.6g},{:.6g}", k.expert_load, k.expert_load_max,
                         k.dropped_tokens);
    }
    out << "\n";
  }
}

}  // namespace tessera::sim::report
