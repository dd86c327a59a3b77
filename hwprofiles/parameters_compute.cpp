// SPDX-License-Identifier: Apache-2.0
// The profile keys of the device itself: names, peaks, HBM, the GEMM and attention kernel
// models, launch costs and what a training run adds under load (docs/compute_model.md,
// docs/calibration.md).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <vector>

#include "hwprofiles/link_spec_yaml.h"
#include "hwprofiles/parameter_builders.h"

namespace tessera::hw {

namespace {

using namespace table;  // NOLINT(google-build-using-namespace): the table's vocabulary
using base::YamlNode;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kSpec = "spec sheet (docs/hardware.md)";
constexpr const char* kMicro = "fitted to calibration/microbench/ (docs/calibration.md)";
constexpr const char* kRuns = "fitted to measured runs by `tessera calibrate`";

bool parse_int(std::string_view text, int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= 1 && out <= 4096;
}

void read_tiles(const YamlNode& node, Profile& p) {
  if (!node.is_seq() || node.items().empty()) {
    node.fail("expected a list of CTA tiles, the library's main one first",
              "e.g. [\"128x256\", \"128x128\", \"64x128\"]");
  }
  p.gemm.tiles.clear();
  for (const YamlNode& item : node.items()) {
    std::string text = item.as_string();
    auto x = text.find('x');
    GemmTile t;
    if (x == std::string::npos || !parse_int(std::string_view(text).substr(0, x), t.m) ||
        !parse_int(std::string_view(text).substr(x + 1), t.n)) {
      item.fail(fmt::format("expected a CTA tile 'MxN' (1..4096 each), got '{}'", text),
                "e.g. \"128x256\"");
    }
    p.gemm.tiles.push_back(t);
  }
}

std::string write_tiles(const Profile& p) {
  std::string out;
  for (const GemmTile& t : p.gemm.tiles) {
    out += fmt::format("{}\"{}x{}\"", out.empty() ? "" : ", ", t.m, t.n);
  }
  return "[" + out + "]";
}

std::vector<AttentionModel::Point> read_points(const YamlNode& node) {
  node.expect_map();
  std::vector<AttentionModel::Point> points;
  for (const std::string& key : node.keys()) {
    AttentionModel::Point pt;
    if (!parse_int(key, pt.head_dim)) {
      throw base::InputError(node.key_loc(key),
                             fmt::format("expected a head dim (1..4096), got '{}'", key),
                             "map head dims to fractions, e.g. {64: 0.55, 128: 0.7}");
    }
    pt.fraction = read_fraction(node.at(key));
    points.push_back(pt);
  }
  if (points.empty()) {
    node.fail("expected at least one head dim", "e.g. {128: 0.7}");
  }
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.head_dim < b.head_dim; });
  return points;
}

std::string write_points(const std::vector<AttentionModel::Point>& points) {
  std::string out;
  for (const auto& pt : points) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", pt.head_dim, pt.fraction);
  }
  return "{" + out + "}";
}

// A map of fractions by head dim, read, written and reached entry by entry through Ref (a
// generic lambda returning the profile's vector of points).
template <auto Ref>
Parameter points_map(std::string_view path, std::string_view doc, std::string_view source) {
  Parameter p = custom(
      path, true, doc, source, [](const YamlNode& n, Profile& pr) { Ref(pr) = read_points(n); },
      [](const Profile& pr) { return write_points(Ref(pr)); });
  p.points = [](Profile& pr) { return &Ref(pr); };
  return p;
}

using D = Dimension;

// The part: its peaks and HBM.
std::vector<Parameter> device_keys() {
  return {
      custom(
          "description", true, "one line: the part and the system it sits in", "",
          [](const YamlNode& n, Profile& p) { p.description = n.as_string(); },
          [](const Profile& p) { return fmt::format("\"{}\"", p.description); }),
      quantity("peak.bf16", D::kFlopRate, 0, kInf, true, "dense BF16 tensor-core peak", kSpec,
               field<[](auto& p) -> auto& { return p.peak_flops[0]; }>()),
      quantity("peak.fp16", D::kFlopRate, 0, kInf, false, "dense FP16 tensor-core peak", kSpec,
               field<[](auto& p) -> auto& { return p.peak_flops[1]; }>()),
      quantity("peak.fp32", D::kFlopRate, 0, kInf, false,
               "FP32 peak of the path PyTorch uses for fp32 GEMMs", kSpec,
               field<[](auto& p) -> auto& { return p.peak_flops[2]; }>()),
      quantity("peak.fp8", D::kFlopRate, 0, kInf, false, "dense FP8 tensor-core peak", kSpec,
               field<[](auto& p) -> auto& { return p.peak_flops[3]; }>()),
      quantity("vector_flops", D::kFlopRate, 1, kInf, true,
               "FP32 rate of the non-matrix (vector) units", kSpec,
               field<[](auto& p) -> auto& { return p.vector_flops; }>()),
      quantity("hbm.capacity", D::kBytes, 1, kInf, true, "HBM per device", kSpec,
               field<[](auto& p) -> auto& { return p.hbm_capacity; }>()),
      quantity("hbm.bandwidth", D::kBandwidth, 1, kInf, true, "HBM bandwidth, read + write", kSpec,
               field<[](auto& p) -> auto& { return p.hbm_bandwidth; }>()),
      fraction("hbm.efficiency", true, "fraction of hbm.bandwidth large streaming kernels reach",
               kMicro, field<[](auto& p) -> auto& { return p.hbm_efficiency; }>()),
      quantity("hbm.half_size", D::kBytes, 0, kInf, true,
               "bytes at which a streaming kernel reaches half of that rate", kMicro,
               field<[](auto& p) -> auto& { return p.hbm_half_bytes; }>()),
      quantity("hbm.reserved", D::kBytes, 0, kInf, true,
               "memory the runtime keeps (CUDA context, library workspaces, fragmentation)",
               "nvidia-smi of an idle process + NCCL buffers (estimate)",
               field<[](auto& p) -> auto& { return p.reserved_memory; }>()),
  };
}

