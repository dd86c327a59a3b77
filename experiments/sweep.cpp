// SPDX-License-Identifier: Apache-2.0
#include "experiments/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "base/error.h"
#include "experiments/schedule_spec.h"
#include "experiments/value_list.h"

namespace tessera::experiments {

namespace {

// A value as a file-name part: anything but [A-Za-z0-9._+-] becomes '_'.
std::string value_file_part(const std::string& v) {
  std::string out = v;
  for (char& c : out) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 &&
        std::string_view("._+-").find(c) == std::string_view::npos) {
      c = '_';
    }
  }
  return out;
}

// One point per value; report names by the value's file part, made unique by position if
// two collide.
std::vector<SweepPoint> make_points(const Sweep& sw) {
  std::vector<SweepPoint> points(sw.values.size());
  std::vector<std::string> parts;
  for (const std::string& v : sw.values) {
    parts.push_back(value_file_part(v));
  }
  bool unique = std::set<std::string>(parts.begin(), parts.end()).size() == parts.size();
  for (std::size_t k = 0; k < points.size(); ++k) {
    points[k].value = sw.values[k];
    points[k].file_part = unique ? parts[k] : fmt::format("{}-{}", k + 1, parts[k]);
  }
  return points;
}

// Whether `e`, from loading the scenario with `assignment` applied, says the value itself
// cannot be read (a misspelt name, a wrong type, a number out of range, a key that does not
// exist): an error the loader places at the override, in the reader's words. A value that
// reads but makes the scenario invalid (pp no longer dividing the layers, global_batch not
// divisible by dp) is not: that point cannot run.
bool about_value(const base::InputError& e, const std::string& assignment) {
  const std::string set = "--set " + assignment;
  if (e.loc().file.empty()) {
    return e.message().starts_with(set + ":");  // not valid YAML, a path through a value
  }
  if (e.loc().file != set) {
    return false;
  }
  std::string_view m = e.message();
  if (m.starts_with("'")) {  // "'training.recompute': unknown value 'fulll'"
    auto end = m.find("': ");
    m = end == std::string_view::npos ? m : m.substr(end + 3);
  }
  for (std::string_view reader : {"expected ", "unknown ", "missing required key", "the range "}) {
    if (m.starts_with(reader)) {
      return true;
    }
  }
  return false;
}

// The error's message and hint (the did-you-mean), without its location.
std::string message_and_hint(const base::InputError& e) {
  std::string full = e.what();
  auto at = full.find(e.message());
  return at == std::string::npos ? e.message() : full.substr(at);
}

// Every value's scenario, loaded before anything is simulated: nullopt (and the point's
// `skipped`) where the scenario is invalid at that value, unless it is at every value.
std::vector<std::optional<synth::Scenario>> load_points(const SweepRequest& req, const Sweep& sw,
                                                        std::vector<SweepPoint>& points) {
  std::vector<std::optional<synth::Scenario>> out;
  std::optional<base::InputError> first_error;
  for (SweepPoint& p : points) {
    std::vector<std::string> overrides = req.sets;
    std::string assignment = fmt::format("{}={}", sw.key, p.value);
    overrides.push_back(assignment);
    try {
      out.emplace_back(synth::load_scenario(req.scenario, overrides));
    } catch (const base::InputError& e) {
      if (about_value(e, assignment)) {
        bool key = e.message().find("unknown key") != std::string::npos;  // not the value's
        throw base::InputError(base::SourceLoc{"--sweep " + req.sweep, 0, 0},
                               key ? message_and_hint(e)
                                   : fmt::format("value '{}': {}", p.value, message_and_hint(e)));
      }
      p.skipped = e.message();
      if (!first_error) {
        first_error = e;
      }
      out.emplace_back(std::nullopt);
    }
  }
  if (std::none_of(out.begin(), out.end(), [](const auto& s) { return s.has_value(); })) {
    throw *first_error;  // no value gives a valid scenario: most likely the file is wrong
  }
  return out;
}

}  // namespace

Sweep parse_sweep(const std::string& arg) {
  constexpr const char* kForm = "key.path=v1,v2,... (e.g. model.layers=4,8)";
  KeyValues kv = parse_key_values("--sweep", arg, kForm);
  const std::string& key = kv.key;
  if (key.empty() || key.front() == '.' || key.back() == '.' ||
      key.find("..") != std::string::npos) {
    throw base::InputError(
        fmt::format("--sweep {}: '{}' is not a key path; expected {}", arg, key, kForm));
  }
  return Sweep{std::move(kv.key), std::move(kv.values)};
}

std::string context_of(const synth::Scenario& s) {
  return fmt::format("{} devices ({}, {} microbatches per replica)", s.cluster.devices,
                     parallelism_label(s), s.microbatches());
}

bool has_speedup(const SweepPoint& p, std::size_t i) {
  return p.skipped.empty() && p.rows[i].skipped.empty() && p.rows[0].skipped.empty();
}

SweepResult run_sweep(const SweepRequest& req, const SweepSink& sink) {
  SweepResult res;
  res.sweep = parse_sweep(req.sweep);
  std::vector<std::string> specs = split_schedules(req.schedules);
  for (const std::string& spec : specs) {
    res.labels.push_back(synth::schedule_label(parse_schedule(spec)));
  }
  res.points = make_points(res.sweep);
  std::vector<std::optional<synth::Scenario>> scenarios = load_points(req, res.sweep, res.points);
  for (std::size_t k = 0; k < res.points.size(); ++k) {
    SweepPoint& p = res.points[k];
    if (!scenarios[k]) {
      continue;
    }
    res.name = scenarios[k]->name;
    p.context = context_of(*scenarios[k]);
    p.rows = compare_schedules(*scenarios[k], specs, false,
                               [&](const std::string& spec, const Outcome& o) {
                                 if (sink) {
                                   sink(p, spec, o);
                                 }
                               });
  }
  return res;
}

}  // namespace tessera::experiments
