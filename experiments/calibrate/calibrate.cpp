// SPDX-License-Identifier: Apache-2.0
#include "experiments/calibrate/calibrate.h"

#include <fmt/format.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/calibrate/fit.h"
#include "experiments/pipeline.h"

namespace tessera::experiments::calibrate {

namespace {

using Vec = std::vector<double>;

// The residual of a run whose simulation fails at some point: a large error, so that the fit
// steers away from it.
constexpr double kFailed = 2.0;

std::vector<hw::Scalar> chosen(const Options& opt) {
  std::vector<hw::Scalar> out;
  if (opt.fit.empty()) {
    for (const hw::Parameter& p : hw::profile_parameters()) {
      if (p.fitted) {
        out.push_back(*hw::find_scalar(p.path));
      }
    }
    return out;
  }
  for (const std::string& path : opt.fit) {
    std::optional<hw::Scalar> s = hw::find_scalar(path);
    if (!s || std::isinf(s->hi)) {
      throw base::InputError(fmt::format(
          "--fit '{}': not a bounded number of the profile parameter table (tessera list "
          "--parameters; one head dim of a map is written attention.forward.128)",
          path));
    }
    out.push_back(*s);
  }
  return out;
}

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

double simulate(const runs::Run& run, const hw::Profile& profile, double* model_flops = nullptr) {
  synth::Scenario s = *run.scenario;
  s.cluster.profile = profile;
  RunOptions opt;
  opt.balanced_twin = false;
  Outcome o = simulate_scenario(s, opt);
  if (model_flops != nullptr) {
    *model_flops = o.graph.info.model_flops;
  }
  return o.stats.step_time_s;
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

// Log errors of the runs `subset` at each point, in parallel over points x runs.
std::vector<Vec> residuals(const Problem& pb, const std::vector<std::size_t>& subset,
                           const std::vector<Vec>& points, int& simulations) {
  std::vector<Vec> values;
  for (const Vec& u : points) {
    values.push_back(values_at(pb, u));
  }
  std::vector<Vec> out(points.size(), Vec(subset.size(), 0.0));
  tbb::parallel_for(std::size_t{0}, points.size() * subset.size(), [&](std::size_t k) {
    const std::size_t point = k / subset.size();
    const RunResidual& r = pb.runs[subset[k % subset.size()]];
    double e = kFailed;
    try {
      e = std::log(simulate(*r.run, profile_of(pb, *r.run, values[point])) / r.measured_s);
    } catch (const base::Error&) {
    }
    out[point][k % subset.size()] = e;
  });
  simulations += static_cast<int>(points.size() * subset.size());
  return out;
}

// A run on the profile, or on one that extends it (its own values kept where it gives them).
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

Problem prepare(const runs::RunsFile& file, const hw::Profile& base, const Options& opt,
                Calibration& c) {
  Problem pb{&base, chosen(opt), {}};
  for (const runs::Run& run : file.runs) {
    if (!on_profile(run, base.name)) {
      continue;
    }
    if (!run.scenario) {
      c.left_out.push_back(fmt::format("{}: {}", run.id, run.skip));
      continue;
    }
    pb.runs.push_back({&run, 0.0, 0.0, 0.0, 0.0});
  }
  std::vector<std::string> failed(pb.runs.size());
  tbb::parallel_for(std::size_t{0}, pb.runs.size(), [&](std::size_t i) {
    RunResidual& r = pb.runs[i];
    try {
      double flops = 0.0;
      r.start_s = simulate(*r.run, synth::hardware_profile(*r.run->scenario), &flops);
      r.measured_s = r.run->measured_step_s(flops);
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

FitResult fit_subset(const Problem& pb, const std::vector<std::size_t>& subset, const Vec& u0,
                     int iterations, int& simulations) {
  FitOptions fo;
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

// Each source left out in turn: fitted on the others (on the full fit's sensitivities, no new
// simulation), then its runs simulated at those values.
void hold_out(Problem& pb, const FitResult& full, Calibration& c) {
  std::map<std::string, std::vector<std::size_t>> by_source;
  for (std::size_t i = 0; i < pb.runs.size(); ++i) {
    by_source[pb.runs[i].run->source].push_back(i);
  }
  if (by_source.size() < 2) {
    return;
  }
  for (const auto& [source, held] : by_source) {
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < pb.runs.size(); ++i) {
      if (pb.runs[i].run->source != source) {
        train.push_back(i);
      }
    }
    const Vec u = refit_rows(full, train);
    const std::vector<Vec> r = residuals(pb, held, {u}, c.simulations);
    Fold fold{source, static_cast<int>(held.size()), {}, 0.0};
    Vec errors;
    for (std::size_t k = 0; k < held.size(); ++k) {
      RunResidual& run = pb.runs[held[k]];
      run.held_out_s = run.measured_s * std::exp(r[0][k]);
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

double to_unit(const hw::Scalar& p, double v) {
  return std::clamp((v - p.lo) / (p.hi - p.lo), 0.0, 1.0);
}

double from_unit(const hw::Scalar& p, double u) {
  return p.lo + u * (p.hi - p.lo);
}

double median_abs_error(const std::vector<double>& errors) {
  if (errors.empty()) {
    return 0.0;
  }
  Vec a;
  for (double e : errors) {
    a.push_back(std::abs(e));
  }
  std::sort(a.begin(), a.end());
  const std::size_t n = a.size();
  return n % 2 == 1 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

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
  for (std::size_t i = 0; i < pb.runs.size(); ++i) {
    pb.runs[i].fitted_s = pb.runs[i].measured_s * std::exp(full.residuals[i]);
  }
  if (opt.hold_out) {
    hold_out(pb, full, c);
  }
  c.runs = pb.runs;
  return c;
}

}  // namespace tessera::experiments::calibrate
