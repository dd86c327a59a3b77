// SPDX-License-Identifier: Apache-2.0
#include "synth/parallel/mesh.h"

#include <algorithm>

namespace tessera::synth::parallel {

namespace {

constexpr std::size_t idx(Axis a) {
  return static_cast<std::size_t>(a);
}

}  // namespace

Mesh::Mesh(const ParallelConfig& p) : order_(p.order) {
  dims_[idx(Axis::kTP)] = p.tp;
  dims_[idx(Axis::kDP)] = p.dp;
  dims_[idx(Axis::kPP)] = p.pp;
  dims_[idx(Axis::kCP)] = p.cp;
  dims_[idx(Axis::kETP)] = p.etp;
  dims_[idx(Axis::kEP)] = p.ep;
  dims_[idx(Axis::kEDP)] = p.edp();
  size_ = p.stage_ranks() * p.pp;
}

Coord Mesh::coord(std::int64_t rank) const {
  Coord c;
  std::int64_t local = 0;  // the stage-local index: tp, cp and dp in the mesh order
  std::int64_t stride = 1;
  for (Axis a : order_) {
    auto n = dim(a);
    c.at[idx(a)] = rank % n;
    rank /= n;
    if (a != Axis::kPP) {
      local += c.at[idx(a)] * stride;
      stride *= n;
    }
  }
  c.at[idx(Axis::kETP)] = local % dim(Axis::kETP);
  c.at[idx(Axis::kEP)] = local / dim(Axis::kETP) % dim(Axis::kEP);
  c.at[idx(Axis::kEDP)] = local / (dim(Axis::kETP) * dim(Axis::kEP));
  return c;
}

std::int64_t Mesh::rank(const Coord& c) const {
  std::int64_t r = 0;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    r = r * dim(*it) + c[*it];
  }
  return r;
}

std::int64_t Mesh::rank_on(Coord c, Axis a) const {
  if (!expert_axis(a)) {
    return rank(c);
  }
  // Back from the expert coordinates to the stage-local index, then to tp, cp and dp.
  std::int64_t local =
      c[Axis::kETP] + dim(Axis::kETP) * (c[Axis::kEP] + dim(Axis::kEP) * c[Axis::kEDP]);
  for (Axis o : order_) {
    if (o != Axis::kPP) {
      c.at[idx(o)] = local % dim(o);
      local /= dim(o);
    }
  }
  return rank(c);
}

std::vector<std::int32_t> Mesh::group(std::int64_t rank_id, Axis a) const {
  Coord c = coord(rank_id);
  std::vector<std::int32_t> out;
  for (std::int64_t i = 0; i < dim(a); ++i) {
    c.at[idx(a)] = i;
    out.push_back(static_cast<std::int32_t>(rank_on(c, a)));
  }
  return out;
}

std::vector<std::int32_t> Mesh::group(std::int64_t rank_id, std::span<const Axis> axes) const {
  std::vector<std::int32_t> out = {static_cast<std::int32_t>(rank_id)};
  for (Axis a : axes) {
    std::vector<std::int32_t> next;
    for (std::int32_t r : out) {
      for (std::int32_t m : group(r, a)) {
        next.push_back(m);
      }
    }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t Mesh::neighbour(std::int64_t rank_id, Axis a, std::int64_t delta) const {
  Coord c = coord(rank_id);
  std::int64_t i = c[a] + delta;
  if (i < 0 || i >= dim(a)) {
    return -1;
  }
  c.at[idx(a)] = i;
  return rank_on(c, a);
}

}  // namespace tessera::synth::parallel
