// SPDX-License-Identifier: Apache-2.0
#include "sim/models/effects.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <vector>

#include "base/error.h"
#include "base/yaml_reader.h"

namespace tessera::models {

namespace {

// Adding an effect: one line here, and the model that owns it asks Effects::on(name).
constexpr std::array kEffects{
    EffectInfo{"kernel-launch",
               "a device-side launch floor per compute kernel (hwprofile launch.stream, or "
               "launch.graph with training.cuda_graphs)"},
    EffectInfo{"host-launch",
               "eager launches: a host thread per rank issues the kernels in order at "
               "launch.host each and waits at the syncs (an MoE router's counts); off, or with "
               "CUDA graphs: no host thread"},
    EffectInfo{"gemm-quantization",
               "GEMM tile and wave quantization and mainloop fill over k; off: every GEMM at "
               "the profile's max_fraction for its dtype"},
    EffectInfo{"collective-tuner",
               "the collective tuner: algorithm (ring, NVLS, mesh, one-shot, tree, "
               "hierarchical) and protocol (LL, LL128, Simple) by estimated time; off: Simple "
               "rings"},
    EffectInfo{"rail-alignment",
               "inter-node rings and all-to-alls keep each transfer on one rail (NCCL's PXN); "
               "off: transfers across rails go through the spine"},
    EffectInfo{"ring-local-step",
               "each loop of a ring collective ends with a local copy (or reduce) into the "
               "output that sends nothing, at the HBM streaming rate; off: rings keep their "
               "links busy throughout"},
    EffectInfo{"comm-interference",
               "compute kernels slow down while a collective is in flight on their device: "
               "compute-bound ones lose the collective's SMs, memory-bound ones its HBM "
               "bandwidth (sim/exec/interference.h)"},
    EffectInfo{"gemm-kernel-choice",
               "GEMMs pick the fastest of the profile's CTA tiles and split-K factors; off: the "
               "main tile only, no split-K"},
    EffectInfo{"gemm-latency", "a fixed device time per GEMM kernel (gemm.latency)"},
    EffectInfo{"gemm-sustained",
               "no GEMM runs faster than the part's best-shape rate (gemm.sustained, MAMF); off: "
               "the shape model alone, which extrapolates beyond it for large shapes"},
    EffectInfo{"attention-tables",
               "fused attention by pass, head dim, sequence length and causality (profile "
               "attention section); off: one flat attention_fraction"},
    EffectInfo{"memory-bound-ramp",
               "memory-bound kernels below hbm.half_size reach less of the HBM plateau; off: "
               "every kernel at the plateau"},
};

bool known(std::string_view name) {
  return std::any_of(kEffects.begin(), kEffects.end(),
                     [name](const EffectInfo& e) { return e.name == name; });
}

}  // namespace

std::span<const EffectInfo> known_effects() {
  return kEffects;
}

void Effects::disable(std::string_view name) {
  if (!known(name)) {
    std::vector<std::string_view> names;
    for (const EffectInfo& e : kEffects) {
      names.push_back(e.name);
    }
    std::string hint = base::nearest(name, names);
    throw base::InputError(
        hint.empty() ? fmt::format("unknown effect '{}'; known: {}", name, fmt::join(names, ", "))
                     : fmt::format("unknown effect '{}'; did you mean '{}'?", name, hint));
  }
  auto it = std::lower_bound(off_.begin(), off_.end(), name);
  if (it == off_.end() || *it != name) {
    off_.insert(it, std::string(name));
  }
}

bool Effects::on(std::string_view name) const {
  if (!known(name)) {
    throw base::InternalError(fmt::format("a model asked for unregistered effect '{}'", name));
  }
  return !std::binary_search(off_.begin(), off_.end(), name);
}

}  // namespace tessera::models
