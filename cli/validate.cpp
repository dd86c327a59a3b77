// SPDX-License-Identifier: Apache-2.0
// `tessera validate SCENARIO --measured trace_rank*.json[.gz]`: puts a scenario's simulated
// step next to measured PyTorch profiler (Kineto) traces, category by category: kernel
// counts and compute time, communication volume per collective, step time and peak memory.
// Rows whose two sides are not the same thing (a measured catch-all against several
// simulated classes, a category only one side has) are printed and marked, never dropped.
#include <fmt/format.h>

#include <array>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/pipeline.h"
#include "measured/iterations.h"
#include "measured/kineto_reader.h"

namespace tessera::cli {

namespace kineto = measured;
using graph::CollType;
using graph::OpClass;

namespace {

struct Side {
  double count = 0.0;  // per iteration (measured: mean over iterations)
  double time_s = 0.0;
  std::optional<double> bytes;  // communication rows
};

struct Row {
  std::string section;  // "compute", "communication"
  std::string category;
  Side measured;
  Side simulated;
  std::string match;  // "one-to-one", "grouped: ...", "measured only", "simulated only"
};

struct Comparison {
  std::string file;
  std::int32_t rank = 0;
  std::int32_t sim_rank = 0;
  std::string note;
  std::size_t iterations = 0;
  std::vector<Row> rows;
  double measured_step_s = 0.0;
  double simulated_step_s = 0.0;
  std::optional<double> measured_peak;
  double simulated_peak = 0.0;
};

// Per-iteration means of the measured side.
struct Measured {
  std::array<double, kineto::kNumCategories> count{}, time_s{};
  std::array<double, kineto::kNumCommTypes> comm_count{}, comm_bytes{}, comm_time_s{};
  std::array<bool, kineto::kNumCommTypes> comm_size_known{};
  double step_s = 0.0;
  std::size_t iterations = 0;
};

Measured measure(const kineto::IterationSet& set) {
  Measured m;
  m.comm_size_known.fill(true);
  for (const auto& it : set.iterations) {
    if (it.activities.empty()) {
      continue;
    }
    ++m.iterations;
    for (int c = 0; c < kineto::kNumCategories; ++c) {
      m.count[c] += static_cast<double>(it.count[c]);
      m.time_s[c] += static_cast<double>(it.time_ns[c]) * 1e-9;
    }
    for (int c = 0; c < kineto::kNumCommTypes; ++c) {
      m.comm_count[c] += static_cast<double>(it.comm[c].count);
      m.comm_bytes[c] += static_cast<double>(it.comm[c].bytes);
      m.comm_time_s[c] += static_cast<double>(it.comm[c].time_ns) * 1e-9;
      m.comm_size_known[c] = m.comm_size_known[c] && it.comm[c].unknown_size == 0;
    }
    m.step_s += static_cast<double>(it.span_ns()) * 1e-9;
  }
  auto n = static_cast<double>(std::max<std::size_t>(1, m.iterations));
  for (auto* arr : {&m.count, &m.time_s}) {
    for (double& v : *arr) {
      v /= n;
    }
  }
  for (auto* arr : {&m.comm_count, &m.comm_bytes, &m.comm_time_s}) {
    for (double& v : *arr) {
      v /= n;
    }
  }
  m.step_s /= n;
  return m;
}

std::string match_of(const Side& m, const Side& s, const std::string& pairing) {
  if (m.count == 0.0 && s.count == 0.0) {
    return "";
  }
  if (s.count == 0.0) {
    return "measured only";
  }
  if (m.count == 0.0) {
    return "simulated only";
  }
  return pairing;
}

Comparison compare_trace(const kineto::KinetoTrace& t, const experiments::Outcome& o) {
  const std::string& file = t.path;
  kineto::IterationSet set = kineto::find_iterations(t);
  Measured m = measure(set);
  Comparison c;
  c.file = file;
  c.rank = std::max(0, t.dist.rank);
  c.iterations = m.iterations;
  c.note = set.note;
  c.sim_rank = c.rank < o.graph.num_ranks ? c.rank : 0;
  if (c.rank >= o.graph.num_ranks) {
    c.note += fmt::format(
        "; measured rank {} is not in the scenario ({} ranks): compared with "
        "simulated rank 0",
        c.rank, o.graph.num_ranks);
  }
  const graph::RankGraph& rg = o.graph.graph_of(c.sim_rank);
  const sim::RankStats& rs = o.stats.ranks.at(static_cast<std::size_t>(c.sim_rank));
  std::array<double, graph::kNumOpClasses> ops{};
  std::array<double, 5> colls{}, coll_bytes{};
  double p2p = 0.0, p2p_bytes = 0.0;
  for (const graph::Node& n : rg.nodes) {
    if (n.kind == graph::NodeKind::kCompute) {
      ++ops[static_cast<std::size_t>(n.op)];
    } else if (n.kind == graph::NodeKind::kCollective) {
      ++colls[static_cast<std::size_t>(n.coll)];
      coll_bytes[static_cast<std::size_t>(n.coll)] += n.bytes;
    } else {
      ++p2p;
      p2p_bytes += n.bytes;
    }
  }
  auto sim_side = [&](std::initializer_list<OpClass> classes) {
    Side s;
    for (OpClass k : classes) {
      s.count += ops[static_cast<std::size_t>(k)];
      s.time_s += rs.compute_by_class_s[static_cast<std::size_t>(k)];
    }
    return s;
  };
  auto meas_side = [&](std::initializer_list<kineto::Category> cats) {
    Side s;
    for (kineto::Category k : cats) {
      s.count += m.count[static_cast<std::size_t>(k)];
      s.time_s += m.time_s[static_cast<std::size_t>(k)];
    }
    return s;
  };
  auto add = [&](std::string section, std::string category, Side ms, Side ss,
                 const std::string& pairing) {
    std::string match = match_of(ms, ss, pairing);
    if (!match.empty()) {
      c.rows.push_back({std::move(section), std::move(category), ms, ss, match});
    }
  };
  using K = kineto::Category;
  add("compute", "gemm", meas_side({K::kGemm}), sim_side({OpClass::kGemm}), "one-to-one");
  add("compute", "attention", meas_side({K::kAttention}), sim_side({OpClass::kAttention}),
      "one-to-one");
  add("compute", "norm", meas_side({K::kNorm}), sim_side({OpClass::kNorm}), "one-to-one");
  add("compute", "optimizer", meas_side({K::kOptimizer}), sim_side({OpClass::kOptimizer}),
      "one-to-one");
  add("compute", "elementwise/other", meas_side({K::kElementwise}),
      sim_side({OpClass::kElementwise, OpClass::kSoftmax, OpClass::kEmbedding, OpClass::kLoss}),
      "grouped: simulated elementwise+softmax+embedding+loss");
  add("compute", "memcpy/memset", meas_side({K::kMemcpy, K::kMemset}), sim_side({OpClass::kCopy}),
      "grouped: simulated copy/cast kernels");
  using T = kineto::CommType;
  auto comm_meas = [&](T type) {
    Side s;
    auto i = static_cast<std::size_t>(type);
    s.count = m.comm_count[i];
    s.time_s = m.comm_time_s[i];
    if (m.comm_size_known[i]) {
      s.bytes = m.comm_bytes[i];
    }
    return s;
  };
  auto comm_sim = [&](CollType type) {
    auto i = static_cast<std::size_t>(type);
    return Side{colls[i], 0.0, coll_bytes[i]};
  };
  add("communication", "all-reduce", comm_meas(T::kAllReduce), comm_sim(CollType::kAllReduce),
      "one-to-one");
  add("communication", "all-gather", comm_meas(T::kAllGather), comm_sim(CollType::kAllGather),
      "one-to-one");
  add("communication", "reduce-scatter", comm_meas(T::kReduceScatter),
      comm_sim(CollType::kReduceScatter), "one-to-one");
  add("communication", "broadcast", comm_meas(T::kBroadcast), comm_sim(CollType::kBroadcast),
      "one-to-one");
  add("communication", "all-to-all", comm_meas(T::kAllToAll), comm_sim(CollType::kAllToAll),
      "one-to-one");
  add("communication", "send/recv", comm_meas(T::kSendRecv), Side{p2p, 0.0, p2p_bytes},
      "grouped: one SendRecv kernel may carry both a send and a receive");
  add("communication", "reduce", comm_meas(T::kReduce), Side{}, "");
  add("communication", "other", comm_meas(T::kOther), Side{}, "");
  c.measured_step_s = m.step_s;
  c.simulated_step_s = o.stats.step_time_s;
  if (std::int64_t p = t.peak_allocated(); p >= 0) {
    c.measured_peak = static_cast<double>(p);
  }
  c.simulated_peak = rs.peak_memory;
  return c;
}

std::string fmt_opt_bytes(const std::optional<double>& b) {
  return b ? base::format_bytes(*b) : std::string("n/a");
}

void print_text(const std::string& scenario, const experiments::Outcome& o, const Comparison& c) {
  fmt::print("{} vs {} (measured rank {}, simulated rank {})\n", scenario, c.file, c.rank,
             c.sim_rank);
  fmt::print("  {}; measured values are per-iteration means over {} iterations\n", c.note,
             c.iterations);
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}  {}\n", "per step", "measured", "simulated",
             "measured", "simulated", "match");
  for (const Row& r : c.rows) {
    if (r.section == "compute") {
      fmt::print("  {:<32} {:>10.1f} {:>10.0f} {:>12} {:>12}  {}\n", r.category + " kernels",
                 r.measured.count, r.simulated.count, base::format_seconds(r.measured.time_s),
                 base::format_seconds(r.simulated.time_s), r.match);
    } else {
      fmt::print("  {:<32} {:>10.1f} {:>10.0f} {:>12} {:>12}  {}\n", r.category + " collectives",
                 r.measured.count, r.simulated.count, fmt_opt_bytes(r.measured.bytes),
                 fmt_opt_bytes(r.simulated.bytes), r.match);
    }
  }
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}\n", "step time", "", "",
             base::format_seconds(c.measured_step_s), base::format_seconds(c.simulated_step_s));
  fmt::print("  {:<32} {:>10} {:>10} {:>12} {:>12}{}\n", "peak memory", "", "",
             fmt_opt_bytes(c.measured_peak), base::format_bytes(c.simulated_peak),
             c.measured_peak ? "" : "  (no memory events in the trace)");
  (void)o;
}

