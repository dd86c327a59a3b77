// SPDX-License-Identifier: Apache-2.0
// The runs file as a whole: the YAML corpus schema or the CSV form, ids unique, at least one
// run; and a measured step time from what was published.
#include "experiments/runs/runs_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "experiments/runs/recipes.h"
#include "experiments/runs/translate.h"
#include "measured/iterations.h"
#include "measured/kineto_reader.h"

namespace tessera::experiments::runs {

using base::YamlNode;

namespace {

std::string precision_of(const synth::Scenario& s) {
  if (s.training.fp8 != synth::Fp8Recipe::kNone) {
    return "fp8";
  }
  return s.training.precision == base::DType::kFP16 ? "fp16" : "bf16";
}

// The mean measured step of a trace: each iteration from its annotation's start until the CPU
// step and its GPU work have ended (measured/iterations.h); 0 when it has no GPU activity.
double trace_step_s(const measured::KinetoTrace& t) {
  const measured::IterationSet set = measured::find_iterations(t);
  double sum = 0.0;
  int n = 0;
  for (const measured::Iteration& it : set.iterations) {
    if (!it.activities.empty()) {
      sum += static_cast<double>(it.span_ns()) * 1e-9;
      ++n;
    }
  }
  return n > 0 ? sum / n : 0.0;
}

// Reads the run's trace; the step time comes from it when the run gives none (step_s 0).
void attach_trace(Run& run, const std::string& path, const base::SourceLoc& at) {
  if (!std::filesystem::is_regular_file(path)) {
    throw base::InputError(at, fmt::format("trace '{}' does not exist", path),
                           "a relative path is looked up beside the runs file");
  }
  run.trace = std::make_shared<const measured::KinetoTrace>(measured::read_kineto(path));
  if (run.measured.value > 0.0) {
    return;
  }
  run.measured = {Measurement::Kind::kStepTime, trace_step_s(*run.trace), "trace", at};
  if (!(run.measured.value > 0.0)) {
    throw base::InputError(at, fmt::format("trace '{}' has no GPU activity to time a step", path),
                           "give the step time, or a trace of training steps");
  }
}

// A run given as a scenario file with overrides and its measured step time.
Run scenario_run(std::string id, const std::string& scenario, const std::vector<std::string>& sets,
                 double step_s, const base::SourceLoc& at) {
  Run run;
  run.id = std::move(id);
  run.at = at;
  run.source = "own";
  run.measured = {Measurement::Kind::kStepTime, step_s, "step_time_s", at};
  run.scenario = synth::load_scenario(scenario, sets);
  run.scenario_file = scenario;
  run.sets = sets;
  run.hardware = synth::hardware_profile(*run.scenario).name;
  run.precision = precision_of(*run.scenario);
  return run;
}

Run scenario_case(const YamlNode& c) {
  const YamlNode sc = c.at("scenario");
  const std::string file = c.find_beside(text_of(sc));
  if (file.empty()) {
    sc.fail(fmt::format("scenario file '{}' does not exist", text_of(sc)),
            "a relative path is looked up beside the runs file");
  }
  std::vector<std::string> sets;
  if (auto s = c.find("set")) {
    for (const YamlNode& item : s->items()) {
      sets.push_back(text_of(item));
    }
  }
  const std::optional<YamlNode> trace = c.find("trace");
  std::optional<double> step;
  if (!trace || c.has("measured")) {
    const YamlNode m = c.at("measured");
    step = lenient_number(m.at("step_time_s"));
    if (!step) {
      m.at("step_time_s").fail("expected the measured step time in seconds");
    }
  }
  Run run = scenario_run(text_of(c.at("id")), file, sets, step.value_or(0.0), c.loc());
  if (auto s = c.find("source")) {
    run.source = text_of(*s);
  }
  if (trace) {
    const std::string path = c.find_beside(text_of(*trace));
    attach_trace(run, path.empty() ? text_of(*trace) : path, trace->loc());
  }
  return run;
}

RunsFile read_yaml(const std::string& path, const std::string& recipes) {
  const YamlNode root = YamlNode::load_file(path);
  const std::optional<YamlNode> models = root.find("models");
  const YamlNode cases = root.has("cases") ? root.at("cases") : root.at("runs");
  if (!cases.is_seq() || cases.items().empty()) {
    cases.fail("expected a list of runs, and at least one");
  }
  const std::map<std::string, std::string> from_recipes =
      recipes.empty() ? std::map<std::string, std::string>{} : apply_recipes(recipes, cases);
  RunsFile out{path, {}};
  std::set<std::string> ids;
  for (const YamlNode& c : cases.items()) {
    c.expect_map();
    std::vector<Run> runs =
        c.has("scenario") ? std::vector<Run>{scenario_case(c)} : translate_case(c, models, path);
    const auto recipe = c.has("id") ? from_recipes.find(text_of(c.at("id"))) : from_recipes.end();
    for (Run& run : runs) {
      if (!ids.insert(run.id).second) {
        c.at("id").fail(fmt::format("a second run with id '{}'", run.id));
      }
      if (recipe != from_recipes.end()) {
        run.notes.push_back(recipe->second);
      }
      out.runs.push_back(std::move(run));
    }
  }
  return out;
}

// One CSV line's cells; double quotes hold commas, "" is a quote.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted_cell = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '"' && quoted_cell && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (ch == '"') {
      quoted_cell = !quoted_cell;
    } else if (ch == ',' && !quoted_cell) {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

std::vector<std::string> split_sets(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(';', start);
    std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    if (!part.empty()) {
      out.push_back(part);
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return out;
}

// One line of the CSV form: id, scenario, set, step time, then source and trace, optional
// (positional, whatever the header lists); the step time may be empty with a trace.
Run csv_run(std::vector<std::string> f, const base::SourceLoc& at,
            const std::filesystem::path& dir) {
  auto beside = [&](const std::string& p) {
    return std::filesystem::path(p).is_relative() ? (dir / p).string() : p;
  };
  const std::size_t given = f.size();
  f.resize(std::max<std::size_t>(given, 6));
  const bool traced = !f[5].empty();
  char* end = nullptr;
  const double step = std::strtod(f[3].c_str(), &end);
  const bool no_step = f[3].empty() && traced;
  if (given < 4 || given > 6 ||
      (!no_step && (end == f[3].c_str() || *end != '\0' || !(step > 0.0)))) {
    throw base::InputError(at,
                           "expected id,scenario,set,step_time_s[,source[,trace]] with a step "
                           "time in seconds > 0 (it may be empty when the run names a trace)");
  }
  Run run = scenario_run(f[0], beside(f[1]), split_sets(f[2]), no_step ? 0.0 : step, at);
  run.source = f[4].empty() ? "own" : f[4];
  if (traced) {
    attach_trace(run, beside(f[5]), at);
  }
  return run;
}

RunsFile read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "cannot read the runs file");
  }
  const std::vector<std::string> want = {"id", "scenario", "set", "step_time_s", "source", "trace"};
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = cells(line);
  if (header.size() < 4 || header.size() > want.size() ||
      !std::equal(header.begin(), header.end(), want.begin())) {
    throw base::InputError(base::SourceLoc{path, 1, 1},
                           "expected the header 'id,scenario,set,step_time_s[,source[,trace]]'");
  }
  RunsFile out{path, {}};
  std::set<std::string> ids;
  const auto dir = std::filesystem::path(path).parent_path();
  for (int no = 2; std::getline(in, line); ++no) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const base::SourceLoc at{path, no, 1};
    Run run = csv_run(cells(line), at, dir);
    if (!ids.insert(run.id).second) {
      throw base::InputError(at, fmt::format("a second run with id '{}'", run.id));
    }
    out.runs.push_back(std::move(run));
  }
  if (out.runs.empty()) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "the runs file lists no run");
  }
  return out;
}

}  // namespace

