// SPDX-License-Identifier: Apache-2.0
// A scenario document built key by key from another file (a runs file), every key remembering
// the place it came from, so that the scenario loader's errors point back into that file.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "base/error.h"
#include "synth/scenario/scenario.h"

namespace tessera::experiments::runs {

// Why a scenario could not be loaded: the loader's message, at the place in the source file
// whose key made the offending scenario key.
struct Rejection {
  base::SourceLoc at;
  std::string message;
  std::string hint;
};

class ScenarioText {
 public:
  // Sets the dotted scenario key `path` ("training.seq_len") to the YAML scalar `value` as it
  // is to be written (quote strings with quoted()); `from` is where it came from. Sections
  // are written in the order their first key was set; setting a key again replaces it.
  void set(const std::string& path, const std::string& value, const base::SourceLoc& from);
  [[nodiscard]] bool has(const std::string& path) const;
  // The document, and where each of its lines came from (index 0 = line 1).
  [[nodiscard]] std::string render() const;
  [[nodiscard]] std::vector<base::SourceLoc> line_origins() const;
  // The scenario the document describes, loaded as a file named `name` (relative paths in it
  // are looked up beside `name`); the loader's errors come back as a Rejection at the origin
  // of the line they name.
  [[nodiscard]] std::variant<synth::Scenario, Rejection> load(const std::string& name) const;

 private:
  struct Node {
    std::string key;
    std::string value;  // empty for a section
    base::SourceLoc from;
    std::vector<Node> children;
  };
  void render(const Node& n, int depth, std::string& out,
              std::vector<base::SourceLoc>* origins) const;
  Node root_;
};

// `text` as a double-quoted YAML scalar.
std::string quoted(const std::string& text);

}  // namespace tessera::experiments::runs
