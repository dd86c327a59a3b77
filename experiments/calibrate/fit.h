// SPDX-License-Identifier: Apache-2.0
// A small bounded robust least-squares fit for `tessera calibrate`: a handful of parameters,
// each scaled to the unit interval of its bounds; Levenberg-Marquardt steps on finite-
// difference sensitivities, kept current between full evaluations by Broyden's rank-one
// update, so that a step costs one pass over the data, not one per parameter; a soft-L1 loss,
// so that a run with an effect no parameter models does not drag the global values; a weak
// prior that holds a parameter the data does not inform at its start; and the parameters'
// uncertainty from the curvature at the optimum (docs/calibration.md Part 3).
#pragma once

#include <functional>
#include <vector>

namespace tessera::experiments::calibrate {

// The residuals of the data at each of several points of [0, 1]^p, one vector per point (all
// of one length), in the order given: one call evaluates a whole batch, so that the caller can
// run it in parallel.
using Residuals =
    std::function<std::vector<std::vector<double>>(const std::vector<std::vector<double>>&)>;

struct FitOptions {
  int max_iterations = 12;
  double step = 0.01;         // finite-difference step, in units of a parameter's range
  double prior_sigma = 10.0;  // the prior's width around the start, in units of the range
  double tolerance = 1e-4;    // stop when no parameter moves by more (units of the range)
  double robust = 0.1;        // the robust loss's scale of a residual (0: plain least squares)
  // The loss beyond that scale: soft-L1 (false), whose pull on the fit stays constant as a
  // residual grows, or Cauchy's (true), whose pull fades, so that a few runs with an effect no
  // parameter models cannot move the global values however far off they are.
  bool redescending = false;
  // A parameter whose largest sensitivity |dr/du| over the data is below this is not informed:
  // it keeps its start value and takes no part in the fit.
  double informed = 1e-3;
};

struct FitResult {
  std::vector<double> start;                  // where the fit began (the prior's centre)
  std::vector<double> u;                      // the optimum in [0, 1]^p
  std::vector<double> sigma_u;                // one standard deviation, units of the range
  std::vector<bool> informed;                 // whether the data moves each parameter
  std::vector<double> residuals;              // at the optimum
  std::vector<std::vector<double>> jacobian;  // d residual / du at the optimum, per parameter
  int iterations = 0;
  int evaluations = 0;  // points evaluated (each a pass over the data)
};

FitResult fit(const Residuals& f, const std::vector<double>& u0, const FitOptions& opt = {});

// The fit of the rows `rows` alone, on the linear model r(u) = r* + J (u - u*) of `full`
// (no evaluation): what the data without the other rows says, from the sensitivities.
std::vector<double> refit_rows(const FitResult& full, const std::vector<std::size_t>& rows,
                               const FitOptions& opt = {});

// Solves the symmetric positive definite system a x = b (a: n x n, row-major) in place by
// Cholesky; returns false when a is not positive definite. Also gives the inverse when asked.
bool solve_spd(std::vector<double> a, std::vector<double>& b, std::size_t n,
               std::vector<double>* inverse = nullptr);

}  // namespace tessera::experiments::calibrate