double Run::measured_step_s(double model_flops) const {
  if (!scenario) {
    return measured.kind == Measurement::Kind::kStepTime ? measured.value : 0.0;
  }
  const synth::Scenario& s = *scenario;
  const double devices = static_cast<double>(s.cluster.devices);
  switch (measured.kind) {
    case Measurement::Kind::kStepTime:
      return measured.value;
    case Measurement::Kind::kTokensPerSecond:
      return static_cast<double>(s.training.global_batch * s.training.seq_len) /
             (measured.value * devices);
    case Measurement::Kind::kModelTflops:
      return model_flops / (measured.value * 1e12 * devices);
  }
  return 0.0;
}

int use_profile(RunsFile& file, const std::string& name, const hw::Profile& profile) {
  int n = 0;
  for (Run& run : file.runs) {
    if (run.hardware == name && run.scenario) {
      run.scenario->cluster.profile = profile;
      ++n;
    }
  }
  return n;
}

RunsFile read_runs(const std::string& path, const std::string& recipes) {
  if (path.ends_with(".csv") && !recipes.empty()) {
    throw base::InputError(base::SourceLoc{recipes, 0, 0},
                           "recipes apply to a runs file in the YAML corpus schema, not to CSV",
                           "state the recipe's settings in each run's `set` column");
  }
  return path.ends_with(".csv") ? read_csv(path) : read_yaml(path, recipes);
}

}  // namespace tessera::experiments::runs