nlohmann::json side_json(const Side& s, bool comm) {
  nlohmann::json j = {{"count", s.count}};
  if (comm) {
    j["bytes"] = s.bytes ? nlohmann::json(*s.bytes) : nlohmann::json(nullptr);
  } else {
    j["time_s"] = s.time_s;
  }
  return j;
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& r : c.rows) {
    bool comm = r.section == "communication";
    rows.push_back({{"section", r.section},
                    {"category", r.category},
                    {"measured", side_json(r.measured, comm)},
                    {"simulated", side_json(r.simulated, comm)},
                    {"match", r.match}});
  }
  return {{"file", c.file},
          {"measured_rank", c.rank},
          {"simulated_rank", c.sim_rank},
          {"iterations", c.iterations},
          {"note", c.note},
          {"rows", rows},
          {"step_time_s", {{"measured", c.measured_step_s}, {"simulated", c.simulated_step_s}}},
          {"peak_memory_bytes",
           {{"measured", c.measured_peak ? nlohmann::json(*c.measured_peak) : nlohmann::json()},
            {"simulated", c.simulated_peak}}}};
}

}  // namespace

int validate(const ValidateArgs& a) {
  check_input_file("scenario", a.scenario);
  for (const std::string& f : a.measured) {
    check_input_file("measured trace", f);
  }
  synth::Scenario s = synth::load_scenario(a.scenario, a.sets);
  // Read every trace first: a bad file fails before the simulation runs.
  std::vector<kineto::KinetoTrace> traces;
  for (const std::string& f : a.measured) {
    traces.push_back(kineto::read_kineto(f));
  }
  experiments::Outcome o = experiments::simulate_scenario(s, true, false);
  nlohmann::json all = nlohmann::json::array();
  for (const kineto::KinetoTrace& t : traces) {
    Comparison c = compare_trace(t, o);
    if (a.format == "json") {
      all.push_back(to_json(c));
    } else {
      print_text(s.name, o, c);
    }
  }
  if (a.format == "json") {
    nlohmann::json out = {
        {"scenario", s.name}, {"simulated_step_time_s", o.stats.step_time_s}, {"traces", all}};
    std::cout << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace tessera::cli
