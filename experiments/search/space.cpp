// SPDX-License-Identifier: Apache-2.0
#include "experiments/search/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "base/yaml_reader.h"
#include "experiments/value_list.h"

namespace tessera::experiments::search {

namespace {

std::vector<std::string_view> axis_names() {
  std::vector<std::string_view> out;
  for (const Axis& a : axes()) {
    out.emplace_back(a.name);
  }
  return out;
}

// Applies `value` to a copy of `base`: the reader's message when it cannot be read, else "".
std::string unreadable(const Axis& axis, const std::string& value, const synth::Scenario& base) {
  synth::Scenario s = base;
  try {
    axis.apply(s, value);
  } catch (const base::InputError& e) {
    return e.message();
  }
  return "";
}

}  // namespace

const Axis& find_axis(std::string_view name, const std::string& where) {
  for (const Axis& a : axes()) {
    if (a.name == name) {
      return a;
    }
  }
  const std::vector<std::string_view> names = axis_names();
  const std::string near = base::nearest(name, names);
  std::string list;
  for (std::string_view n : names) {
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  throw base::InputError(
      fmt::format("{}: '{}' is not a search axis{}; the axes are {}", where, name,
                  near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), list));
}

Space::Space(std::vector<AxisValues> axes) : axes_(std::move(axes)) {
  for (const AxisValues& a : axes_) {
    size_ *= a.values.size();
  }
}

std::vector<std::size_t> Space::point(std::uint64_t index) const {
  std::vector<std::size_t> p(axes_.size());
  for (std::size_t k = axes_.size(); k-- > 0;) {
    const std::uint64_t n = axes_[k].values.size();
    p[k] = static_cast<std::size_t>(index % n);
    index /= n;
  }
  return p;
}

std::size_t Space::position(std::string_view name) const {
  for (std::size_t k = 0; k < axes_.size(); ++k) {
    if (axes_[k].axis->name == name) {
      return k;
    }
  }
  throw base::InternalError(fmt::format("search space has no axis '{}'", name));
}

const AxisValues& Space::axis(std::string_view name) const {
  return axes_[position(name)];
}

AxisValues parse_vary(const std::string& arg) {
  KeyValues kv = parse_key_values("--vary", arg, "axis=v1,v2,... (e.g. tp=2,4,8)");
  return AxisValues{&find_axis(kv.key, "--vary " + arg), std::move(kv.values)};
}

std::vector<AxisValues> read_space_file(const std::string& path, const synth::Scenario& base) {
  const base::YamlNode root = base::YamlNode::load_file(path);
  if (!root.is_map() || root.keys().empty()) {
    root.fail("a search space is a mapping of axes to their values, and this one names none",
              "e.g. 'tp: [2, 4, 8]'");
  }
  const std::vector<std::string_view> names = axis_names();
  root.check_keys(names);
  std::vector<AxisValues> out;
  for (const std::string& key : root.keys()) {
    const base::YamlNode n = root.at(key);
    AxisValues a{&find_axis(key, path), {}};
    const std::vector<base::YamlNode> items = n.is_seq() ? n.items() : std::vector{n};
    if (items.empty()) {
      n.fail(fmt::format("axis '{}' has no values", key));
    }
    for (const base::YamlNode& item : items) {
      const std::string v = item.as_string();
      if (std::find(a.values.begin(), a.values.end(), v) != a.values.end()) {
        item.fail(fmt::format("value '{}' is given twice", v));
      }
      if (std::string why = unreadable(*a.axis, v, base); !why.empty()) {
        item.fail(why);
      }
      a.values.push_back(v);
    }
    out.push_back(std::move(a));
  }
  return out;
}

Space make_space(const synth::Scenario& base, std::int64_t devices,
                 const std::vector<AxisValues>& given, const std::string& where) {
  std::set<std::string> seen;
  for (const AxisValues& g : given) {
    if (!seen.insert(g.axis->name).second) {
      throw base::InputError(fmt::format("{}: axis '{}' is given twice", where, g.axis->name));
    }
    for (const std::string& v : g.values) {
      if (std::string why = unreadable(*g.axis, v, base); !why.empty()) {
        throw base::InputError(fmt::format("{} {}: value '{}': {}", where, g.axis->name, v, why));
      }
    }
  }
  std::vector<AxisValues> out;
  for (const Axis& a : axes()) {
    auto it =
        std::find_if(given.begin(), given.end(), [&](const AxisValues& g) { return g.axis == &a; });
    out.push_back(it != given.end() ? *it : AxisValues{&a, a.defaults(base, devices)});
  }
  return Space(std::move(out));
}

}  // namespace tessera::experiments::search
