// SPDX-License-Identifier: Apache-2.0
#include "synth/stg/layout.h"

#include <fmt/format.h>

#include "base/error.h"

namespace tessera::synth::stg {

void SymbolTable::bind(char label, std::int64_t size) {
  sizes_[static_cast<unsigned char>(label) & 0x7f] = size;
}

std::int64_t SymbolTable::size(char label) const {
  std::int64_t s = sizes_[static_cast<unsigned char>(label) & 0x7f];
  if (s <= 0) {
    throw base::InternalError(fmt::format("symbolic dimension '{}' has no size", label));
  }
  return s;
}

Layout& Layout::sharded(char label, Axis a) {
  int i = find(label);
  if (i < 0) {
    throw base::InternalError(fmt::format("layout {} has no dimension '{}'", labels, label));
  }
  shard[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a);
  return *this;
}

int Layout::find(char label) const {
  auto pos = labels.find(label);
  return pos == std::string::npos ? -1 : static_cast<int>(pos);
}

std::uint8_t Layout::axis_of(char label) const {
  int i = find(label);
  return i < 0 ? kReplicated : shard[static_cast<std::size_t>(i)];
}

bool Layout::uses_axis(std::uint8_t a) const {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (shard[i] == a) {
      return true;
    }
  }
  return false;
}

std::string_view axis_name(std::uint8_t a) {
  switch (a) {
    case static_cast<std::uint8_t>(Axis::kTP):
      return "tp";
    case static_cast<std::uint8_t>(Axis::kDP):
      return "dp";
    case static_cast<std::uint8_t>(Axis::kPP):
      return "pp";
    case static_cast<std::uint8_t>(Axis::kCP):
      return "cp";
    case static_cast<std::uint8_t>(Axis::kETP):
      return "etp";
    case static_cast<std::uint8_t>(Axis::kEP):
      return "ep";
    case static_cast<std::uint8_t>(Axis::kEDP):
      return "edp";
    default:
      return "-";
  }
}

std::string Layout::str() const {
  std::string out = "[";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += (i ? ", " : "") + std::string(1, labels[i]);
    if (shard[i] != kReplicated) {
      out += "/" + std::string(axis_name(shard[i]));
    }
  }
  out += "]";
  if (partial != 0) {
    out += " partial(";
    for (std::uint8_t a = 0; a < kNumAxes; ++a) {
      if ((partial >> a) & 1u) {
        out += std::string(axis_name(a));
      }
    }
    out += ")";
  }
  return out;
}

std::int64_t local_size(char label, std::uint8_t axis, const SymbolTable& sym) {
  std::int64_t n = sym.size(label);
  std::int64_t k = sym.axis_size(axis);
  if (n % k != 0) {
    throw base::InternalError(
        fmt::format("dimension '{}' of size {} does not split over {} ranks", label, n, k));
  }
  return n / k;
}

std::int64_t local_elements(const Layout& l, const SymbolTable& sym) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < l.labels.size(); ++i) {
    if (__builtin_mul_overflow(n, local_size(l.labels[i], l.shard[i], sym), &n) ||
        n > (std::int64_t{1} << 56)) {
      throw base::InputError(fmt::format(
          "a tensor of shape [{}] would hold more than 2^56 elements per device; the model or "
          "batch dimensions are too large to simulate",
          l.labels));
    }
  }
  return n;
}

}  // namespace tessera::synth::stg
