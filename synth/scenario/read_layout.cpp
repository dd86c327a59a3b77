// SPDX-License-Identifier: Apache-2.0
// `parallelism.pipeline_layout`: Megatron-Core's --pipeline-model-parallel-layout string
// (docs/pipeline_schedules.md, "Pipeline layouts"): the virtual stages of a pipe, split by
// '|', each a sequence of E (embedding), t (decoder layer), m (multi-token prediction) and L
// (loss: final norm, output layer, loss); `X*n` and `(...)*n` repeat; commas and spaces are
// for reading only. "Et*3|(tt|)*29,m|L" is DeepSeek-V3's on 32 virtual stages.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "synth/scenario/readers.h"

namespace tessera::synth::reader {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

constexpr std::size_t kMaxExpanded = std::size_t{1} << 20;
constexpr int kMaxDepth = 16;

class LayoutParser {
 public:
  LayoutParser(const base::YamlNode& at, std::string text) : at_(at), text_(std::move(text)) {}

  std::string expand() {
    std::string out = sequence(false);
    if (pos_ < text_.size()) {
      fail("a ')' without its '('");
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const std::string where =
        pos_ < text_.size() ? fmt::format("at character {}", pos_ + 1) : "at the end";
    at_.fail(fmt::format("pipeline_layout '{}': {} {}", text_, what, where),
             "stages split by '|' of E (embedding), t (decoder layer), m (multi-token "
             "prediction), L (loss), with X*n or (...)*n to repeat, e.g. \"Et*3|(tt|)*29,m|L\"");
  }

  // Items up to the end, or up to the ')' closing a group when `group`.
  std::string sequence(bool group) {
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ')') {
        if (!group) {
          fail("a ')' without its '('");
        }
        return out;
      }
      std::string item;
      if (c == '(') {
        if (++depth_ > kMaxDepth) {
          fail("groups nested more than 16 deep");
        }
        ++pos_;
        item = sequence(true);
        --depth_;
        if (pos_ >= text_.size()) {
          fail("a '(' without its ')'");
        }
        if (item.empty()) {
          fail("an empty group '()'");
        }
        ++pos_;
      } else if (c == ',' || is_space(c)) {
        ++pos_;
        continue;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else {
        fail(fmt::format("unexpected '{}'", c));
      }
      out += repeated(item);
      if (out.size() > kMaxExpanded) {
        fail("more than a million symbols once expanded");
      }
    }
    if (group) {
      fail("a '(' without its ')'");
    }
    return out;
  }

  // `item`, repeated by a following "*n".
  std::string repeated(const std::string& item) {
    std::size_t at = pos_;
    while (at < text_.size() && is_space(text_[at])) {
      ++at;
    }
    if (at >= text_.size() || text_[at] != '*') {
      return item;
    }
    pos_ = at + 1;
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      ++pos_;
    }
    std::size_t n = 0;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      n = std::min<std::size_t>(n * 10 + static_cast<std::size_t>(text_[pos_] - '0'),
                                kMaxExpanded + 1);
      ++pos_;
    }
    if (pos_ == start || n == 0) {
      fail("expected a repeat count >= 1 after '*'");
    }
    if (item.size() * n > kMaxExpanded) {
      fail("more than a million symbols once expanded");
    }
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      out += item;
    }
    return out;
  }

  const base::YamlNode& at_;
  std::string text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::vector<PipelineStage> read_pipeline_layout(const base::YamlNode& v) {
  const std::string expanded = LayoutParser(v, v.as_string()).expand();
  std::vector<PipelineStage> stages(1);
  int last = 0;  // the order within a stage: E, t, m, L
  for (char c : expanded) {
    if (c == '|') {
      stages.emplace_back();
      last = 0;
      continue;
    }
    PipelineStage& st = stages.back();
    const int rank = c == 'E' ? 0 : c == 't' ? 1 : c == 'm' ? 2 : 3;
    if (rank < last) {
      v.fail(
          fmt::format("pipeline_layout '{}': stage {} has '{}' after a later part; a stage "
                      "runs E, t, m and L in that order",
                      v.as_string(), stages.size() - 1, c));
    }
    last = rank;
    (rank == 0 ? st.embeddings : rank == 1 ? st.layers : rank == 2 ? st.mtp : st.losses) += 1;
  }
  return stages;
}

}  // namespace tessera::synth::reader
