// SPDX-License-Identifier: Apache-2.0
// The microbenchmark fits of a profile, run in order (microbench.h): each moves its scalars to
// minimise the robust sum of its rows' weighted log errors (fit.h), every 4th row of a table
// held out.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "experiments/calibrate/fit.h"
#include "experiments/calibrate/microbench.h"

namespace tessera::experiments::calibrate {

namespace {

using Vec = std::vector<double>;

hw::Profile at(const hw::Profile& base, const std::vector<hw::Scalar>& scalars, const Vec& u) {
  hw::Profile p = base;
  for (std::size_t j = 0; j < scalars.size(); ++j) {
    scalars[j].set(p, from_unit(scalars[j], u[j]));
  }
  return p;
}

// The scalars of `fit` that `only` keeps (all when it is empty).
std::vector<hw::Scalar> kept(const MicrobenchFit& fit, const std::vector<std::string>& only) {
  std::vector<hw::Scalar> out;
  for (const hw::Scalar& s : fit.scalars) {
    if (only.empty() || std::find(only.begin(), only.end(), s.path) != only.end()) {
      out.push_back(s);
    }
  }
  return out;
}

FitOutcome run_fit(const MicrobenchFit& spec, const std::vector<hw::Scalar>& scalars,
                   hw::Profile& profile) {
  std::vector<const Measurement*> used;
  for (const Measurement& m : spec.rows) {
    if (m.fitted && !m.held_out) {
      used.push_back(&m);
    }
  }
  if (!scalars.empty() && used.empty()) {
    throw base::InputError(spec.where, fmt::format("fit '{}' has no row to fit", spec.name));
  }
  FitOutcome out{spec.name, {}, {}, 0};
  for (const Measurement& m : spec.rows) {
    out.rows.push_back({m, predict(profile, m), 0.0});
  }
  if (!scalars.empty()) {
    Vec u0;
    for (const hw::Scalar& s : scalars) {
      u0.push_back(to_unit(s, s.get(profile)));
    }
    const hw::Profile start = profile;
    auto residuals = [&](const std::vector<Vec>& points) {
      std::vector<Vec> r;
      for (const Vec& u : points) {
        const hw::Profile p = at(start, scalars, u);
        Vec& e = r.emplace_back();
        for (const Measurement* m : used) {
          e.push_back(std::sqrt(m->weight) * std::log(predict(p, *m) / m->measured));
        }
      }
      return r;
    };
    FitOptions fo;
    fo.max_iterations = 40;
    fo.robust = 0.01;
    const FitResult f = fit(residuals, u0, fo);
    profile = at(start, scalars, f.u);
    out.iterations = f.iterations;
    for (std::size_t j = 0; j < scalars.size(); ++j) {
      const hw::Scalar& s = scalars[j];
      out.values.push_back({s, s.get(start), s.get(profile), f.sigma_u[j] * (s.hi - s.lo),
                            static_cast<bool>(f.informed[j])});
    }
  }
  for (RowFit& r : out.rows) {
    r.fitted = predict(profile, r.row);
  }
  return out;
}

}  // namespace

MicrobenchCalibration calibrate_microbench(const std::string& path, const hw::Profile& base,
                                           const std::vector<std::string>& only) {
  const std::vector<MicrobenchFit> fits = read_microbench_fits(path, base.name, base.ancestors);
  for (const std::string& name : only) {
    const bool moved = std::any_of(fits.begin(), fits.end(), [&](const MicrobenchFit& f) {
      return std::any_of(f.scalars.begin(), f.scalars.end(),
                         [&](const hw::Scalar& s) { return s.path == name; });
    });
    if (!moved) {
      throw base::InputError(
          fmt::format("--fit '{}': no fit of {} for '{}' moves it", name, path, base.name));
    }
  }
  MicrobenchCalibration c{base.name, fits.front().profile, base, {}};
  for (const MicrobenchFit& f : fits) {
    const std::vector<hw::Scalar> scalars = kept(f, only);
    if (scalars.empty() && !(only.empty() && f.scalars.empty())) {
      continue;
    }
    c.fits.push_back(run_fit(f, scalars, c.fitted));
  }
  return c;
}

RowErrors row_errors(const std::vector<RowFit>& rows, bool fitted) {
  RowErrors e;
  for (const RowFit& r : rows) {
    if (!r.row.fitted) {
      continue;
    }
    const double err = std::abs((fitted ? r.fitted : r.start) / r.row.measured - 1.0);
    if (r.row.held_out) {
      e.held_mean += err;
      e.held_max = std::max(e.held_max, err);
      ++e.held_rows;
    } else {
      e.fit_mean += err;
      ++e.fit_rows;
    }
  }
  e.fit_mean /= std::max(1, e.fit_rows);
  e.held_mean /= std::max(1, e.held_rows);
  return e;
}

}  // namespace tessera::experiments::calibrate
