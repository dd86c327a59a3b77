// SPDX-License-Identifier: Apache-2.0
// The space `tessera search` explores: named axes (tp, pp, cp, schedule, ...), each with its
// values, whose product is the points. Points are numbered in one fixed mixed-radix order
// (the axes in registry order, the last one fastest), so that a number names the same point
// in every process, thread count and shard.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "synth/scenario/scenario.h"

namespace tessera::experiments::search {

// One axis a search may vary: its name in --vary and space files, what it sets, its default
// values for a scenario on some number of devices, and how one of its values applies.
struct Axis {
  std::string name;
  std::string help;
  // Sets `value` on `s`; base::InputError (a message, no location) when it cannot be read.
  std::function<void(synth::Scenario& s, const std::string& value)> apply;
  std::function<std::vector<std::string>(const synth::Scenario& s, std::int64_t devices)> defaults;
};

// Every axis, in the order a point applies them (search/axes.cpp).
const std::vector<Axis>& axes();
// The axis named `name`; base::InputError naming `where` with the nearest names otherwise.
const Axis& find_axis(std::string_view name, const std::string& where);

struct AxisValues {
  const Axis* axis = nullptr;
  std::vector<std::string> values;
};

class Space {
 public:
  // One entry per registered axis, in registry order, none empty.
  explicit Space(std::vector<AxisValues> axes);

  [[nodiscard]] const std::vector<AxisValues>& axes() const { return axes_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // Point `index`'s value per axis (indices into each axis's values).
  [[nodiscard]] std::vector<std::size_t> point(std::uint64_t index) const;
  // Axis `name` (base::InternalError when the space has none) and its position.
  [[nodiscard]] const AxisValues& axis(std::string_view name) const;
  [[nodiscard]] std::size_t position(std::string_view name) const;
  // The value of axis `name` at point `p`.
  [[nodiscard]] const std::string& value(const std::vector<std::size_t>& p,
                                         std::string_view name) const {
    return axis(name).values[p[position(name)]];
  }
  // Whether axis `name` has more than one value.
  [[nodiscard]] bool varies(std::string_view name) const { return axis(name).values.size() > 1; }

 private:
  std::vector<AxisValues> axes_;
  std::uint64_t size_ = 1;
};

// "key=v1,v2,..." as --vary takes it; base::InputError naming --vary when malformed or when
// the key is not an axis.
AxisValues parse_vary(const std::string& arg);

// A space file: a YAML mapping of axis names to lists of values (or one value);
// base::InputError at file:line:col.
std::vector<AxisValues> read_space_file(const std::string& path, const synth::Scenario& base);

// The default space of `base` on `devices` devices with the axes of `given` replacing their
// defaults; every given value is checked by applying it to `base` (base::InputError naming
// `where` and the value when it cannot be read). An axis given twice is an error.
Space make_space(const synth::Scenario& base, std::int64_t devices,
                 const std::vector<AxisValues>& given, const std::string& where);

}  // namespace tessera::experiments::search
