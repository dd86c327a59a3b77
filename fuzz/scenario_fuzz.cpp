// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the scenario loader on arbitrary bytes (a scenario YAML file with --set
// overrides, and maybe a hardware profile it names), then, for a scenario it accepts and that is
// small enough to simulate in milliseconds, the whole path a `tessera run` takes: hardware profile,
// cluster, synthesized graphs, simulation, metrics. base::InputError is the expected answer to a
// bad file. Anything else is a finding: a crash, a sanitizer report, a leak, a hang (libFuzzer's
// -timeout), a base::SimulationError (a synthesized step must run to the end: a deadlock there is a
// bug) or any other exception.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "experiments/pipeline.h"
#include "synth/scenario/scenario.h"

namespace {

using namespace tessera;

// The loader reads files (the scenario, a samples file beside it): each process writes its
// input into a folder of its own.
const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("tessera_fuzz_scenario_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Steps small enough that one input takes milliseconds (the loader bounds the rest).
bool small(const synth::Scenario& s) {
  std::int64_t layers = s.model.layers + (s.encoder.present ? s.encoder.layers : 0) + 2;
  return s.cluster.devices + s.encoder_devices() <= 64 && s.microbatches() <= 16 &&
         s.microbatches() * layers * s.parallel.pp <= 2048;
}

// The scenario's "#%set key.path=value" lines, as --set would pass them.
std::vector<std::string> overrides(std::string_view scenario) {
  constexpr std::string_view kSet = "#%set ";
  std::vector<std::string> out;
  for (std::size_t at = scenario.find(kSet); at != std::string_view::npos;
       at = scenario.find(kSet, at + 1)) {
    std::size_t begin = at + kSet.size();
    std::size_t end = scenario.find('\n', begin);
    out.emplace_back(scenario.substr(begin, end == std::string_view::npos ? end : end - begin));
  }
  return out;
}

void run(const std::string& path, const std::vector<std::string>& sets) {
  synth::Scenario s = synth::load_scenario(path, sets);
  if (!small(s)) {
    return;
  }
  (void)experiments::simulate_scenario(s, true, false);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An input may carry a hardware profile too: what follows a "#%profile" line goes into
  // fz.yaml beside the scenario, which the scenario can name (`hardware: fz.yaml`). Its
  // "#%set" lines (YAML comments) are --set overrides.
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kMarker = "\n#%profile\n";
  std::size_t cut = bytes.find(kMarker);
  std::string path = (scratch() / "scenario.yaml").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, cut);
  std::string profile = (scratch() / "fz.yaml").string();
  if (cut != std::string_view::npos) {
    std::ofstream(profile, std::ios::binary | std::ios::trunc)
        << bytes.substr(cut + kMarker.size());
  } else {
    std::filesystem::remove(profile);
  }
  try {
    run(path, overrides(bytes.substr(0, cut)));
  } catch (const base::InputError&) {
    // A bad scenario: the expected answer.
  }
  return 0;
}
