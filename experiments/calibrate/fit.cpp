// SPDX-License-Identifier: Apache-2.0
#include "experiments/calibrate/fit.h"

#include <algorithm>
#include <cmath>

namespace tessera::experiments::calibrate {

namespace {

using Vec = std::vector<double>;

// The robust loss of a residual (soft-L1, or Cauchy's when `redescending`; both r^2 for small
// r) and its iteratively reweighted least-squares weight.
double loss(double r, const FitOptions& o) {
  const double c = o.robust;
  if (c <= 0.0) {
    return r * r;
  }
  const double z = (r / c) * (r / c);
  return o.redescending ? c * c * std::log1p(z) : 2.0 * c * c * (std::sqrt(1.0 + z) - 1.0);
}
double weight(double r, const FitOptions& o) {
  const double c = o.robust;
  if (c <= 0.0) {
    return 1.0;
  }
  const double z = (r / c) * (r / c);
  return o.redescending ? 1.0 / (1.0 + z) : 1.0 / std::sqrt(1.0 + z);
}

// Residuals and their sensitivities at one point (a column per informed parameter).
struct Model {
  Vec r;
  std::vector<Vec> jac;
};

double cost(const Vec& r, const Vec& u, const Vec& u0, const std::vector<std::size_t>& idx,
            const FitOptions& opt) {
  double c = 0.0;
  for (double x : r) {
    c += loss(x, opt);
  }
  for (std::size_t j : idx) {
    c += std::pow((u[j] - u0[j]) / opt.prior_sigma, 2);
  }
  return c;
}

// The residuals at `u` and, by forward differences (backward at the upper bound), their
// sensitivities to the parameters `idx`: one batch of 1 + |idx| points.
Model measure(const Residuals& f, const Vec& u, const std::vector<std::size_t>& idx,
              const FitOptions& opt, int& evaluations) {
  std::vector<Vec> points{u};
  Vec steps;
  for (std::size_t j : idx) {
    Vec p = u;
    steps.push_back(u[j] + opt.step <= 1.0 ? opt.step : -opt.step);
    p[j] += steps.back();
    points.push_back(p);
  }
  const std::vector<Vec> values = f(points);
  evaluations += static_cast<int>(points.size());
  Model m{values[0], std::vector<Vec>(u.size(), Vec(values[0].size(), 0.0))};
  for (std::size_t k = 0; k < idx.size(); ++k) {
    for (std::size_t i = 0; i < m.r.size(); ++i) {
      m.jac[idx[k]][i] = (values[k + 1][i] - m.r[i]) / steps[k];
    }
  }
  return m;
}

// Broyden's update: the sensitivities that explain the change `dr` a step `du` made.
void broyden(Model& m, const Vec& du, const Vec& r_new, const std::vector<std::size_t>& idx) {
  double norm = 0.0;
  for (std::size_t j : idx) {
    norm += du[j] * du[j];
  }
  if (norm <= 0.0) {
    return;
  }
  for (std::size_t i = 0; i < m.r.size(); ++i) {
    double predicted = m.r[i];
    for (std::size_t j : idx) {
      predicted += m.jac[j][i] * du[j];
    }
    const double miss = (r_new[i] - predicted) / norm;
    for (std::size_t j : idx) {
      m.jac[j][i] += miss * du[j];
    }
  }
}

// The normal equations of the reweighted problem over `rows`, (J'WJ + P + lambda diag) d =
// -(J'Wr + P (u - u0)), for the parameters `idx`; `r` are the residuals at `u`.
struct Linear {
  const std::vector<Vec>& jac;
  const Vec& r;
  const std::vector<std::size_t>& rows;
  const std::vector<std::size_t>& idx;
};

Vec step_of(const Linear& lin, const Vec& u, const Vec& u0, const FitOptions& opt, double lambda,
            Vec* normal = nullptr) {
  const auto& [jac, r, rows, idx] = lin;
  const std::size_t n = idx.size();
  const double prior = 1.0 / (opt.prior_sigma * opt.prior_sigma);
  Vec a(n * n, 0.0);
  Vec b(n, 0.0);
  for (std::size_t i : rows) {
    const double w = weight(r[i], opt);
    for (std::size_t x = 0; x < n; ++x) {
      b[x] -= w * jac[idx[x]][i] * r[i];
      for (std::size_t y = 0; y < n; ++y) {
        a[x * n + y] += w * jac[idx[x]][i] * jac[idx[y]][i];
      }
    }
  }
  for (std::size_t x = 0; x < n; ++x) {
    a[x * n + x] += prior + lambda * (a[x * n + x] + prior);
    b[x] -= prior * (u[idx[x]] - u0[idx[x]]);
  }
  if (normal != nullptr) {
    *normal = a;
  }
  return solve_spd(a, b, n) ? b : Vec(n, 0.0);
}

std::vector<std::size_t> every_row(std::size_t n) {
  std::vector<std::size_t> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows[i] = i;
  }
  return rows;
}

// One standard deviation per parameter: s^2 (J'WJ + P)^-1, s^2 the weighted residual variance.
Vec uncertainty(const Model& m, const std::vector<std::size_t>& idx, const Vec& u,
                const FitOptions& opt) {
  Vec out(u.size(), 0.0);
  if (idx.empty()) {
    return out;
  }
  Vec a;
  const std::vector<std::size_t> rows = every_row(m.r.size());
  (void)step_of(Linear{m.jac, m.r, rows, idx}, u, u, opt, 0.0, &a);
  double ss = 0.0;
  for (double x : m.r) {
    ss += loss(x, opt);
  }
  const double dof = std::max(1.0, static_cast<double>(m.r.size() - idx.size()));
  Vec b(idx.size(), 0.0);
  Vec inverse;
  if (solve_spd(a, b, idx.size(), &inverse)) {
    for (std::size_t x = 0; x < idx.size(); ++x) {
      out[idx[x]] = std::sqrt(ss / dof * inverse[x * idx.size() + x]);
    }
  }
  return out;
}

}  // namespace

