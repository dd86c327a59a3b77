// SPDX-License-Identifier: Apache-2.0
#include "synth/parallel/mesh.h"

namespace tessera::synth::parallel {

Mesh::Mesh(const ParallelConfig& p) : order_(p.order) {
  dims_[static_cast<std::size_t>(Axis::kTP)] = p.tp;
  dims_[static_cast<std::size_t>(Axis::kDP)] = p.dp;
  dims_[static_cast<std::size_t>(Axis::kPP)] = p.pp;
  size_ = p.tp * p.dp * p.pp;
}

Coord Mesh::coord(std::int64_t rank) const {
  Coord c;
  for (Axis a : order_) {
    auto n = axis_size(a);
    c.at[static_cast<std::size_t>(a)] = rank % n;
    rank /= n;
  }
  return c;
}

std::int64_t Mesh::rank(const Coord& c) const {
  std::int64_t r = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    r = r * axis_size(*it) + c[*it];
  }
  return r;
}

std::vector<std::int32_t> Mesh::group(std::int64_t rank_id, Axis a) const {
  Coord c = coord(rank_id);
  std::vector<std::int32_t> out;
  for (std::int64_t i = 0; i < axis_size(a); ++i) {
    c.at[static_cast<std::size_t>(a)] = i;
    out.push_back(static_cast<std::int32_t>(rank(c)));
  }
  return out;
}

std::int64_t Mesh::neighbour(std::int64_t rank_id, Axis a, std::int64_t delta) const {
  Coord c = coord(rank_id);
  std::int64_t i = c[a] + delta;
  if (i < 0 || i >= axis_size(a)) {
    return -1;
  }
  c.at[static_cast<std::size_t>(a)] = i;
  return rank(c);
}

}  // namespace tessera::synth::parallel
