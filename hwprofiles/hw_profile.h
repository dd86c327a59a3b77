// SPDX-License-Identifier: Apache-2.0
// Device and link specifications of one accelerator part, loaded from hwprofiles/<name>.yaml.
// Every number in those files names its source. Peaks come from spec sheets; the efficiency
// parameters come from microbenchmark-level public data (GEMM efficiency curves, NCCL bus
// bandwidth tables), never from fitting end-to-end training runs.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/units.h"

namespace tessera::base {
struct SourceLoc;
class YamlNode;
}  // namespace tessera::base

namespace tessera::hw {

using base::DType;
using base::kNumDTypes;

// One CTA (thread-block) output tile a GEMM kernel library offers, rows x columns.
struct GemmTile {
  int m = 128;
  int n = 256;
};

// The GEMM kernel model (hwprofiles/gemm_model.h, docs/compute_model.md): the kernels a
// library chooses between (CTA tiles, split-K) with tile and wave quantization, the
// mainloop's fill over k, a fixed device time per GEMM and an HBM bound.
struct GemmModel {
  std::vector<GemmTile> tiles{GemmTile{}};  // candidate CTA tiles; the first is the main one
  int compute_units = 132;                  // SMs (NVIDIA) or AI cores (Ascend): tiles per wave
  double max_fraction = 0.8;                // bf16/fp16: fraction of peak of the main tile
  double max_fraction_fp8 = 0.0;            // fp8 (0: as bf16)
  double max_fraction_fp32 = 0.0;           // fp32 (0: as bf16)
  double k_half = 64.0;  // k (per split) at which the mainloop runs at half its steady rate
  // A tile of operand reuse I = tm*tn/(tm+tn) below the main tile's runs at (I/I_main)^this.
  double small_tile_exponent = 0.0;
  base::SimTime latency = 0;           // device time every GEMM kernel takes beyond its math
  base::SimTime split_k_overhead = 0;  // a split-K GEMM's reduction, beyond its HBM traffic
  // The sustained rate no GEMM exceeds, FLOP/s (0: none): the best shape of a brute-force
  // shape sweep (MAMF), where the part's clocks and power hold it, whatever the shape model
  // extrapolates for larger shapes.
  double sustained_bf16 = 0.0;
  double sustained_fp8 = 0.0;
  // What a GEMM that applies MX block scales in the MMA (fp8_recipe: mxfp8, Blackwell)
  // sustains of a per-tensor FP8 GEMM's rate and ceiling (docs/calibration.md Part 3).
  double mxfp8_rate = 1.0;

