// SPDX-License-Identifier: Apache-2.0
// The device mesh: rank <-> (tp, dp, pp) coordinates under a configurable axis order
// (innermost first; the default tp-dp-pp keeps tensor-parallel groups inside a node), and
// the communication groups along each axis.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::parallel {

struct Coord {
  std::array<std::int64_t, 3> at{};  // indexed by Axis
  [[nodiscard]] std::int64_t operator[](Axis a) const { return at[static_cast<std::size_t>(a)]; }
};

class Mesh {
 public:
  explicit Mesh(const ParallelConfig& p);
  [[nodiscard]] std::int64_t size() const { return size_; }
  [[nodiscard]] std::int64_t axis_size(Axis a) const { return dims_[static_cast<std::size_t>(a)]; }
  [[nodiscard]] Coord coord(std::int64_t rank) const;
  [[nodiscard]] std::int64_t rank(const Coord& c) const;
  // The ranks that differ from `rank` only along `a`, ordered by their coordinate on `a`.
  [[nodiscard]] std::vector<std::int32_t> group(std::int64_t rank, Axis a) const;
  // The neighbour `delta` steps along `a` (e.g. the next pipeline stage), or -1.
  [[nodiscard]] std::int64_t neighbour(std::int64_t rank, Axis a, std::int64_t delta) const;

 private:
  std::array<std::int64_t, 3> dims_{};
  std::vector<Axis> order_;
  std::int64_t size_ = 1;
};

}  // namespace tessera::synth::parallel
