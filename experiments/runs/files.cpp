// SPDX-License-Identifier: Apache-2.0
#include "experiments/runs/files.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>

#include "experiments/compare_files.h"

namespace tessera::experiments::runs {

namespace {

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const std::string& x : xs) {
    out += (out.empty() ? "" : "; ") + x;
  }
  return out;
}

// A run id as a file name: anything but letters, digits, '.', '-' and '_' becomes '_'.
std::string file_name(const std::string& id) {
  std::string out = id;
  for (char& c : out) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-';
    c = ok ? c : '_';
  }
  return out;
}

}  // namespace

std::string status_of(const RunResult& r) {
  if (r.simulated) {
    return "simulated";
  }
  if (!r.failure.empty()) {
    return "simulation failed: " + r.failure;
  }
  return fmt::format("not simulated: {} ({})", r.run->skip, r.run->skip_at.str());
}

void write_runs_csv(const std::string& path, const std::vector<RunResult>& results) {
  std::ofstream out = open_for_writing(path);
  out << "id,source,hardware,precision,measured_field,measured_value,measured_step_s,"
         "predicted_step_s,error,mfu,peak_hbm_bytes,hbm_capacity_bytes,status,notes\n";
  for (const RunResult& r : results) {
    const Run& run = *r.run;
    out << fmt::format("{},{},{},{},{},{:.17g},", csv_quote(run.id), csv_quote(run.source),
                       run.hardware, run.precision, run.measured.field, run.measured.value);
    if (r.simulated) {
      out << fmt::format("{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},", r.measured_s,
                         r.predicted_s, r.error(), r.mfu, r.peak_hbm_bytes, r.hbm_capacity_bytes);
    } else {
      out << ",,,,,,";
    }
    out << csv_quote(status_of(r)) << "," << csv_quote(joined(run.notes)) << "\n";
  }
}

void write_scenarios(const std::string& dir, const RunsFile& file) {
  std::filesystem::create_directories(dir);
  for (const Run& run : file.runs) {
    if (run.scenario_text.empty()) {
      continue;
    }
    std::ofstream out = open_for_writing(fmt::format("{}/{}.yaml", dir, file_name(run.id)));
    out << fmt::format("# The scenario run '{}' of {} became (tessera runs).\n", run.id, file.path);
    for (const std::string& n : run.notes) {
      out << "# note: " << n << "\n";
    }
    if (!run.skip.empty()) {
      out << "# not simulated: " << run.skip << "\n";
    }
    out << run.scenario_text;
  }
}

}  // namespace tessera::experiments::runs