  // The steady fraction of peak of the main tile for `d`.
  [[nodiscard]] double fraction(base::DType d) const;
  // The sustained ceiling for `d` (bf16/fp16, fp8; 0: none).
  [[nodiscard]] double sustained(base::DType d) const;
};

// Fused attention efficiency (hwprofiles/attention_model.h): a plateau per direction and head
// dim, reached as the sequence fills the device (seq / (seq + seq_half)).
struct AttentionModel {
  struct Point {
    int head_dim = 128;
    double fraction = 0.6;  // of the dtype's dense peak, long sequences
  };
  std::vector<Point> forward{Point{}};   // sorted by head_dim
  std::vector<Point> backward{Point{}};  // sorted by head_dim
  double seq_half_forward = 0.0;         // tokens
  double seq_half_backward = 0.0;        // tokens
  double causal_seq_factor = 1.0;        // a causal kernel ramps as if seq were seq/this
};

// What launching one kernel costs (hwprofiles/launch section).
struct LaunchCosts {
  base::SimTime stream = 0;  // device-side floor per kernel launched on a stream
  base::SimTime graph = 0;   // the same inside a replayed CUDA graph
  base::SimTime host = 0;    // the host thread's eager cost per kernel issued (framework + driver)
  // The host's further cost per local expert of an op the framework runs expert by expert
  // (Transformer Engine's GroupedLinear: per-expert GEMM calls, quantizers, gradient hooks).
  base::SimTime host_expert = 0;
};

// One class of link: its one-direction bandwidth, per-hop latency and the fraction of the
// bandwidth a collective library achieves on it (protocol and synchronisation overhead).
struct LinkSpec {
  double bandwidth = 0.0;     // bytes/s, one direction
  base::SimTime latency = 0;  // per hop
  double efficiency = 1.0;    // achieved / peak, for large messages
};

// One NCCL protocol (LL, LL128, Simple): its fixed cost per call, its cost per algorithm
// step (on top of the route's wire latency) and the fraction of the Simple protocol's
// bandwidth it reaches (LL carries 4 bytes of data per 8-byte store, LL128 120 of 128).
struct ProtocolSpec {
  bool enabled = false;
  base::SimTime launch = 0;
  base::SimTime step = 0;
  double bandwidth = 1.0;
};

// In-switch reduction of the scale-up switch (NVLink SHARP, "NVLS"): each member sends and
// receives its data once through the switch. Absent (enabled = false) on parts whose switch
// does not reduce (A100 NVSwitch, HCCS has no switch).
struct SwitchReduction {
  bool enabled = false;
  base::SimTime latency = 0;  // per call, all in
  double efficiency = 1.0;    // fraction of the link's achieved (bandwidth x efficiency) rate
  int channels = 0;           // CTAs (one SM each) the NVLS kernel occupies
  int min_members = 2;        // smallest group the library runs NVLS for
};

// What a training run adds to the microbenchmarked device (fitted to measured runs by
// `tessera calibrate`, docs/calibration.md Part 3).
struct UnderLoad {
  // Fraction of the microbenchmarked math rates (tensor and vector units) a part sustains
  // through a training run, where every GPU of a node holds its power limit for hours.
  double math = 1.0;
  // What a fused-attention kernel sustains in a run of its microbenchmarked rate, relative to
  // `math` (1: the same fraction as the GEMMs; docs/calibration.md Part 3).
  double attention = 1.0;
  base::SimTime step = 0;  // host time each step adds outside its kernels
};

// Board power and how the math clocks follow a power cap below it (power.* keys). A kernel
// that keeps the tensor units as busy as a GEMM at the part's sustained rate (activity 1) draws
// the TDP at full clocks; under a cap its math rates scale by ((limit - idle) / (tdp - idle))^
// exponent, between the cubic law of voltage and frequency scaling (1/3) and the linear one at
// the voltage floor (1). Dynamic power is proportional to activity, so a kernel at activity a
// draws idle + (tdp - idle) x a at full clocks, and a cap slows it only by
// min(1, ((limit - idle) / ((tdp - idle) x a))^exponent): a fused-attention kernel at 40% of
// the GEMM rate keeps its clocks at a 500 W cap on a 700 W part (docs/calibration.md Part 3).
struct PowerModel {
  double tdp = 0.0;       // watts; 0: no power model
  double idle = 0.0;      // watts drawn with the clocks up and nothing running
  double exponent = 0.9;  // of the clock's response to the cap
  double limit = 0.0;     // the cluster's cap (cluster.power_limit), watts; 0: the TDP
  // The factor a cap puts on the math rates of a kernel at `activity` (1 without a cap, or at
  // or above the TDP; activity <= 0: 1).
  [[nodiscard]] double clock_scale(double activity = 1.0) const;
};

// What the collective tuner (sim/models/collective/tuner.h) knows about the library.
struct CollectiveTuning {
  ProtocolSpec ll;     // lowest latency, half the bandwidth
  ProtocolSpec ll128;  // NVLink only
  int channels = 1;    // CTAs (one SM each) a ring / one-shot / direct collective occupies
  SwitchReduction nvls;
};

struct Profile {
  std::string name;
  std::string description;
  // The profiles this one extends, nearest first (empty for a profile that extends none).
  std::vector<std::string> ancestors;
  std::array<double, kNumDTypes> peak_flops{};  // dense FLOP/s per dtype (0: unsupported)
  double vector_flops = 0.0;                    // FLOP/s of the non-matrix (vector) units, fp32
  double hbm_capacity = 0.0;                    // bytes
  double hbm_bandwidth = 0.0;                   // bytes/s, read + write combined
  double hbm_efficiency = 0.9;                  // achieved fraction for large streaming kernels
  double hbm_half_bytes = 0.0;   // bytes at which a streaming kernel reaches half of that
  double reserved_memory = 0.0;  // bytes the runtime/allocator keeps (context, fragmentation)
  GemmModel gemm;
  AttentionModel attention;
  // FlashAttention-2's kernels (training.attention: flash2) where they differ from the
  // platform's best (absent: the same tables, as on Ampere where FA2 is the best).
  std::optional<AttentionModel> attention_fa2;
  // A single fused-attention fraction of dense peak: forward + backward at head dim 128,
  // time-weighted (backward = 2.5x the FLOPs). Derived from `attention` when loaded; used
  // where one number is needed (retiming measured traces, `--without attention-tables`).
  double attention_fraction = 0.6;
  LaunchCosts launch;
  UnderLoad under_load;
  PowerModel power;
  int devices_per_node = 8;
  LinkSpec scale_up;                    // NVLink / HCCS / UB, per device per direction,
                                        // all of the device's scale-up links together
  LinkSpec scale_out;                   // NIC per device (InfiniBand / RoCE)
  base::SimTime collective_launch = 0;  // fixed cost per collective call (NCCL/HCCL setup)
  base::SimTime collective_step = 0;    // protocol cost per algorithm step on top of link latency
                                        // (launch and step are the Simple protocol's)
  CollectiveTuning collective;          // the other protocols, channels, in-switch reduction
  // FP8 GEMMs read both operands K-major only (Hopper WGMMA), so FP8 training keeps transposed
  // FP8 copies for the backward GEMMs; false where the tensor cores take either layout
  // (Blackwell). Given exactly when peak.fp8 is.
  bool fp8_transpose = false;
  // The tensor cores apply OCP MX block scales (E8M0 per 32 elements) in the MMA (Blackwell):
  // MXFP8 GEMMs run at the FP8 rate.
  bool mxfp8 = false;
  // How the part is named where a run or trace describes its hardware (a Kineto trace's
  // device name, a runs file's `cluster.hardware`): case-insensitive substrings, the longest
  // match over all profiles winning ("GB200" before "B200").
  std::vector<std::string> device_names;
  // The topology preset of the system the part ships in (a runs file's default; "" none).
  std::string topology;