// The GEMM kernel model (hwprofiles/gemm_model.h).
std::vector<Parameter> gemm_keys() {
  return {
      custom("gemm.tiles", true, "CTA tiles the GEMM library chooses from, the main one first",
             "the vendor library's kernel names", &read_tiles, &write_tiles),
      integer("gemm.compute_units", 1, 100000, true, "SMs (or AI cores): tiles per wave", kSpec,
              field<[](auto& p) -> auto& { return p.gemm.compute_units; }>()),
      fraction("gemm.max_fraction.bf16", true, "steady fraction of the BF16 peak of the main tile",
               kMicro, field<[](auto& p) -> auto& { return p.gemm.max_fraction; }>()),
      fraction("gemm.max_fraction.fp8", false, "the same for FP8 (absent: as bf16)", kMicro,
               field<[](auto& p) -> auto& { return p.gemm.max_fraction_fp8; }>()),
      fraction("gemm.max_fraction.fp32", false, "the same for FP32 (absent: as bf16)", kMicro,
               field<[](auto& p) -> auto& { return p.gemm.max_fraction_fp32; }>()),
      integer("gemm.k_half", 0, 1 << 20, true,
              "k (per split) at which the mainloop runs at half its steady rate", kMicro,
              field<[](auto& p) -> auto& { return p.gemm.k_half; }>()),
      number("gemm.small_tile_exponent", 0, 4, true,
             "a tile of less operand reuse than the main one runs at (reuse ratio)^this", kMicro,
             field<[](auto& p) -> auto& { return p.gemm.small_tile_exponent; }>()),
      quantity("gemm.latency", D::kTime, 0, 1, true,
               "device time every GEMM kernel takes beyond its math", kMicro,
               time_field<[](auto& p) -> auto& { return p.gemm.latency; }>()),
      quantity("gemm.split_k_overhead", D::kTime, 0, 1, true,
               "a split-K GEMM's reduction beyond its HBM traffic", kMicro,
               time_field<[](auto& p) -> auto& { return p.gemm.split_k_overhead; }>()),
      quantity("gemm.sustained.bf16", D::kFlopRate, 0, kInf, false,
               "the BF16 rate no GEMM exceeds: the best shape of a shape sweep (MAMF)",
               "mamf-* tables of calibration/microbench/gemm.yaml",
               field<[](auto& p) -> auto& { return p.gemm.sustained_bf16; }>()),
      quantity("gemm.sustained.fp8", D::kFlopRate, 0, kInf, false, "the same for FP8",
               "mamf-* tables of calibration/microbench/gemm.yaml",
               field<[](auto& p) -> auto& { return p.gemm.sustained_fp8; }>()),
      fitted(number("gemm.mxfp8_rate", 0.5, 1.0, false,
                    "what an MXFP8 GEMM (block scales applied in the MMA; fp8_recipe: mxfp8) "
                    "sustains of a per-tensor FP8 GEMM's rate and ceiling (1: the same)",
                    "no public microbenchmark: fitted by `tessera calibrate` to runs that "
                    "differ only in the FP8 recipe",
                    field<[](auto& p) -> auto& { return p.gemm.mxfp8_rate; }>())),
  };
}

