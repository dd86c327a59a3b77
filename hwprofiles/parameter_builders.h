// SPDX-License-Identifier: Apache-2.0
// Helpers that build the entries of the profile parameter table (parameters_*.cpp): an entry
// of each kind from its path, bounds, meaning and source, and its accessor from a lambda that
// names the Profile field. Internal to hwprofiles/.
#pragma once

#include <type_traits>

#include "hwprofiles/parameters.h"

namespace tessera::hw::table {

using Kind = Parameter::Kind;
using base::Dimension;

struct Access {
  double (*get)(const Profile&);
  void (*set)(Profile&, double);
};

// A double or integer field: Ref is a generic lambda returning a reference to it.
template <auto Ref>
Access field() {
  return {[](const Profile& p) { return static_cast<double>(Ref(p)); },
          [](Profile& p, double v) {
            using T = std::remove_cvref_t<decltype(Ref(p))>;
            Ref(p) = static_cast<T>(v);
          }};
}

// A base::SimTime field, as seconds.
template <auto Ref>
Access time_field() {
  return {[](const Profile& p) { return base::to_seconds(Ref(p)); },
          [](Profile& p, double v) { Ref(p) = base::from_seconds(v); }};
}

// A bool field, as 0 or 1.
template <auto Ref>
Access flag_field() {
  return {[](const Profile& p) { return Ref(p) ? 1.0 : 0.0; },
          [](Profile& p, double v) { Ref(p) = v != 0.0; }};
}

// An entry with its path, kind, meaning and source; the builders below add the rest.
inline Parameter entry(std::string_view path, Kind kind, bool required, std::string_view doc,
                       std::string_view source) {
  Parameter p;
  p.path = path;
  p.kind = kind;
  p.required = required;
  p.doc = doc;
  p.source = source;
  return p;
}

inline Parameter with(Parameter p, double lo, double hi, Access a) {
  p.lo = lo;
  p.hi = hi;
  p.get = a.get;
  p.set = a.set;
  return p;
}

inline Parameter quantity(std::string_view path, Dimension unit, double lo, double hi,
                          bool required, std::string_view doc, std::string_view source, Access a) {
  Parameter p = with(entry(path, Kind::kQuantity, required, doc, source), lo, hi, a);
  p.unit = unit;
  return p;
}

inline Parameter fraction(std::string_view path, bool required, std::string_view doc,
                          std::string_view source, Access a) {
  return with(entry(path, Kind::kFraction, required, doc, source), 0.0, 1.0, a);
}

inline Parameter number(std::string_view path, double lo, double hi, bool required,
                        std::string_view doc, std::string_view source, Access a) {
  return with(entry(path, Kind::kNumber, required, doc, source), lo, hi, a);
}

inline Parameter integer(std::string_view path, double lo, double hi, bool required,
                         std::string_view doc, std::string_view source, Access a) {
  return with(entry(path, Kind::kInteger, required, doc, source), lo, hi, a);
}

inline Parameter flag(std::string_view path, std::string_view doc, std::string_view source,
                      Access a) {
  return with(entry(path, Kind::kFlag, false, doc, source), 0.0, 1.0, a);
}

inline Parameter custom(std::string_view path, bool required, std::string_view doc,
                        std::string_view source, void (*read)(const base::YamlNode&, Profile&),
                        std::string (*write)(const Profile&)) {
  Parameter p = entry(path, Kind::kCustom, required, doc, source);
  p.read = read;
  p.write = write;
  return p;
}

inline Parameter in_group(Parameter p, std::string_view group) {
  p.group = group;
  return p;
}

inline Parameter fitted(Parameter p) {
  p.fitted = true;
  return p;
}

}  // namespace tessera::hw::table
