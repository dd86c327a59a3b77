// SPDX-License-Identifier: Apache-2.0
// The fits file (calibration/microbench/fits.yaml): per profile, the scalars each fit moves
// with the bounds it searches, and the row sources that inform them (microbench_rows.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "experiments/calibrate/microbench.h"
#include "experiments/calibrate/microbench_tables.h"

namespace tessera::experiments::calibrate {

std::vector<Measurement> read_rows(const base::YamlNode& src, const MicrobenchTables& tables);

namespace {

using base::YamlNode;

double bound_of(const hw::Scalar& s, const YamlNode& v) {
  if (!s.is_map_entry() && s.parameter->kind == hw::Parameter::Kind::kQuantity) {
    return v.as_quantity(s.parameter->unit, true);
  }
  return v.as_double();
}

hw::Scalar scalar_of(const YamlNode& fit, const std::string& path) {
  std::optional<hw::Scalar> s = hw::find_scalar(path);
  if (!s) {
    throw base::InputError(fit.key_loc(path),
                           fmt::format("'{}' is not a number of the profile parameter table", path),
                           "tessera list --parameters; one head dim of a map is written "
                           "attention.forward.128");
  }
  const YamlNode b = fit.at(path);
  if (!b.is_null()) {
    const std::vector<YamlNode> lohi = b.items();
    if (lohi.size() != 2) {
      b.fail("expected the bounds to search, [low, high]");
    }
    const double lo = bound_of(*s, lohi[0]);
    const double hi = bound_of(*s, lohi[1]);
    if (!(lo < hi) || lo < s->lo || hi > s->hi) {
      b.fail(fmt::format("bounds [{}, {}] are not an interval within the parameter's [{}, {}]", lo,
                         hi, s->lo, s->hi));
    }
    s->lo = lo;
    s->hi = hi;
  }
  if (std::isinf(s->hi)) {
    fit.at(path).fail(fmt::format("'{}' has no upper bound in the table: give [low, high]", path));
  }
  return *s;
}

MicrobenchFit read_fit(const YamlNode& item, const MicrobenchTables& tables) {
  static constexpr std::array<std::string_view, 5> kKeys = {"profile", "name", "fit", "rows",
                                                            "note"};
  item.check_keys(kKeys);
  MicrobenchFit f{item.at("profile").as_string(), item.at("name").as_string(), item.loc(), {}, {}};
  const YamlNode fit = item.at("fit");
  if (!fit.is_null() && !(fit.is_map() && fit.keys().empty())) {
    fit.expect_map();
    for (const std::string& path : fit.keys()) {
      f.scalars.push_back(scalar_of(fit, path));
    }
  }
  for (const YamlNode& src : item.at("rows").items()) {
    std::vector<Measurement> rows = read_rows(src, tables);
    f.rows.insert(f.rows.end(), rows.begin(), rows.end());
  }
  return f;
}

}  // namespace

bool is_microbench_fits(const std::string& path) {
  if (!path.ends_with(".yaml") && !path.ends_with(".yml")) {
    return false;
  }
  const YamlNode doc = YamlNode::load_file(path);
  return doc.is_map() && doc.has("fits");
}

std::vector<MicrobenchFit> read_microbench_fits(const std::string& path, const std::string& profile,
                                                const std::vector<std::string>& ancestors) {
  const YamlNode doc = YamlNode::load_file(path);
  doc.expect_map();
  static constexpr std::array<std::string_view, 2> kKeys = {"tables", "fits"};
  doc.check_keys(kKeys);
  namespace fs = std::filesystem;
  fs::path folder = fs::path(path).parent_path();
  if (std::optional<YamlNode> t = doc.find("tables")) {
    folder = (folder / t->as_string()).lexically_normal();  // absolute stays absolute
    if (!fs::is_directory(folder)) {
      t->fail(fmt::format("no folder of microbenchmark tables '{}'", folder.string()));
    }
  }
  const MicrobenchTables tables(folder.empty() ? "." : folder.string());
  std::vector<MicrobenchFit> all;
  for (const YamlNode& item : doc.at("fits").items()) {
    all.push_back(read_fit(item, tables));
  }
  std::vector<std::string> names{profile};
  names.insert(names.end(), ancestors.begin(), ancestors.end());
  std::vector<std::string> have;
  for (const std::string& name : names) {
    std::vector<MicrobenchFit> out;
    std::copy_if(all.begin(), all.end(), std::back_inserter(out),
                 [&](const MicrobenchFit& f) { return f.profile == name; });
    if (!out.empty()) {
      return out;
    }
  }
  for (const MicrobenchFit& f : all) {
    if (std::find(have.begin(), have.end(), f.profile) == have.end()) {
      have.push_back(f.profile);
    }
  }
  throw base::InputError(
      base::SourceLoc{path},
      fmt::format("no fit applies to profile '{}' (the file has fits for {})", profile,
                  have.empty() ? "none" : fmt::format("{}", fmt::join(have, ", "))),
      "add fits for it, or calibrate a profile that extends one of those");
}

}  // namespace tessera::experiments::calibrate
