// SPDX-License-Identifier: Apache-2.0
#include "experiments/calibrate/calibrate.h"

#include <fmt/format.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/calibrate/fit.h"
#include "experiments/calibrate/run_prediction.h"
#include "experiments/pipeline.h"

namespace tessera::experiments::calibrate {

namespace {

using Vec = std::vector<double>;

// The residual of a run whose simulation fails at some point: a large error, so that the fit
// steers away from it.
constexpr double kFailed = 2.0;

// The runs of the file on `base` whose step time could be simulated.
struct Problem {
  const hw::Profile* base = nullptr;
  std::vector<hw::Scalar> params;
  std::vector<RunResidual> runs;
};

// The run's own profile (the base, or one that extends it) with the parameters at `values`.
hw::Profile profile_of(const Problem& pb, const runs::Run& run, const Vec& values) {
  hw::Profile p = synth::hardware_profile(*run.scenario);
  for (std::size_t j = 0; j < pb.params.size(); ++j) {
    pb.params[j].set(p, values[j]);
  }
  return p;
}

// The residual rows of a run: its step time, then its trace's categories.
std::size_t rows_of(const RunResidual& r) {
  return 1 + r.categories.size();
}

std::vector<std::string> category_names(const RunResidual& r) {
  std::vector<std::string> out;
  for (const CategoryResidual& c : r.categories) {
    out.push_back(c.name);
  }
  return out;
}

// Log errors of one run's rows on `profile`.
Vec run_residuals(const RunResidual& r, const hw::Profile& profile) {
  Vec e(rows_of(r), kFailed);
  try {
    const RunPrediction p = predict_run(*r.run, profile, category_names(r));
    e[0] = std::log(p.step_s / r.measured_s);
    for (std::size_t k = 0; k < r.categories.size(); ++k) {
      if (p.categories[k] > 0.0) {
        e[1 + k] = std::log(p.categories[k] / r.categories[k].measured_s);
      }
    }
  } catch (const base::Error&) {
  }
  return e;
}

Vec values_at(const Problem& pb, const Vec& u) {
  Vec v;
  for (std::size_t j = 0; j < pb.params.size(); ++j) {
    v.push_back(from_unit(pb.params[j], u[j]));
  }
  return v;
}

hw::Profile at(const Problem& pb, const Vec& u) {
  hw::Profile p = *pb.base;
  const Vec v = values_at(pb, u);
  for (std::size_t j = 0; j < pb.params.size(); ++j) {
    pb.params[j].set(p, v[j]);
  }
  return p;
}

// Log errors of the rows of the runs `subset` at each point (run after run, each run's rows
// in order), in parallel over points x runs.
std::vector<Vec> residuals(const Problem& pb, const std::vector<std::size_t>& subset,
                           const std::vector<Vec>& points, int& simulations) {
  std::vector<Vec> values;
  for (const Vec& u : points) {
    values.push_back(values_at(pb, u));
  }
  std::vector<Vec> each(points.size() * subset.size());
  tbb::parallel_for(std::size_t{0}, each.size(), [&](std::size_t k) {
    const RunResidual& r = pb.runs[subset[k % subset.size()]];
    each[k] = run_residuals(r, profile_of(pb, *r.run, values[k / subset.size()]));
  });
  std::vector<Vec> out(points.size());
  for (std::size_t k = 0; k < each.size(); ++k) {
    Vec& o = out[k / subset.size()];
    o.insert(o.end(), each[k].begin(), each[k].end());
  }
  simulations += static_cast<int>(each.size());
  return out;
}

// A run on the profile, or on one that extends it.
bool on_profile(const runs::Run& run, const std::string& name) {
  if (run.hardware == name) {
    return true;
  }
  if (!run.scenario || !run.scenario->cluster.profile) {
    return false;
  }
  const std::vector<std::string>& up = run.scenario->cluster.profile->ancestors;
  return std::find(up.begin(), up.end(), name) != up.end();
}

// The first fitted parameter that a run's profile, extending the base, gives a value of its
// own (gb300's under_load.math, say): such a run does not follow the fit and says nothing about
// the value. "" when it inherits them all.
std::string own_value(const Problem& pb, const runs::Run& run) {
  const hw::Profile& own = *run.scenario->cluster.profile;
  if (own.name == pb.base->name) {
    return "";
  }
  for (const hw::Scalar& s : pb.params) {
    try {
      if (s.get(own) != s.get(*pb.base)) {
        return s.path;
      }
    } catch (const base::InputError&) {  // a map entry only one of them has
      return s.path;
    }
  }
  return "";
}

Problem prepare(const runs::RunsFile& file, const hw::Profile& base, const Options& opt,
                Calibration& c) {
  Problem pb{&base, scalars_to_fit(opt.fit), {}};
  for (const runs::Run& run : file.runs) {
    if (!on_profile(run, base.name)) {
      continue;
    }
    if (!run.scenario) {
      c.left_out.push_back(fmt::format("{}: {}", run.id, run.skip));
      continue;
    }
    if (const std::string path = own_value(pb, run); !path.empty()) {
      c.left_out.push_back(fmt::format("{}: its profile {} gives {} a value of its own", run.id,
                                       run.hardware, path));
      continue;
    }
    pb.runs.push_back({&run, 0.0, 0.0, 0.0, 0.0, {}});
  }
  std::vector<std::string> failed(pb.runs.size());
  tbb::parallel_for(std::size_t{0}, pb.runs.size(), [&](std::size_t i) {
    RunResidual& r = pb.runs[i];
    try {
      const hw::Profile own = synth::hardware_profile(*r.run->scenario);
      const FirstPrediction first = first_prediction(*r.run, own);
      r.start_s = first.prediction.step_s;
      r.measured_s = r.run->measured_step_s(first.prediction.model_flops);
      for (const TracedCategory& t : first.traced) {
        r.categories.push_back({t.name, t.measured_s, t.simulated_s, 0.0, 0.0});
      }
    } catch (const base::Error& e) {
      failed[i] = e.what();
    }
  });
  std::vector<RunResidual> kept;
  for (std::size_t i = 0; i < pb.runs.size(); ++i) {
    if (failed[i].empty() && pb.runs[i].measured_s > 0.0) {
      kept.push_back(pb.runs[i]);
    } else {
      c.left_out.push_back(fmt::format("{}: simulation failed: {}", pb.runs[i].run->id, failed[i]));
    }
  }
  pb.runs = std::move(kept);
  c.simulations += static_cast<int>(pb.runs.size());
  if (pb.runs.empty()) {
    throw base::InputError(
        fmt::format("no run of {} on profile '{}' can be simulated, so there is nothing to fit",
                    file.path, base.name));
  }
  return pb;
}

// The fit of run-level parameters: Cauchy's loss at a 10% scale, so that a few runs with an
// effect no parameter models (their residuals tens of percent) do not move the values the
// others agree on (docs/calibration.md Part 3).
FitOptions run_fit_options() {
  FitOptions fo;
  fo.redescending = true;
  return fo;
}

FitResult fit_subset(const Problem& pb, const std::vector<std::size_t>& subset, const Vec& u0,
                     int iterations, int& simulations) {
  FitOptions fo = run_fit_options();
  fo.max_iterations = iterations;
  return fit(
      [&](const std::vector<Vec>& points) { return residuals(pb, subset, points, simulations); },
      u0, fo);
}

std::vector<std::size_t> all_runs(const Problem& pb) {
  std::vector<std::size_t> out(pb.runs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = i;
  }
  return out;
}

// Fills the run's predictions, fitted or held out, from its rows' log errors (from `e` on).
void set_predictions(RunResidual& r, Vec::const_iterator e, bool held_out) {
  (held_out ? r.held_out_s : r.fitted_s) = r.measured_s * std::exp(*e);
  for (CategoryResidual& c : r.categories) {
    (held_out ? c.held_out_s : c.fitted_s) = c.measured_s * std::exp(*++e);
  }
}

// The rows of the runs `subset` in the residuals of all runs.
std::vector<std::size_t> rows_of_runs(const Problem& pb, const std::vector<std::size_t>& subset) {
  std::vector<std::size_t> first(pb.runs.size() + 1, 0);
  for (std::size_t i = 0; i < pb.runs.size(); ++i) {
    first[i + 1] = first[i] + rows_of(pb.runs[i]);
  }
  std::vector<std::size_t> out;
  for (std::size_t i : subset) {
    for (std::size_t row = first[i]; row < first[i + 1]; ++row) {
      out.push_back(row);
    }
  }
  return out;
}

// The group a run is held out with: its source, or its model (by its size, which tells the
// corpus's models apart).
std::string group_of(const runs::Run& run, Options::HoldOut by) {
  if (by == Options::HoldOut::kSource) {
    return run.source;
  }
  return fmt::format("{:.3g}B-parameter model", run.scenario->model.parameters() / 1e9);
}

// Each group left out in turn: fitted on the others (on the full fit's sensitivities, no new
// simulation), then its runs simulated at those values.
void hold_out(Problem& pb, const FitResult& full, Options::HoldOut by, Calibration& c) {
  std::vector<std::string> group(pb.runs.size());
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pb.runs.size(); ++i) {
    group[i] = group_of(*pb.runs[i].run, by);
    groups[group[i]].push_back(i);
  }
  if (groups.size() < 2) {
    return;
  }
  for (const auto& [source, held] : groups) {
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < pb.runs.size(); ++i) {
      if (group[i] != source) {
        train.push_back(i);
      }
    }
    const Vec u = refit_rows(full, rows_of_runs(pb, train), run_fit_options());
    const std::vector<Vec> r = residuals(pb, held, {u}, c.simulations);
    Fold fold{source, static_cast<int>(held.size()), {}, 0.0};
    Vec errors;
    auto e = r[0].cbegin();
    for (std::size_t i : held) {
      RunResidual& run = pb.runs[i];
      set_predictions(run, e, true);
      e += static_cast<std::ptrdiff_t>(rows_of(run));
      errors.push_back(run.held_out_s / run.measured_s - 1.0);
    }
    for (std::size_t j = 0; j < pb.params.size(); ++j) {
      fold.values.push_back(from_unit(pb.params[j], u[j]));
    }
    fold.median_abs = median_abs_error(errors);
    c.folds.push_back(std::move(fold));
  }
}

}  // namespace

