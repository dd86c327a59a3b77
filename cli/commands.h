// SPDX-License-Identifier: Apache-2.0
// The tessera subcommands. Each returns the process exit code for success; failures throw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::experiments::search {
class MpiWorld;
}

namespace CLI {
class App;
}

namespace tessera::cli {

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string out;
  bool no_share = false;
  std::string timeline_ranks;  // "0,8,16-31"; empty: the default choice
  bool perf = false;
  bool quiet = false;
  std::vector<std::string> without;  // modelled effects to switch off
};

struct CompareArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string schedules;  // "1f1b,interleaved:2,gpipe"
  std::string out;
  std::optional<std::string> sweep;  // "key.path=v1,v2,v3": rerun the comparison per value
};

struct SynthArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::string chakra;  // output prefix: <prefix>.<rank>.et, <prefix>.groups.json
};

struct SimulateArgs {
  std::string chakra;    // input prefix
  std::string hardware;  // profile name or path
  std::string topology;  // preset name
  bool replay_durations = false;
  bool rendezvous = false;  // sends wait for their recv (default: eager, as ASTRA-sim)
  std::string out;
};

struct ValidateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> measured;  // Kineto traces, one per rank
  std::string format = "text";        // text | json
};

struct ReplayArgs {
  std::string measured;     // one Kineto trace
  std::string hardware;     // "": the hardware it was measured on, durations as measured
  std::string measured_on;  // "": recognised from the trace's device name
  std::string topology = "single-node";
  int iteration = -1;  // -1: the second iteration (the first when there is one)
  bool all = false;    // every iteration
  std::string out;
};

struct SearchArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::int64_t devices = 0;       // 0: the scenario's
  std::vector<std::string> vary;  // "axis=v1,v2,..."
  std::string space;              // a space file
  int top = 10;
  std::string objective = "step_time";
  double max_memory = 1.0;
  int jobs = 0;  // 0: every core
  bool no_prune = false;
  std::string shard;               // "i/N"
  std::vector<std::string> merge;  // the shards' --out folders
  std::string out;
  CLI::App* command = nullptr;  // the subcommand, once added
};

// Adds `search` and its options to `app`, parsing into `a`.
void add_search_command(CLI::App& app, SearchArgs& a);

struct RunsArgs {
  std::string file;     // a runs file
  std::string recipes;  // a recipes file: what the runs' recipes set ("" for none)
  int jobs = 0;         // 0: every core
  std::string out;
  bool summary = false;
  bool pairs = false;                 // the pairs of runs that differ in one or two keys
  std::vector<std::string> profiles;  // NAME=FILE: runs on NAME simulate on FILE
  CLI::App* command = nullptr;        // the subcommand, once added
};

// Adds `runs` and its options to `app`, parsing into `a`.
void add_runs_command(CLI::App& app, RunsArgs& a);

struct CalibrateArgs {
  std::string runs;
  std::string recipes;  // a recipes file for a runs file ("" for none)
  std::string profile;
  std::string out;
  std::vector<std::string> fit;
  bool no_hold_out = false;
  std::string hold_out_by = "source";
  int jobs = 0;
  CLI::App* command = nullptr;
};

void add_calibrate_command(CLI::App& app, CalibrateArgs& a);

int run(const RunArgs& a);
int validate(const ValidateArgs& a);
int replay(const ReplayArgs& a);
int synth_chakra(const SynthArgs& a);
int inspect(const std::string& path);
int simulate_chakra(const SimulateArgs& a);
int check(const RunArgs& a);
int compare(const CompareArgs& a);
int search(const SearchArgs& a, const experiments::search::MpiWorld& world);
int runs(const RunsArgs& a);
int calibrate(const CalibrateArgs& a);
int list(bool parameters);  // parameters: the profile parameter table

}  // namespace tessera::cli
