// SPDX-License-Identifier: Apache-2.0
// What `tessera calibrate` writes: the calibrated profile (a file that extends the base and
// gives the fitted values) and the fit report.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/units.h"
#include "experiments/calibrate/calibrate.h"
#include "experiments/runs/evaluate.h"

namespace tessera::experiments::calibrate {

namespace {

std::string percent(double x) {
  return fmt::format("{:+.1f}%", 100.0 * x);
}

struct Errors {
  std::vector<double> start, fitted, held_out;
};

Errors errors_of(const Calibration& c) {
  Errors e;
  for (const RunResidual& r : c.runs) {
    e.start.push_back(r.start_s / r.measured_s - 1.0);
    e.fitted.push_back(r.fitted_s / r.measured_s - 1.0);
    if (r.held_out_s > 0.0) {
      e.held_out.push_back(r.held_out_s / r.measured_s - 1.0);
    }
  }
  return e;
}

std::string sources_of(const Calibration& c) {
  std::map<std::string, int> n;
  for (const RunResidual& r : c.runs) {
    ++n[r.run->source];
  }
  std::string out;
  for (const auto& [s, k] : n) {
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s, k);
  }
  return out;
}

// A nested YAML map under construction: keys in the order first given.
struct YamlTree {
  std::string value;  // a leaf's value and comment
  std::vector<std::string> keys;
  std::vector<YamlTree> children;  // one per key

  YamlTree& child(const std::string& key) {
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it != keys.end()) {
      return children[static_cast<std::size_t>(it - keys.begin())];
    }
    keys.push_back(key);
    return children.emplace_back();
  }
  void add(const std::string& path, const std::string& leaf) {
    const auto dot = path.find('.');
    if (dot == std::string::npos) {
      child(path).value = leaf;
    } else {
      child(path.substr(0, dot)).add(path.substr(dot + 1), leaf);
    }
  }
  [[nodiscard]] std::string text(int indent = 0) const {
    std::string out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const YamlTree& t = children[i];
      out += fmt::format("{:{}}{}:{}\n", "", indent, keys[i], t.value.empty() ? "" : " " + t.value);
      out += t.text(indent + 2);
    }
    return out;
  }
};

}  // namespace

std::string values_yaml(const std::vector<ParameterValue>& values, const hw::Profile& fitted) {
  YamlTree tree;
  std::map<std::string, std::string> map_notes;  // a map's entries' notes, by its path
  for (const ParameterValue& v : values) {
    if (!v.informed) {
      continue;
    }
    const hw::Scalar& s = v.scalar;
    const std::string note = fmt::format("+- {}; was {}", s.format(v.sigma), s.format(v.start));
    if (s.is_map_entry()) {
      std::string& n = map_notes[std::string(s.parameter->path)];
      n += fmt::format("{}{}: {}", n.empty() ? "" : ", ", s.key, note);
      tree.add(std::string(s.parameter->path),
               fmt::format("{}  # {}", s.parameter->write(fitted), n));
    } else {
      tree.add(s.path, fmt::format("{}  # {}", s.format(v.value), note));
    }
  }
  return tree.text();
}

std::string profile_yaml(const Calibration& c, const std::string& name, const std::string& runs) {
  const Errors e = errors_of(c);
  std::string out = fmt::format(
      "# {} calibrated by `tessera calibrate {} --profile {}` on {} runs: {}.\n"
      "# Median |error| of the step time on them: {:.1f}% on {}, {:.1f}% calibrated",
      c.base, runs, c.base, c.runs.size(), sources_of(c), 100.0 * median_abs_error(e.start), c.base,
      100.0 * median_abs_error(e.fitted));
  if (!e.held_out.empty()) {
    out += fmt::format("; {:.1f}% with each {} left out of the fit in turn",
                       100.0 * median_abs_error(e.held_out), c.held_out_by);
  }
  out += " (docs/calibration.md).\n";
  for (const ParameterValue& v : c.parameters) {
    if (!v.informed) {
      out += fmt::format("# {}: not informed by these runs, kept at {}.\n", v.scalar.path,
                         v.scalar.format(v.value));
    }
  }
  out += fmt::format("name: {}\nextends: {}\ndescription: \"{} calibrated on {} ({} runs)\"\n",
                     name, c.base, c.base, runs, c.runs.size());
  return out + values_yaml(c.parameters, c.fitted);
}

std::string parameters_table(const std::vector<ParameterValue>& values) {
  std::string out = "| parameter | start | fitted | +- (1 sd) |\n|---|---|---|---|\n";
  for (const ParameterValue& v : values) {
    out += fmt::format("| {} | {} | {} | {} |\n", v.scalar.path, v.scalar.format(v.start),
                       v.informed ? v.scalar.format(v.value) : "not informed",
                       v.informed ? v.scalar.format(v.sigma) : "");
  }
  return out;
}

