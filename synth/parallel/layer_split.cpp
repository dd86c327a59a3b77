// SPDX-License-Identifier: Apache-2.0
#include "synth/parallel/layer_split.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace tessera::synth::parallel {

std::vector<std::int64_t> layer_bounds(std::int64_t layers, std::int64_t stages,
                                       const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(stages) + 1, 0);
  if (counts.empty()) {
    for (std::int64_t i = 0; i <= stages; ++i) {
      bounds[static_cast<std::size_t>(i)] = i * (layers / stages) + std::min(i, layers % stages);
    }
    return bounds;
  }
  if (static_cast<std::int64_t>(counts.size()) != stages ||
      std::accumulate(counts.begin(), counts.end(), std::int64_t{0}) != layers ||
      std::any_of(counts.begin(), counts.end(), [](std::int64_t c) { return c < 0; })) {
    throw base::InternalError("layer_bounds: the stage layer counts do not fit the pipeline");
  }
  std::partial_sum(counts.begin(), counts.end(), bounds.begin() + 1);
  return bounds;
}

std::vector<std::int64_t> first_last_split(std::int64_t layers, std::int64_t stages,
                                           std::int64_t first, std::int64_t last) {
  const std::int64_t fixed = (first > 0 ? 1 : 0) + (last > 0 ? 1 : 0);
  const std::int64_t rest_stages = stages - fixed;
  const std::int64_t rest = layers - first - last;
  if (stages < 2 || first < 0 || last < 0 || rest < 0 || (rest_stages == 0 && rest != 0) ||
      (rest_stages > 0 && rest % rest_stages != 0)) {
    return {};
  }
  const std::int64_t each = rest_stages > 0 ? rest / rest_stages : 0;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(stages), each);
  if (first > 0) {
    counts.front() = first;
  }
  if (last > 0) {
    counts.back() = last;
  }
  return counts;
}

std::vector<std::int64_t> stage_layer_counts(const ParallelConfig& p, std::int64_t layers,
                                             std::int64_t stages) {
  if (!p.stage_layers.empty()) {
    return p.stage_layers;
  }
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    return first_last_split(layers, stages, p.first_stage_layers, p.last_stage_layers);
  }
  return {};
}

}  // namespace tessera::synth::parallel
