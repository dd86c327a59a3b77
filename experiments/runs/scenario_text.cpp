// SPDX-License-Identifier: Apache-2.0
#include "experiments/runs/scenario_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::experiments::runs {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) {
      return parts;
    }
    start = dot + 1;
  }
}

}  // namespace

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

void ScenarioText::set(const std::string& path, const std::string& value,
                       const base::SourceLoc& from) {
  Node* cur = &root_;
  for (const std::string& part : split_path(path)) {
    auto it = std::find_if(cur->children.begin(), cur->children.end(),
                           [&](const Node& n) { return n.key == part; });
    if (it == cur->children.end()) {
      cur->children.push_back(Node{part, "", from, {}});
      it = cur->children.end() - 1;
    }
    cur = &*it;
  }
  cur->value = value;
  cur->from = from;
  cur->children.clear();
}

bool ScenarioText::has(const std::string& path) const {
  const Node* cur = &root_;
  for (const std::string& part : split_path(path)) {
    auto it = std::find_if(cur->children.begin(), cur->children.end(),
                           [&](const Node& n) { return n.key == part; });
    if (it == cur->children.end()) {
      return false;
    }
    cur = &*it;
  }
  return true;
}

void ScenarioText::render(const Node& n, int depth, std::string& out,
                          std::vector<base::SourceLoc>* origins) const {
  for (const Node& child : n.children) {
    out += fmt::format("{:{}}{}:{}\n", "", 2 * depth, child.key,
                       child.children.empty() ? " " + child.value : "");
    if (origins != nullptr) {
      origins->push_back(child.from);
    }
    render(child, depth + 1, out, origins);
  }
}

std::string ScenarioText::render() const {
  std::string out;
  render(root_, 0, out, nullptr);
  return out;
}

std::vector<base::SourceLoc> ScenarioText::line_origins() const {
  std::string out;
  std::vector<base::SourceLoc> origins;
  render(root_, 0, out, &origins);
  return origins;
}

std::variant<synth::Scenario, Rejection> ScenarioText::load(const std::string& name) const {
  try {
    return synth::load_scenario_text(render(), name);
  } catch (const base::InputError& e) {
    const std::vector<base::SourceLoc> origins = line_origins();
    const int line = e.loc().line;
    base::SourceLoc at = e.loc();
    if (e.loc().file == name) {
      at = line >= 1 && line <= static_cast<int>(origins.size())
               ? origins[static_cast<std::size_t>(line - 1)]
           : root_.children.empty() ? base::SourceLoc{}
                                    : root_.children.front().from;
    }
    return Rejection{at, e.message(), e.hint()};
  }
}

}  // namespace tessera::experiments::runs
