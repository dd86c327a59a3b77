// SPDX-License-Identifier: Apache-2.0
// The scalars a calibration fits, their unit interval, and the error summary both calibrations
// report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "experiments/calibrate/calibrate.h"

namespace tessera::experiments::calibrate {

std::vector<hw::Scalar> scalars_to_fit(const std::vector<std::string>& paths) {
  std::vector<hw::Scalar> out;
  if (paths.empty()) {
    for (const hw::Parameter& p : hw::profile_parameters()) {
      if (p.fitted) {
        out.push_back(*hw::find_scalar(p.path));
      }
    }
    return out;
  }
  for (const std::string& path : paths) {
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
  std::vector<double> a;
  for (double e : errors) {
    a.push_back(std::abs(e));
  }
  std::sort(a.begin(), a.end());
  const std::size_t n = a.size();
  return n % 2 == 1 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

}  // namespace tessera::experiments::calibrate