  // Dense peak of `d` in FLOP/s; 0 when the part has no matrix path for that type.
  [[nodiscard]] double peak(DType d) const { return peak_flops[static_cast<std::size_t>(d)]; }
};

// `name_or_path`: a profile name (looked up in the installed hwprofiles/ folder) or a path
// to a YAML file. Throws base::InputError with file:line:col for a bad profile.
Profile load_profile(const std::string& name_or_path);
// The same, with errors about an unknown name reported at `where` (the referring YAML value).
Profile load_profile(const std::string& name_or_path, const base::SourceLoc& where);
// The file `name_or_path` names: a shipped profile's, or the path as given. An unknown name is
// an error at `where` with the nearest shipped name.
std::string profile_file(const std::string& name_or_path, const base::SourceLoc& where);
// Reads an already loaded profile document; `name` is the file stem. Every key is checked.
Profile profile_from_yaml(const base::YamlNode& root, const std::string& name);
std::vector<std::string> profile_names();  // the shipped profiles, sorted
// The shipped profile whose device_names has the longest case-insensitive match in `text`
// ("NVIDIA H100 80GB HBM3", "DGX-B200 (8x B200 180GB HBM3e, ...)"); "" when none matches.
std::string profile_for_device(std::string_view text);
std::string profiles_dir();

}  // namespace tessera::hw