namespace {

// a = L L' in place (L in the lower triangle); false when a is not positive definite.
bool cholesky(Vec& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) {
      d -= a[j * n + k] * a[j * n + k];
    }
    if (!(d > 0.0)) {
      return false;
    }
    a[j * n + j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) {
        s -= a[i * n + k] * a[j * n + k];
      }
      a[i * n + j] = s / a[j * n + j];
    }
  }
  return true;
}

// x <- (L L')^-1 x.
void cholesky_solve(const Vec& l, Vec& x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      x[i] -= l[i * n + k] * x[k];
    }
    x[i] /= l[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) {
      x[i] -= l[k * n + i] * x[k];
    }
    x[i] /= l[i * n + i];
  }
}

}  // namespace

bool solve_spd(std::vector<double> a, std::vector<double>& b, std::size_t n,
               std::vector<double>* inverse) {
  if (!cholesky(a, n)) {
    return false;
  }
  cholesky_solve(a, b, n);
  if (inverse != nullptr) {
    inverse->assign(n * n, 0.0);
    for (std::size_t c = 0; c < n; ++c) {
      Vec e(n, 0.0);
      e[c] = 1.0;
      cholesky_solve(a, e, n);
      for (std::size_t r = 0; r < n; ++r) {
        (*inverse)[r * n + c] = e[r];
      }
    }
  }
  return true;
}

FitResult fit(const Residuals& f, const Vec& u0, const FitOptions& opt) {
  FitResult out{u0, u0, {}, std::vector<bool>(u0.size(), false), {}, {}, 0, 0};
  std::vector<std::size_t> idx = every_row(u0.size());
  Model m = measure(f, u0, idx, opt, out.evaluations);
  idx.clear();
  for (std::size_t j = 0; j < u0.size(); ++j) {
    for (double d : m.jac[j]) {
      out.informed[j] = out.informed[j] || std::abs(d) >= opt.informed;
    }
    if (out.informed[j]) {
      idx.push_back(j);
    }
  }
  const std::vector<std::size_t> rows = every_row(m.r.size());
  double lambda = 1e-3;
  double current = cost(m.r, out.u, u0, idx, opt);
  int rejected = 0;
  while (!idx.empty() && out.iterations < opt.max_iterations && rejected < 5) {
    const Vec d = step_of(Linear{m.jac, m.r, rows, idx}, out.u, u0, opt, lambda);
    Vec trial = out.u;
    double moved = 0.0;
    for (std::size_t x = 0; x < idx.size(); ++x) {
      trial[idx[x]] = std::clamp(trial[idx[x]] + d[x], 0.0, 1.0);
      moved = std::max(moved, std::abs(trial[idx[x]] - out.u[idx[x]]));
    }
    if (moved < opt.tolerance) {
      break;
    }
    const Vec r = f({trial})[0];
    ++out.evaluations;
    Vec du(trial.size());
    for (std::size_t j = 0; j < du.size(); ++j) {
      du[j] = trial[j] - out.u[j];
    }
    broyden(m, du, r, idx);
    const double c = cost(r, trial, u0, idx, opt);
    if (c < current) {
      out.u = trial;
      m.r = r;
      current = c;
      lambda = std::max(lambda / 3.0, 1e-7);
      rejected = 0;
      ++out.iterations;
    } else {
      lambda *= 8.0;
      ++rejected;
    }
  }
  if (!idx.empty() && out.u != u0) {  // fresh sensitivities for the uncertainty
    m = measure(f, out.u, idx, opt, out.evaluations);
  }
  out.residuals = m.r;
  out.jacobian = m.jac;
  out.sigma_u = uncertainty(m, idx, out.u, opt);
  return out;
}

Vec refit_rows(const FitResult& full, const std::vector<std::size_t>& rows, const FitOptions& opt) {
  std::vector<std::size_t> idx;
  for (std::size_t j = 0; j < full.u.size(); ++j) {
    if (full.informed[j]) {
      idx.push_back(j);
    }
  }
  Vec u = full.u;
  Vec r = full.residuals;
  for (int it = 0; it < 20 && !idx.empty(); ++it) {
    const Vec d = step_of(Linear{full.jacobian, r, rows, idx}, u, full.start, opt, 0.0);
    double moved = 0.0;
    for (std::size_t x = 0; x < idx.size(); ++x) {
      const double next = std::clamp(u[idx[x]] + d[x], 0.0, 1.0);
      moved = std::max(moved, std::abs(next - u[idx[x]]));
      u[idx[x]] = next;
    }
    for (std::size_t i = 0; i < r.size(); ++i) {  // the linear model at the new point
      r[i] = full.residuals[i];
      for (std::size_t j : idx) {
        r[i] += full.jacobian[j][i] * (u[j] - full.u[j]);
      }
    }
    if (moved < opt.tolerance) {
      break;
    }
  }
  return u;
}

}  // namespace tessera::experiments::calibrate
