// SPDX-License-Identifier: Apache-2.0
// Distributions of symbolic tensors over the device mesh (the STAGE design): each dimension
// is replicated or sharded over one parallel axis, and the tensor as a whole may be a
// partial sum over some axes. Dimensions are einsum labels whose sizes live in a SymbolTable.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::synth::stg {

constexpr std::uint8_t kReplicated = 0xff;
constexpr int kMaxDims = 6;
constexpr int kNumAxes = kNumMeshAxes;  // Axis::kTP .. kEDP

using AxisMask = std::uint8_t;
constexpr AxisMask axis_bit(Axis a) {
  return static_cast<AxisMask>(1u << static_cast<unsigned>(a));
}

// Sizes of the symbolic dimensions (by label) and of the mesh axes.
class SymbolTable {
 public:
  void bind(char label, std::int64_t size);
  void set_axis(Axis a, std::int64_t size) { axes_[static_cast<std::size_t>(a)] = size; }
  [[nodiscard]] std::int64_t size(char label) const;
  [[nodiscard]] std::int64_t axis_size(Axis a) const { return axes_[static_cast<std::size_t>(a)]; }
  [[nodiscard]] std::int64_t axis_size(std::uint8_t a) const {
    return a == kReplicated ? 1 : axes_[a];
  }

 private:
  std::array<std::int64_t, 128> sizes_{};
  std::array<std::int64_t, kNumAxes> axes_{1, 1, 1, 1, 1, 1, 1};
};

struct Layout {
  std::string labels;  // one einsum label per dimension, e.g. "bsh"
  std::array<std::uint8_t, kMaxDims> shard{kReplicated, kReplicated, kReplicated,
                                           kReplicated, kReplicated, kReplicated};
  AxisMask partial = 0;  // partial sum over these axes

  Layout() = default;
  explicit Layout(std::string l) : labels(std::move(l)) {}
  Layout& sharded(char label, Axis a);                   // builder-style helpers
  [[nodiscard]] std::uint8_t axis_of(char label) const;  // kReplicated if absent/replicated
  [[nodiscard]] int find(char label) const;
  [[nodiscard]] bool uses_axis(std::uint8_t a) const;
  [[nodiscard]] std::string str() const;  // "[b/dp, s/tp, h] partial(tp)"
  bool operator==(const Layout&) const = default;
};

// The layout with its partial sums resolved (what a consumer of the whole value needs).
inline Layout without_partial(Layout l) {
  l.partial = 0;
  return l;
}

// Local (per-device) element count of a tensor with this layout.
std::int64_t local_elements(const Layout& l, const SymbolTable& sym);
std::int64_t local_size(char label, std::uint8_t axis, const SymbolTable& sym);
std::string_view axis_name(std::uint8_t a);

}  // namespace tessera::synth::stg
