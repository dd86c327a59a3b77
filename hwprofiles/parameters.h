// SPDX-License-Identifier: Apache-2.0
// The one table of a hardware profile's keys: each entry's path in the profile YAML, kind and
// unit, bounds, meaning and source, and how it reaches the Profile struct. It drives the
// profile reader (profile_yaml.cpp), `extends:` (a profile that names another changes only
// the keys it gives), `tessera list`, docs/hardware_parameters.md and the parameters that
// `tessera calibrate` fits (docs/calibration.md). Registered in the style of the search axes:
// adding a key is one entry in parameters_*.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/units.h"
#include "base/yaml_reader.h"
#include "hwprofiles/hw_profile.h"

namespace tessera::hw {

struct Parameter {
  enum class Kind : unsigned char {
    kQuantity,  // a number with a unit (`unit`), stored in SI units
    kFraction,  // a plain number in (lo, hi] (an efficiency, a fraction of a peak)
    kNumber,    // a plain number in [lo, hi]
    kInteger,   // an integer in [lo, hi]
    kFlag,      // true / false
    kCustom,    // a structured value (text, lists, maps) with its own reader and writer
  };
  std::string_view path;  // "gemm.max_fraction.bf16"
  Kind kind = Kind::kNumber;
  base::Dimension unit = base::Dimension::kTime;  // kQuantity only
  double lo = 0.0;                                // bounds of a number (SI units)
  double hi = 0.0;
  bool required = false;  // in a profile that extends none (and, in a group, once it is given)
  // Keys of an optional block ("collective.nvls"): the block is on when it is given.
  std::string_view group;
  std::string_view doc;     // what it means
  std::string_view source;  // where its values come from
  // `tessera calibrate` may fit it to measured runs (docs/calibration.md Part 3).
  bool fitted = false;
  // Numbers (every kind but kCustom), in SI units: flags 0/1, integers exactly.
  double (*get)(const Profile&) = nullptr;
  void (*set)(Profile&, double) = nullptr;
  // kCustom: reads the node into the profile; writes the value as YAML flow text.
  void (*read)(const base::YamlNode&, Profile&) = nullptr;
  std::string (*write)(const Profile&) = nullptr;
  // kCustom maps of fractions by head dim (attention.forward): the points, so that a fit can
  // move one entry (Scalar).
  std::vector<AttentionModel::Point>* (*points)(Profile&) = nullptr;
};

// One number a fit can move: a numeric parameter ("gemm.k_half"), or one entry of a map of
// fractions ("attention.forward.128": the forward plateau at head dim 128). Its bounds start
// as the parameter's; a fit may narrow them.
struct Scalar {
  const Parameter* parameter = nullptr;
  int key = 0;  // the map entry (a head dim); 0 for a numeric parameter
  std::string path;
  double lo = 0.0;
  double hi = 0.0;
  // Throws base::InputError when the map has no entry `key` in `p`.
  [[nodiscard]] double get(const Profile& p) const;
  void set(Profile& p, double value) const;
  // The value as a profile writes it; a map entry as a plain number.
  [[nodiscard]] std::string format(double value) const;
  [[nodiscard]] bool is_map_entry() const { return parameter->points != nullptr; }
};

// The scalar `path` names; nullopt when it names no numeric parameter and no map entry.
std::optional<Scalar> find_scalar(std::string_view path);

// An optional block of keys and what giving it turns on.
struct ParameterGroup {
  std::string_view path;  // "collective.nvls"
  void (*enable)(Profile&);
  bool (*enabled)(const Profile&);
};

// Every key, in the order a profile writes them.
std::span<const Parameter> profile_parameters();
std::span<const ParameterGroup> parameter_groups();
// The entry for `path`; nullptr when there is none.
const Parameter* find_parameter(std::string_view path);

// A number of `p` as a profile writes it ("12.5 us", "850 TFLOP/s", "0.82", "16").
std::string format_parameter(const Parameter& p, double value);
// A bound as a message or a table writes it ("2.000 s", "100.0 TFLOP/s", "0.5").
std::string format_bound(const Parameter& p, double value);
// The bounds of `p`: "[0.5, 1]", "(0, 1]", ">= 1.0 TFLOP/s"; "" for flags and custom kinds.
std::string format_bounds(const Parameter& p);
// The value of `p` in `profile` as a profile writes it.
std::string format_parameter(const Parameter& p, const Profile& profile);

// The table in parts (parameters_compute.cpp, parameters_links.cpp).
std::span<const Parameter> compute_parameters();
std::span<const Parameter> link_parameters();

}  // namespace tessera::hw
