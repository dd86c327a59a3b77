// SPDX-License-Identifier: Apache-2.0
// golden_diff EXPECTED ACTUAL: compares a result file against its golden copy. JSON files
// are compared as trees (same keys, same strings, numbers within the tolerance); CSV files
// cell by cell (numeric cells within the tolerance, the rest exactly). The tolerance is
// relative, 1e-9 of the larger magnitude (plus 1e-15 absolute for values near zero): far
// below any modelling change, above the last-bit noise a different compiler might add.
// Prints every difference (at most 20) and exits 1 when there is one.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr double kRelTol = 1e-9;
constexpr double kAbsTol = 1e-15;
constexpr int kMaxReported = 20;

struct Diff {
  std::vector<std::string> lines;
  void add(const std::string& where, const std::string& want, const std::string& got) {
    if (lines.size() < kMaxReported) {
      lines.push_back(fmt::format("  {}: golden {}, now {}", where, want, got));
    } else if (lines.size() == kMaxReported) {
      lines.emplace_back("  ... (more differences)");
    }
  }
};

bool close(double a, double b) {
  return std::abs(a - b) <= kRelTol * std::max(std::abs(a), std::abs(b)) + kAbsTol;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "golden_diff: cannot read " << path << "\n";
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void compare_json(const nlohmann::json& want, const nlohmann::json& got, const std::string& at,
                  Diff& d) {
  if (want.is_number() && got.is_number()) {
    if (!close(want.get<double>(), got.get<double>())) {
      d.add(at, want.dump(), got.dump());
    }
    return;
  }
  if (want.type() != got.type()) {
    d.add(at, want.dump(), got.dump());
    return;
  }
  if (want.is_object()) {
    for (const auto& [k, v] : want.items()) {
      if (!got.contains(k)) {
        d.add(at + "." + k, v.dump(), "(missing)");
      } else {
        compare_json(v, got.at(k), at + "." + k, d);
      }
    }
    for (const auto& [k, v] : got.items()) {
      if (!want.contains(k)) {
        d.add(at + "." + k, "(missing)", v.dump());
      }
    }
  } else if (want.is_array()) {
    if (want.size() != got.size()) {
      d.add(at + " length", std::to_string(want.size()), std::to_string(got.size()));
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      compare_json(want[i], got[i], fmt::format("{}[{}]", at, i), d);
    }
  } else if (want != got) {
    d.add(at, want.dump(), got.dump());
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(s);
  while (std::getline(in, cell, sep)) {
    out.push_back(cell);
  }
  if (!s.empty() && s.back() == sep) {
    out.emplace_back();
  }
  return out;
}

bool parse_number(const std::string& s, double& v) {
  if (s.empty()) {
    return false;
  }
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

void compare_cells(const std::string& want, const std::string& got, const std::string& at,
                   Diff& d) {
  double a = 0.0;
  double b = 0.0;
  if (parse_number(want, a) && parse_number(got, b)) {
    if (!close(a, b)) {
      d.add(at, want, got);
    }
  } else if (want != got) {
    d.add(at, want, got);
  }
}

void compare_csv(const std::string& want, const std::string& got, Diff& d) {
  std::vector<std::string> w = split(want, '\n');
  std::vector<std::string> g = split(got, '\n');
  if (w.size() != g.size()) {
    d.add("line count", std::to_string(w.size()), std::to_string(g.size()));
    return;
  }
  std::vector<std::string> header = split(w.empty() ? "" : w[0], ',');
  for (std::size_t line = 0; line < w.size(); ++line) {
    std::vector<std::string> wc = split(w[line], ',');
    std::vector<std::string> gc = split(g[line], ',');
    if (wc.size() != gc.size()) {
      d.add(fmt::format("line {} cell count", line + 1), std::to_string(wc.size()),
            std::to_string(gc.size()));
      continue;
    }
    for (std::size_t c = 0; c < wc.size(); ++c) {
      std::string column = c < header.size() ? header[c] : std::to_string(c + 1);
      compare_cells(wc[c], gc[c], fmt::format("line {} {}", line + 1, column), d);
    }
  }
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: golden_diff EXPECTED ACTUAL\n";
    return 2;
  }
  const std::string want_path = argv[1];
  const std::string got_path = argv[2];
  const std::string want = read_file(want_path);
  const std::string got = read_file(got_path);
  Diff d;
  if (ends_with(want_path, ".json")) {
    nlohmann::json wj = nlohmann::json::parse(want, nullptr, false);
    nlohmann::json gj = nlohmann::json::parse(got, nullptr, false);
    if (wj.is_discarded() || gj.is_discarded()) {
      std::cerr << "golden_diff: " << (wj.is_discarded() ? want_path : got_path)
                << " is not JSON\n";
      return 2;
    }
    compare_json(wj, gj, "$", d);
  } else {
    compare_csv(want, got, d);
  }
  if (d.lines.empty()) {
    return 0;
  }
  std::cout << got_path << " differs from its golden copy " << want_path << ":\n";
  for (const std::string& l : d.lines) {
    std::cout << l << "\n";
  }
  std::cout << "If the change is intended, regenerate with scripts/regen-golden.sh and say why "
               "in the commit.\n";
  return 1;
}
