// SPDX-License-Identifier: Apache-2.0
// What `tessera calibrate` writes: the calibrated profile (a file that extends the base and
// gives the fitted values) and the fit report.
#include <fmt/format.h>

#include <map>
#include <set>

#include "experiments/calibrate/calibrate.h"

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

std::string split_key(const std::string& path, std::string& rest) {
  const auto dot = path.find('.');
  rest = dot == std::string::npos ? "" : path.substr(dot + 1);
  return path.substr(0, dot);
}

// The fitted values as nested YAML, one section per first key, in the order of the table.
std::string values_yaml(const Calibration& c) {
  std::string out;
  std::string open;
  for (const ParameterValue& v : c.parameters) {
    if (!v.informed) {
      continue;
    }
    std::string rest;
    const std::string head = split_key(std::string(v.parameter->path), rest);
    const std::string value = hw::format_parameter(*v.parameter, v.value);
    const std::string note =
        fmt::format("# +- {}; was {}", hw::format_parameter(*v.parameter, v.sigma),
                    hw::format_parameter(*v.parameter, v.start));
    if (rest.empty()) {
      out += fmt::format("{}: {}  {}\n", head, value, note);
      open.clear();
      continue;
    }
    if (head != open) {
      out += head + ":\n";
      open = head;
    }
    out += fmt::format("  {}: {}  {}\n", rest, value, note);
  }
  return out;
}

}  // namespace

std::string profile_yaml(const Calibration& c, const std::string& name, const std::string& runs) {
  const Errors e = errors_of(c);
  std::string out = fmt::format(
      "# {} calibrated by `tessera calibrate {} --profile {}` on {} runs: {}.\n"
      "# Median |error| of the step time on them: {:.1f}% on {}, {:.1f}% calibrated",
      c.base, runs, c.base, c.runs.size(), sources_of(c), 100.0 * median_abs_error(e.start), c.base,
      100.0 * median_abs_error(e.fitted));
  if (!e.held_out.empty()) {
    out += fmt::format("; {:.1f}% with each source left out of the fit in turn",
                       100.0 * median_abs_error(e.held_out));
  }
  out += " (docs/calibration.md).\n";
  for (const ParameterValue& v : c.parameters) {
    if (!v.informed) {
      out += fmt::format("# {}: not informed by these runs, kept at {}.\n", v.parameter->path,
                         hw::format_parameter(*v.parameter, v.value));
    }
  }
  out += fmt::format("name: {}\nextends: {}\ndescription: \"{} calibrated on {} ({} runs)\"\n",
                     name, c.base, c.base, runs, c.runs.size());
  return out + values_yaml(c);
}

namespace {

std::string parameters_table(const Calibration& c) {
  std::string out = "| parameter | start | fitted | +- (1 sd) |\n|---|---|---|---|\n";
  for (const ParameterValue& v : c.parameters) {
    out += fmt::format("| {} | {} | {} | {} |\n", v.parameter->path,
                       hw::format_parameter(*v.parameter, v.start),
                       v.informed ? hw::format_parameter(*v.parameter, v.value) : "not informed",
                       v.informed ? hw::format_parameter(*v.parameter, v.sigma) : "");
  }
  return out;
}

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

std::string folds_table(const Calibration& c) {
  std::string out =
      "| source left out | runs | held-out median abs. error | values fitted without it |\n"
      "|---|---|---|---|\n";
  for (const Fold& f : c.folds) {
    std::string values;
    for (std::size_t j = 0; j < f.values.size(); ++j) {
      const hw::Parameter& p = *c.parameters[j].parameter;
      if (c.parameters[j].informed) {
        values += fmt::format("{}{} {}", values.empty() ? "" : ", ", p.path,
                              hw::format_parameter(p, f.values[j]));
      }
    }
    out +=
        fmt::format("| {} | {} | {:.1f}% | {} |\n", f.source, f.runs, 100.0 * f.median_abs, values);
  }
  return out;
}

}  // namespace

std::string report(const Calibration& c) {
  const Errors e = errors_of(c);
  std::string out = fmt::format("calibration of {} on {} runs ({} simulations, {} iterations)\n\n",
                                c.base, c.runs.size(), c.simulations, c.iterations);
  out += parameters_table(c) + "\n" + runs_table(c);
  if (!c.folds.empty()) {
    out += "\n" + folds_table(c);
  }
  out += fmt::format("\nmedian abs. error: {:.1f}% on {}, {:.1f}% calibrated",
                     100.0 * median_abs_error(e.start), c.base, 100.0 * median_abs_error(e.fitted));
  if (!e.held_out.empty()) {
    out += fmt::format(", {:.1f}% held out (each source left out in turn)",
                       100.0 * median_abs_error(e.held_out));
  }
  out += "\n";
  for (const std::string& l : c.left_out) {
    out += fmt::format("not used: {}\n", l);
  }
  return out;
}

}  // namespace tessera::experiments::calibrate