namespace {

std::string runs_table(const Calibration& c) {
  std::string out =
      "| run | source | measured | start | error | calibrated | error | held out | error |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const RunResidual& r : c.runs) {
    const bool held = r.held_out_s > 0.0;
    out += fmt::format(
        "| {} | {} | {:.4g} s | {:.4g} s | {} | {:.4g} s | {} | {} | {} |\n", r.run->id,
        r.run->source, r.measured_s, r.start_s, percent(r.start_s / r.measured_s - 1.0), r.fitted_s,
        percent(r.fitted_s / r.measured_s - 1.0), held ? fmt::format("{:.4g} s", r.held_out_s) : "",
        held ? percent(r.held_out_s / r.measured_s - 1.0) : "");
  }
  return out;
}

// The traced runs' kernel time per category, as the runs table gives the step.
std::string categories_table(const Calibration& c) {
  std::string out;
  for (const RunResidual& r : c.runs) {
    for (const CategoryResidual& k : r.categories) {
      const bool held = k.held_out_s > 0.0;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.run->id, k.name,
                         base::format_seconds(k.measured_s), base::format_seconds(k.start_s),
                         percent(k.start_s / k.measured_s - 1.0),
                         percent(k.fitted_s / k.measured_s - 1.0),
                         held ? percent(k.held_out_s / k.measured_s - 1.0) : "");
    }
  }
  if (out.empty()) {
    return out;
  }
  return "\nkernel time per step from the runs' traces:\n\n"
         "| run | kernels | measured | start | error | calibrated error | held-out error |\n"
         "|---|---|---|---|---|---|---|\n" +
         out;
}

std::string folds_table(const Calibration& c) {
  std::string out = fmt::format(
      "| {} left out | runs | held-out median abs. error | values fitted without it |\n"
      "|---|---|---|---|\n",
      c.held_out_by);
  for (const Fold& f : c.folds) {
    std::string values;
    for (std::size_t j = 0; j < f.values.size(); ++j) {
      const hw::Scalar& p = c.parameters[j].scalar;
      if (c.parameters[j].informed) {
        values += fmt::format("{}{} {}", values.empty() ? "" : ", ", p.path, p.format(f.values[j]));
      }
    }
    out +=
        fmt::format("| {} | {} | {:.1f}% | {} |\n", f.source, f.runs, 100.0 * f.median_abs, values);
  }
  return out;
}

// The held-out errors by hardware and precision, as the corpus table groups runs
// (runs::group_stats): what a profile's fit says of runs it did not see, group by group.
std::string groups_table(const Calibration& c) {
  std::vector<runs::RunResult> fitted, held_out;
  const auto result = [](const RunResidual& r, double predicted_s) {
    runs::RunResult out;
    out.run = r.run;
    out.simulated = true;
    out.predicted_s = predicted_s;
    out.measured_s = r.measured_s;
    return out;
  };
  for (const RunResidual& r : c.runs) {
    if (r.held_out_s > 0.0) {
      fitted.push_back(result(r, r.fitted_s));
      held_out.push_back(result(r, r.held_out_s));
    }
  }
  const auto key = [](const runs::Run& r) {
    return fmt::format("{}, {}", r.hardware, r.precision);
  };
  const std::vector<runs::GroupStats> f = runs::group_stats(fitted, key);
  const std::vector<runs::GroupStats> h = runs::group_stats(held_out, key);
  std::string out =
      "| hardware, precision | runs | calibrated median abs. error | held-out median abs. error "
      "| held-out signed mean |\n|---|---|---|---|---|\n";
  for (std::size_t i = 0; i + 1 < h.size(); ++i) {  // the groups, not the row "all"
    out += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {} |\n", h[i].name, h[i].count,
                       100.0 * f[i].median_abs, 100.0 * h[i].median_abs, percent(h[i].mean_signed));
  }
  return out;
}

}  // namespace

std::string report(const Calibration& c) {
  const Errors e = errors_of(c);
  std::string out = fmt::format("calibration of {} on {} runs ({} simulations, {} iterations)\n\n",
                                c.base, c.runs.size(), c.simulations, c.iterations);
  out += parameters_table(c.parameters) + "\n" + runs_table(c) + categories_table(c);
  if (!c.folds.empty()) {
    out += "\n" + folds_table(c) + "\n" + groups_table(c);
  }
  out += fmt::format("\nmedian abs. error: {:.1f}% on {}, {:.1f}% calibrated",
                     100.0 * median_abs_error(e.start), c.base, 100.0 * median_abs_error(e.fitted));
  if (!e.held_out.empty()) {
    out += fmt::format(", {:.1f}% held out (each {} left out in turn)",
                       100.0 * median_abs_error(e.held_out), c.held_out_by);
  }
  out += "\n";
  for (const std::string& l : c.left_out) {
    out += fmt::format("not used: {}\n", l);
  }
  return out;
}

}  // namespace tessera::experiments::calibrate
