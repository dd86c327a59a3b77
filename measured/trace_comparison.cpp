// SPDX-License-Identifier: Apache-2.0
#include "measured/trace_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>

#include "measured/iterations.h"

namespace tessera::measured {

using graph::CollType;
using graph::OpClass;

namespace {

// Per-iteration means of the measured side.
struct Measured {
  std::array<double, kNumCategories> count{}, time_s{};
  std::array<double, kNumCommTypes> comm_count{}, comm_bytes{}, comm_time_s{};
  std::array<bool, kNumCommTypes> comm_size_known{};
  double step_s = 0.0;
  std::size_t iterations = 0;
};

Measured measure(const IterationSet& set) {
  Measured m;
  m.comm_size_known.fill(true);
  for (const auto& it : set.iterations) {
    if (it.activities.empty()) {
      continue;
    }
    ++m.iterations;
    for (int c = 0; c < kNumCategories; ++c) {
      m.count[c] += static_cast<double>(it.count[c]);
      m.time_s[c] += static_cast<double>(it.time_ns[c]) * 1e-9;
    }
    for (int c = 0; c < kNumCommTypes; ++c) {
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

std::string match_of(const ComparedSide& m, const ComparedSide& s, const std::string& pairing) {
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

// What one simulated rank's graph holds, by the categories the rows compare.
struct Simulated {
  std::array<double, graph::kNumOpClasses> ops{};
  std::array<double, 5> colls{}, coll_bytes{};
  double p2p = 0.0, p2p_bytes = 0.0;
};

Simulated count_simulated(const graph::RankGraph& rg) {
  Simulated s;
  for (const graph::Node& n : rg.nodes) {
    if (n.kind == graph::NodeKind::kCompute) {
      ++s.ops[static_cast<std::size_t>(n.op)];
    } else if (n.kind == graph::NodeKind::kCollective) {
      ++s.colls[static_cast<std::size_t>(n.coll)];
      s.coll_bytes[static_cast<std::size_t>(n.coll)] += n.bytes;
    } else {
      ++s.p2p;
      s.p2p_bytes += n.bytes;
    }
  }
  return s;
}

// Builds the rows: each pairs a measured and a simulated side; a pair with nothing on
// either side is left out, one with one side only is marked so.
class RowBuilder {
 public:
  RowBuilder(const Measured& m, const Simulated& sim, const sim::RankStats& rs,
             std::vector<ComparedRow>& rows)
      : m_(m), sim_(sim), rs_(rs), rows_(rows) {}

  void compute(const std::string& category, std::initializer_list<Category> cats,
               std::initializer_list<OpClass> classes, const std::string& pairing) {
    ComparedSide ms;
    for (Category k : cats) {
      ms.count += m_.count[static_cast<std::size_t>(k)];
      ms.time_s += m_.time_s[static_cast<std::size_t>(k)];
    }
    ComparedSide ss;
    for (OpClass k : classes) {
      ss.count += sim_.ops[static_cast<std::size_t>(k)];
      ss.time_s += rs_.compute_by_class_s[static_cast<std::size_t>(k)];
    }
    add("compute", category, ms, ss, pairing);
  }

  void comm(const std::string& category, CommType type, const ComparedSide& ss,
            const std::string& pairing) {
    auto i = static_cast<std::size_t>(type);
    ComparedSide ms{.count = m_.comm_count[i], .time_s = m_.comm_time_s[i], .bytes = {}};
    if (m_.comm_size_known[i]) {
      ms.bytes = m_.comm_bytes[i];
    }
    add("communication", category, ms, ss, pairing);
  }

  void collective(const std::string& category, CommType type, CollType coll) {
    auto i = static_cast<std::size_t>(coll);
    comm(category, type, ComparedSide{sim_.colls[i], 0.0, sim_.coll_bytes[i]}, "one-to-one");
  }

 private:
  void add(const std::string& section, const std::string& category, const ComparedSide& ms,
           const ComparedSide& ss, const std::string& pairing) {
    std::string match = match_of(ms, ss, pairing);
    if (!match.empty()) {
      rows_.push_back({section, category, ms, ss, match});
    }
  }

  const Measured& m_;
  const Simulated& sim_;
  const sim::RankStats& rs_;
  std::vector<ComparedRow>& rows_;
};

void add_rows(RowBuilder& b, const Simulated& sim) {
  using K = Category;
  b.compute("gemm", {K::kGemm}, {OpClass::kGemm}, "one-to-one");
  b.compute("attention", {K::kAttention}, {OpClass::kAttention}, "one-to-one");
  b.compute("norm", {K::kNorm}, {OpClass::kNorm}, "one-to-one");
  b.compute("optimizer", {K::kOptimizer}, {OpClass::kOptimizer}, "one-to-one");
  b.compute("elementwise/other", {K::kElementwise},
            {OpClass::kElementwise, OpClass::kSoftmax, OpClass::kEmbedding, OpClass::kLoss},
            "grouped: simulated elementwise+softmax+embedding+loss");
  b.compute("memcpy/memset", {K::kMemcpy, K::kMemset}, {OpClass::kCopy},
            "grouped: simulated copy/cast kernels");
  using T = CommType;
  b.collective("all-reduce", T::kAllReduce, CollType::kAllReduce);
  b.collective("all-gather", T::kAllGather, CollType::kAllGather);
  b.collective("reduce-scatter", T::kReduceScatter, CollType::kReduceScatter);
  b.collective("broadcast", T::kBroadcast, CollType::kBroadcast);
  b.collective("all-to-all", T::kAllToAll, CollType::kAllToAll);
  b.comm("send/recv", T::kSendRecv, ComparedSide{sim.p2p, 0.0, sim.p2p_bytes},
         "grouped: one SendRecv kernel may carry both a send and a receive");
  b.comm("reduce", T::kReduce, ComparedSide{}, "");
  b.comm("other", T::kOther, ComparedSide{}, "");
}

}  // namespace

TraceComparison compare_trace(const KinetoTrace& t, const graph::ExecGraph& g,
                              const sim::RunStats& stats) {
  IterationSet set = find_iterations(t);
  Measured m = measure(set);
  TraceComparison c;
  c.file = t.path;
  c.rank = std::max(0, t.dist.rank);
  c.iterations = m.iterations;
  c.note = set.note;
  c.sim_rank = c.rank < g.num_ranks ? c.rank : 0;
  if (c.rank >= g.num_ranks) {
    c.note += fmt::format(
        "; measured rank {} is not in the scenario ({} ranks): compared with "
        "simulated rank 0",
        c.rank, g.num_ranks);
  }
  const sim::RankStats& rs = stats.ranks.at(static_cast<std::size_t>(c.sim_rank));
  Simulated sim = count_simulated(g.graph_of(c.sim_rank));
  RowBuilder builder(m, sim, rs, c.rows);
  add_rows(builder, sim);
  c.measured_step_s = m.step_s;
  c.simulated_step_s = stats.step_time_s;
  if (std::int64_t p = t.peak_allocated(); p >= 0) {
    c.measured_peak = static_cast<double>(p);
  }
  c.simulated_peak = rs.peak_memory;
  return c;
}

}  // namespace tessera::measured
