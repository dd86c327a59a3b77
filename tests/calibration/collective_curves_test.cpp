// SPDX-License-Identifier: Apache-2.0
// Reproduction of the published collective curves (calibration/microbench/collectives.yaml):
// each curve is simulated row by row (one collective on a cluster of the shipped profile and
// topology) and printed as predicted vs measured bus bandwidth. Rows whose log2(bytes) is even
// were used to calibrate the profiles' collective parameters; rows whose log2(bytes) is odd
// are held out (docs/collectives.md). Every row from 1 MiB to 8 GiB is printed. The asserted
// curves (8-GPU groups: H200, A100, XLA's H100) must be within 10% on every row from
// 16 MiB to 8 GiB; rows from 1 to 8 MiB are printed and counted. XLA's groups of 4 and 2
// (they lose more bandwidth than the ring's local last step explains, while nccl-tests on
// H200 and B200 lose almost none: RingBusbwByGpuCount) and XLA's B200 table (not monotone
// from 16 to 64 MiB) are printed, not asserted (docs/collectives.md 4.2).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/calibration/collective_bench.h"

namespace tessera::calibration {
namespace {

using graph::CollType;

constexpr double kMinBytes = 1 << 20;
constexpr double kMaxBytes = 8.0 * (1 << 30);
constexpr double kAssertFrom = 16.0 * (1 << 20);
constexpr double kTolerance = 0.10;

struct Curve {
  std::string table;
  std::string op;      // XLA's op column ("" : the table has one op)
  std::string groups;  // XLA's groups column, "g x n"
  int bytes_col = 0;
  int busbw_col = 1;
  BenchSetup setup;
  std::string note;  // what the curve is and what is an estimate
  bool asserted = true;
};

struct Row {
  double bytes = 0.0;
  double measured = 0.0;
};

YAML::Node table_of(const std::string& id) {
  static const YAML::Node doc =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/calibration/microbench/collectives.yaml");
  for (const YAML::Node& e : doc) {
    if (e["id"].as<std::string>() == id) {
      return e["table"];
    }
  }
  throw std::runtime_error("collectives.yaml has no entry " + id);
}

std::vector<Row> rows_of(const Curve& c) {
  std::vector<Row> out;
  for (const YAML::Node& r : table_of(c.table)["rows"]) {
    if (!c.op.empty() && (r[0].as<std::string>() != c.op || r[1].as<std::string>() != c.groups)) {
      continue;
    }
    out.push_back({r[c.bytes_col].as<double>(), r[c.busbw_col].as<double>()});
  }
  return out;
}

bool held_out(double bytes) {
  return static_cast<int>(std::lround(std::log2(bytes))) % 2 == 1;
}

BenchSetup node_setup(const std::string& profile, int groups, int size, CollType type) {
  BenchSetup s;
  s.profile = profile;
  s.groups = groups;
  s.size = size;
  s.type = type;
  return s;
}

Curve xla(const std::string& part, const std::string& op, CollType type, int groups) {
  const int size = 8 / groups;
  const std::string shape = std::to_string(groups) + "x" + std::to_string(size);
  const bool b200 = part == "b200";
  Curve c{b200 ? "xla-perf-table-b200-collectives" : "xla-perf-table-h100-collectives",
          op,
          shape,
          2,
          4,
          node_setup(b200 ? "b200" : "h100-sxm", groups, size, type),
          "8x " + std::string(b200 ? "B200" : "H100") + ", XLA over NCCL, " + op + " " + shape};
  if (size < 8) {
    c.asserted = false;
    c.note +=
        " (not asserted: XLA's groups of 4 and 2 lose more than the ring's last step explains)";
  } else if (b200) {
    c.asserted = false;
    c.note += " (not asserted: the table is not monotone from 16 to 64 MiB)";
  }
  return c;
}

std::vector<Curve> curves() {
  std::vector<Curve> out;
  out.push_back({"stas-h200-8gpu-allreduce-sweep-nvls", "", "", 0, 1,
                 node_setup("h200-sxm", 1, 8, CollType::kAllReduce),
                 "8x H200 all-reduce (NCCL 2.27: ring LL to 1 MiB, NVLS above)"});
  out.push_back({"stas-a100-8gpu-allreduce-nccltests", "", "", 0, 3,
                 node_setup("a100-sxm-80gb", 1, 8, CollType::kAllReduce),
                 "8x A100 all-reduce, nccl-tests (ring; the A100 NVSwitch does not reduce)"});
  for (const char* part : {"h100", "b200"}) {
    for (int groups : {1, 2, 4}) {
      out.push_back(xla(part, "all-reduce", CollType::kAllReduce, groups));
      out.push_back(xla(part, "all-gather", CollType::kAllGather, groups));
      out.push_back(xla(part, "reduce-scatter", CollType::kReduceScatter, groups));
    }
  }
  return out;
}

struct Tally {
  int asserted = 0;  // rows from 16 MiB on, asserted curves
  int failed = 0;
  int small = 0;  // rows from 1 to 8 MiB, asserted curves
  int small_beyond = 0;
  double sum_abs = 0.0;  // over asserted curves' rows
  int rows = 0;
  double held_sum_abs = 0.0;
  int held = 0;
};

void count(const Curve& c, double bytes, double err, Tally& t) {
  if (!c.asserted) {
    return;
  }
  const double e = std::abs(err);
  ++t.rows;
  t.sum_abs += e;
  if (held_out(bytes)) {
    ++t.held;
    t.held_sum_abs += e;
  }
  if (bytes < kAssertFrom) {
    ++t.small;
    t.small_beyond += e > kTolerance ? 1 : 0;
    return;
  }
  ++t.asserted;
  t.failed += e > kTolerance ? 1 : 0;
}

void check_curve(const Curve& c, Tally& tally) {
  std::printf("\n%s [%s]\n  %12s %10s %10s %8s\n", c.note.c_str(), c.table.c_str(), "bytes",
              "pred GB/s", "meas GB/s", "error");
  for (const Row& r : rows_of(c)) {
    if (r.bytes < kMinBytes || r.bytes > kMaxBytes) {
      continue;
    }
    const double pred = run_collective(c.setup, r.bytes).busbw_gbps;
    const double err = pred / r.measured - 1.0;
    std::printf("  %12.0f %10.1f %10.1f %+7.1f%% %s\n", r.bytes, pred, r.measured, 100.0 * err,
                held_out(r.bytes) ? "held out" : "");
    count(c, r.bytes, err, tally);
    if (c.asserted && r.bytes >= kAssertFrom) {
      EXPECT_LE(std::abs(err), kTolerance)
          << c.table << " " << c.op << " " << c.groups << " at " << r.bytes << " bytes";
    }
  }
}

// The only multi-node sweep point the file has on a profile we ship: 4 nodes x 8 H200 on
// AWS EFA (16 x 200 Gb/s per node = 400 Gb/s per GPU, as h100-sxm's NDR NIC), ring forced,
// 4 GiB: one point, asserted at 10%. The NIC side is an estimate (EFA is not InfiniBand,
// h100-sxm's scale_out efficiency comes from maintainers' statements, not a sweep).
TEST(CollectiveCurves, MultiNodeRingPointWithinTenPercent) {
  BenchSetup s = node_setup("h100-sxm", 1, 32, CollType::kAllReduce);
  s.topology = "dgx-h100-superpod";
  s.devices = 32;
  const double measured =
      table_of("stas-h200-4node-efa-ring-vs-nvlstree")["rows"][0][1].as<double>();  // default
  const double pred = run_collective(s, 4.0 * (1 << 30)).busbw_gbps;
  std::printf(
      "\n4 x 8 H200 over EFA, all-reduce 4 GiB, NCCL default (ring) measured; the tuner's "
      "choice simulated (NIC side an estimate): predicted "
      "%.1f GB/s busbw, measured %.1f (%+.1f%%)\n",
      pred, measured, 100.0 * (pred / measured - 1.0));
  EXPECT_LE(std::abs(pred / measured - 1.0), kTolerance);
}

// Ring all-reduce busbw against the number of GPUs in one node (stas-nvls-gain-vs-gpu-count:
// nccl-tests, NCCL 2.27.7, 8 GiB, NVLS disabled): nearly flat from 4 to 8 GPUs on H200 and
// B200, which the ring's local last step (a copy at HBM speed, 2 x bytes / n per member)
// predicts; none of it was fitted (the profiles' efficiencies come from the 8-GPU rows of
// other tables). Asserted at 10%. The NVLS column is printed beside it.
TEST(CollectiveCurves, RingBusbwByGpuCountWithinTenPercent) {
  std::printf(
      "\nall-reduce 8 GiB vs GPUs in the node [stas-nvls-gain-vs-gpu-count]\n  %6s %4s "
      "%14s %14s %14s %14s\n",
      "system", "gpus", "ring pred", "ring meas", "default pred", "default meas");
  for (const YAML::Node& r : table_of("stas-nvls-gain-vs-gpu-count")["rows"]) {
    const std::string system = r[0].as<std::string>();
    const int n = r[1].as<int>();
    BenchSetup s = node_setup(system == "H200" ? "h200-sxm" : "b200", 1, n, CollType::kAllReduce);
    const double bytes = 8.0 * (1 << 30);
    const double tuned = run_collective(s, bytes).busbw_gbps;
    s.nvls = false;
    const double ring = run_collective(s, bytes).busbw_gbps;
    const double ring_meas = r[4].as<double>();
    const double meas = r[3].as<double>();
    std::printf("  %6s %4d %7.1f %+5.1f%% %14.1f %7.1f %+5.1f%% %14.1f\n", system.c_str(), n, ring,
                100.0 * (ring / ring_meas - 1.0), ring_meas, tuned, 100.0 * (tuned / meas - 1.0),
                meas);
    EXPECT_LE(std::abs(ring / ring_meas - 1.0), kTolerance) << system << " " << n;
  }
}

// 4 nodes x 8 B200 over AWS EFA (8 x 400 Gb/s per node, as the b200 profile's one 400 Gb/s
// NIC per GPU), all-reduce, NCCL 2.27.7 (stas-b200-1node-vs-4node-allreduce-efa). Asserted at
// 10% where the NICs bound the ring (512 MiB to 8 GiB); below, EFA's per-call cost (0.4 ms
// from 1 to 16 MiB, milliseconds for tiny messages) is far above InfiniBand's, and the
// shipped fabrics are InfiniBand: printed, not asserted.
TEST(CollectiveCurves, FourNodeB200CurveWithinTenPercentWhereNicBound) {
  BenchSetup s = node_setup("b200", 1, 32, CollType::kAllReduce);
  s.topology = "dgx-h100-superpod";
  s.devices = 32;
  std::printf(
      "\n4 x 8 B200 over EFA, all-reduce [stas-b200-1node-vs-4node-allreduce-efa]\n  %12s %10s "
      "%10s %8s\n",
      "bytes", "pred GB/s", "meas GB/s", "error");
  constexpr double kNicBoundFrom = 512.0 * (1 << 20);
  for (const YAML::Node& r : table_of("stas-b200-1node-vs-4node-allreduce-efa")["rows"]) {
    const double bytes = r[0].as<double>();
    if (bytes < kMinBytes || bytes > kMaxBytes) {
      continue;
    }
    const double measured = r[2].as<double>();
    const double pred = run_collective(s, bytes).busbw_gbps;
    const double err = pred / measured - 1.0;
    std::printf("  %12.0f %10.1f %10.1f %+7.1f%% %s\n", bytes, pred, measured, 100.0 * err,
                bytes >= kNicBoundFrom ? "asserted" : "");
    if (bytes >= kNicBoundFrom) {
      EXPECT_LE(std::abs(err), kTolerance) << bytes;
    }
  }
}

TEST(CollectiveCurves, PublishedSingleNodeCurvesWithinTenPercent) {
  Tally tally;
  for (const Curve& c : curves()) {
    check_curve(c, tally);
  }
  std::printf(
      "\ncalibrated curves, %d rows from 1 MiB to 8 GiB: mean |error| %.1f%%, held-out rows "
      "%.1f%% (%d rows)\n  16 MiB - 8 GiB: %d rows, %d beyond 10%% (asserted)\n  1 - 8 MiB: %d "
      "rows, %d beyond 10%% (printed, not asserted)\n",
      tally.rows, 100.0 * tally.sum_abs / std::max(tally.rows, 1),
      100.0 * tally.held_sum_abs / std::max(tally.held, 1), tally.held, tally.asserted,
      tally.failed, tally.small, tally.small_beyond);
}

}  // namespace
}  // namespace tessera::calibration