// Fused attention, launch costs and what a training run adds under load.
std::vector<Parameter> kernel_keys() {
  return {points_map < [](auto& p) -> auto& {return p.attention.forward;
}
> ("attention.forward", "fused attention's forward fraction of peak, by head dim", kMicro),
    points_map < [](auto& p) -> auto& {
  return p.attention.backward;
}
> ("attention.backward", "the same for the backward pass", kMicro),
    integer("attention.seq_half.forward", 0, 1 << 24, true,
            "tokens at which the forward reaches half its plateau", kMicro,
            field<[](auto& p) -> auto& { return p.attention.seq_half_forward; }>()),
    integer("attention.seq_half.backward", 0, 1 << 24, true, "the same for the backward", kMicro,
            field<[](auto& p) -> auto& { return p.attention.seq_half_backward; }>()),
    number("attention.causal_seq_factor", 1, 16, true,
           "a causal kernel ramps as if the sequence were this many times shorter", kMicro,
           field<[](auto& p) -> auto& { return p.attention.causal_seq_factor; }>()),
    quantity("launch.stream", D::kTime, 0, 1e-3, true,
             "device-side floor per kernel launched on a stream",
             "overheads.yaml gpu-small-kernels-launch-floor",
             time_field<[](auto& p) -> auto& { return p.launch.stream; }>()),
    quantity("launch.graph", D::kTime, 0, 1e-3, true, "the same inside a replayed CUDA graph",
             "overheads.yaml gpu-small-kernels-launch-floor",
             time_field<[](auto& p) -> auto& { return p.launch.graph; }>()),
    fitted(quantity("launch.host", D::kTime, 1e-6, 1e-4, true,
                    "the host thread's eager cost per kernel it issues (framework, driver)",
                    "overheads.yaml eager-elementwise-op-cost; then measured runs",
                    time_field<[](auto& p) -> auto& { return p.launch.host; }>())),
    fitted(quantity("launch.host_expert", D::kTime, 0, 1e-3, false,
                    "the host thread's further cost per local expert of a grouped expert op "
                    "issued expert by expert (model.moe.grouped_gemm: per_expert; 0: none)",
                    kRuns, time_field<[](auto& p) -> auto& { return p.launch.host_expert; }>())),
    fitted(number("under_load.math", 0.5, 1.0, false,
                  "fraction of its microbenchmarked math rate (tensor and vector units) the "
                  "part sustains through a training run: every GPU of the node at its power "
                  "limit for hours, where a microbenchmark runs one GPU for seconds (1: none)",
                  kRuns, field<[](auto& p) -> auto& { return p.under_load.math; }>())),
    fitted(number("under_load.attention", 0.5, 1.5, false,
                  "what a fused-attention kernel sustains in a run of its microbenchmarked "
                  "rate, relative to under_load.math (1: the same fraction as the GEMMs)",
                  kRuns, field<[](auto& p) -> auto& { return p.under_load.attention; }>())),
    quantity("power.tdp", D::kPower, 0, 5000, false,
             "board power the part is rated for (0: no power model)", kSpec,
             field<[](auto& p) -> auto& { return p.power.tdp; }>()),
    quantity("power.idle", D::kPower, 0, 2000, false,
             "board power with the clocks up and nothing running",
             "nvidia-smi of an idle part (estimate)",
             field<[](auto& p) -> auto& { return p.power.idle; }>()),
    number("power.exponent", 0.3, 1.0, false,
           "how the math clocks follow a cap (cluster.power_limit): a GEMM's rates scale by "
           "((limit - idle) / (tdp - idle))^this, a kernel less busy than a GEMM less; 1/3 for "
           "voltage-and-frequency scaling, 1 at the voltage floor",
           "power-gb300-powercap-gemm of calibration/microbench/gemm.yaml (0.9)",
           field<[](auto& p) -> auto& { return p.power.exponent; }>()),
    fitted(quantity("under_load.step", D::kTime, 0, 2, false,
                    "host time a training step adds outside its kernels (the step's "
                    "synchronisation, logging, the data loader's hand-off; 0: none)",
                    kRuns, time_field<[](auto& p) -> auto& { return p.under_load.step; }>())),
};  // namespace
}  // namespace tessera::hw

// FlashAttention-2's kernels, where they differ from the platform's best (training.attention:
// flash2); the same shape as `attention`.
std::vector<Parameter> fa2_keys() {
  constexpr const char* kFa2 = "fitted to fa2-* and the SDPA flash backend rows of attention.yaml";
  const std::vector<Parameter> keys = {
      points_map < [](auto& p) -> auto& {return p.attention_fa2.value().forward;
}
> ("attention.fa2.forward", "FlashAttention-2's forward fraction of peak, by head dim", kFa2),
    points_map < [](auto& p) -> auto& {
  return p.attention_fa2.value().backward;
}
> ("attention.fa2.backward", "the same for its backward pass", kFa2),
    integer("attention.fa2.seq_half.forward", 0, 1 << 24, true,
            "tokens at which its forward reaches half its plateau", kFa2,
            field<[](auto& p) -> auto& { return p.attention_fa2.value().seq_half_forward; }>()),
    integer("attention.fa2.seq_half.backward", 0, 1 << 24, true, "the same for its backward", kFa2,
            field<[](auto& p) -> auto& { return p.attention_fa2.value().seq_half_backward; }>()),
    number("attention.fa2.causal_seq_factor", 1, 16, true,
           "its causal kernel ramps as if the sequence were this many times shorter", kFa2,
           field<[](auto& p) -> auto& { return p.attention_fa2.value().causal_seq_factor; }>()),
}
;
std::vector<Parameter> out;
for (const Parameter& k : keys) {
  out.push_back(in_group(k, "attention.fa2"));
}
return out;
}

std::vector<Parameter> build() {
  std::vector<Parameter> out = device_keys();
  for (auto part : {gemm_keys(), kernel_keys(), fa2_keys()}) {
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace

std::span<const Parameter> compute_parameters() {
  static const std::vector<Parameter> kTable = build();
  return kTable;
}

}  // namespace tessera::hw
