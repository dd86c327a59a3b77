// SPDX-License-Identifier: Apache-2.0
// The device mesh: rank <-> (tp, cp, dp, pp) coordinates under a configurable axis order
// (innermost first; the default tp-cp-dp-pp keeps tensor-parallel groups inside a node), and
// the communication groups along each axis. The expert axes fold a stage's devices again
// (Megatron-Core's MoE parallel folding): the stage-local index over tp, cp and dp, in the
// mesh order, is split into etp (innermost), ep and edp, so EP sits inside DP by default.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::parallel {

struct Coord {
  std::array<std::int64_t, kNumMeshAxes> at{};  // indexed by Axis
  [[nodiscard]] std::int64_t operator[](Axis a) const { return at[static_cast<std::size_t>(a)]; }
};

class Mesh {
 public:
  explicit Mesh(const ParallelConfig& p);
  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] std::int64_t axis_size(Axis a) const { return dims_[static_cast<std::size_t>(a)]; }
  // Every axis's coordinate, the expert axes' included.
  [[nodiscard]] Coord coord(std::int64_t rank) const;
  // The rank at c's tp, cp, dp and pp coordinates.
  [[nodiscard]] std::int64_t rank(const Coord& c) const;
  // The ranks that differ from `rank` only along `a`, ordered by their coordinate on `a`.
  [[nodiscard]] std::vector<std::int32_t> group(std::int64_t rank, Axis a) const;
  // The ranks that differ from `rank` only along the (non-expert) axes `axes`, in rank
  // order: Megatron's combined groups, such as data parallelism with context parallelism.
  [[nodiscard]] std::vector<std::int32_t> group(std::int64_t rank,
                                                std::span<const Axis> axes) const;
  // The neighbour `delta` steps along `a` (e.g. the next pipeline stage), or -1.
  [[nodiscard]] std::int64_t neighbour(std::int64_t rank, Axis a, std::int64_t delta) const;

 private:
  [[nodiscard]] std::int64_t dim(Axis a) const { return dims_[static_cast<std::size_t>(a)]; }
  [[nodiscard]] bool expert_axis(Axis a) const { return a >= Axis::kETP; }
  // The rank with c's coordinates on `a` and its family (the expert axes or the others).
  [[nodiscard]] std::int64_t rank_on(Coord c, Axis a) const;

  std::array<std::int64_t, kNumMeshAxes> dims_{};
  std::vector<Axis> order_;
  std::int64_t size_ = 1;
};

}  // namespace tessera::synth::parallel