Calibration calibrate(const runs::RunsFile& file, const hw::Profile& base, const Options& opt) {
  const int threads = opt.jobs > 0 ? opt.jobs : tbb::info::default_concurrency();
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<std::size_t>(threads));
  Calibration c;
  c.base = base.name;
  Problem pb = prepare(file, base, opt, c);
  Vec u0;
  for (const hw::Scalar& p : pb.params) {
    u0.push_back(to_unit(p, p.get(base)));
  }
  const FitResult full = fit_subset(pb, all_runs(pb), u0, 12, c.simulations);
  c.iterations = full.iterations;
  c.fitted = at(pb, full.u);
  for (std::size_t j = 0; j < pb.params.size(); ++j) {
    const hw::Scalar& p = pb.params[j];
    c.parameters.push_back({p, p.get(base), from_unit(p, full.u[j]),
                            full.sigma_u[j] * (p.hi - p.lo), full.informed[j]});
  }
  auto e = full.residuals.cbegin();
  for (RunResidual& r : pb.runs) {
    set_predictions(r, e, false);
    e += static_cast<std::ptrdiff_t>(rows_of(r));
  }
  if (opt.hold_out) {
    c.held_out_by = opt.hold_out_by == Options::HoldOut::kSource ? "source" : "model";
    hold_out(pb, full, opt.hold_out_by, c);
  }
  c.runs = pb.runs;
  return c;
}

}  // namespace tessera::experiments::calibrate
