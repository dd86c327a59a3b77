// SPDX-License-Identifier: Apache-2.0
// The loader's readers, one per top-level section (read_model.cpp, read_training.cpp,
// read_schedule.cpp, read_cluster.cpp): YAML -> the typed Scenario parts, every key checked
// and every value range-checked at its file:line:col. Cross-field checks are validate()'s
// (validate.h). Internal to synth/scenario.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/yaml_reader.h"
#include "synth/scenario/scenario.h"

namespace tessera::synth::reader {

// Upper bounds of the integers a scenario gives: far beyond any real model or cluster, low
// enough that products of a few of them (tensor sizes, tp*pp*dp) stay within 64 bits.
inline constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
inline constexpr std::int64_t kMaxWidth = std::int64_t{1}
                                          << 22;  // hidden, heads, ffn, patch pixels
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 30;    // sequences
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;  // a million devices
inline constexpr std::int64_t kMaxSeq = std::int64_t{1} << 24;      // tokens of a sequence

void read_model(const base::YamlNode& n, ModelConfig& m);
void read_encoder(const base::YamlNode& n, EncoderConfig& e);
// `model.moe`, onto the preset's values; `layers` bounds first_dense_layers.
void read_moe(const base::YamlNode& n, MoeConfig& m, std::int64_t layers);
void read_mla(const base::YamlNode& n, MlaConfig& m);
void read_training(const base::YamlNode& n, TrainingConfig& t);
void read_parallel(const base::YamlNode& n, ParallelConfig& p);
// parallelism.cp and cp_comm; zero and dp_shard (read_sharding.cpp).
void read_context_parallel(const base::YamlNode& n, ParallelConfig& p);
void read_sharded_data_parallel(const base::YamlNode& n, ParallelConfig& p);
// parallelism.pipeline_layout (read_layout.cpp): the stages of a pipe, with file:line:col
// errors for a malformed string.
std::vector<PipelineStage> read_pipeline_layout(const base::YamlNode& v);
void read_data(const base::YamlNode& n, DataConfig& d);
ScheduleConfig read_schedule(const base::YamlNode& n);
void read_cluster(const base::YamlNode& n, ClusterConfig& c);
// The profile file a `hardware:` scalar names (a shipped name, or a path beside the scenario).
std::string hardware_file(const base::YamlNode& hw);

// A data file named at `at`, relative to the scenario's folder: its non-blank lines with
// their numbers, `#` comments cut (data_file.cpp). `what` names it in the error for a file
// that cannot be read ("samples file").
struct DataFile {
  std::string path;
  struct Line {
    int no;
    std::string text;
  };
  std::vector<Line> lines;
};
DataFile read_data_file(const base::YamlNode& at, const std::string& file, std::string_view what);

}  // namespace tessera::synth::reader
