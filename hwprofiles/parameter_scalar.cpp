// SPDX-License-Identifier: Apache-2.0
// The numbers of the parameter table a fit can move (parameters.h Scalar): numeric entries as
// they are, and each head dim of a map of fractions as a number of its own.
#include <fmt/format.h>

#include <charconv>

#include "base/error.h"
#include "hwprofiles/parameters.h"

namespace tessera::hw {

namespace {

AttentionModel::Point* entry_of(const Scalar& s, Profile& p) {
  for (AttentionModel::Point& pt : *s.parameter->points(p)) {
    if (pt.head_dim == s.key) {
      return &pt;
    }
  }
  throw base::InputError(fmt::format("{}: profile '{}' has no entry for head dim {} (it has {})",
                                     s.path, p.name, s.key, s.parameter->write(p)));
}

}  // namespace

double Scalar::get(const Profile& p) const {
  if (!is_map_entry()) {
    return parameter->get(p);
  }
  // entry_of only finds the point; nothing is written through the copy.
  Profile copy = p;
  return entry_of(*this, copy)->fraction;
}

void Scalar::set(Profile& p, double value) const {
  if (is_map_entry()) {
    entry_of(*this, p)->fraction = value;
  } else {
    parameter->set(p, value);
  }
}

std::string Scalar::format(double value) const {
  return is_map_entry() ? fmt::format("{:.4g}", value) : format_parameter(*parameter, value);
}

std::optional<Scalar> find_scalar(std::string_view path) {
  const Parameter* p = find_parameter(path);
  if (p != nullptr) {
    if (p->kind == Parameter::Kind::kCustom || p->kind == Parameter::Kind::kFlag) {
      return std::nullopt;
    }
    return Scalar{p, 0, std::string(path), p->lo, p->hi};
  }
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos) {
    return std::nullopt;
  }
  p = find_parameter(path.substr(0, dot));
  const std::string_view key = path.substr(dot + 1);
  int head_dim = 0;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), head_dim);
  if (p == nullptr || p->points == nullptr || ec != std::errc{} || end != key.data() + key.size() ||
      head_dim < 1) {
    return std::nullopt;
  }
  return Scalar{p, head_dim, std::string(path), 0.0, 1.0};
}

}  // namespace tessera::hw
