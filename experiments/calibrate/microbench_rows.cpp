// SPDX-License-Identifier: Apache-2.0
// A row source of a fits file (calibration/microbench/fits.yaml) turned into measurements:
// which rows of its table (`where`), their shape (numbers, columns, or {column, is} flags) and
// the measured column.
#include <fmt/format.h>

#include <array>
#include <charconv>

#include "experiments/calibrate/microbench.h"
#include "experiments/calibrate/microbench_tables.h"

namespace tessera::experiments::calibrate {

namespace {

using base::YamlNode;

bool parse_number(std::string_view text, double& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// A cell of the row that must hold a value.
YamlNode cell_at(const MicrobenchEntry& e, std::size_t row, const YamlNode& column) {
  std::optional<YamlNode> c = e.cell(row, e.column(column.as_string(), column));
  if (!c) {
    column.fail(
        fmt::format("'{}' row {} has no value in column '{}'", e.id, row, column.as_string()));
  }
  return *c;
}

// A number, or the value of the column it names.
double number_of(const YamlNode& spec, const MicrobenchEntry& e, std::size_t row) {
  double v = 0.0;
  if (spec.is_scalar() && parse_number(spec.as_string(), v)) {
    return v;
  }
  return cell_at(e, row, spec).as_double();
}

// true / false, a column of flags, or {column: C, is: V}: whether the cell reads V.
bool flag_of(const YamlNode& spec, const MicrobenchEntry& e, std::size_t row) {
  if (spec.is_map()) {
    spec.check_keys(std::array<std::string_view, 2>{"column", "is"});
    return cell_at(e, row, spec.at("column")).as_string() == spec.at("is").as_string();
  }
  const std::string text = spec.as_string();
  if (text == "true" || text == "false") {
    return text == "true";
  }
  return cell_at(e, row, spec).as_bool();
}

// "<op> number" in a `where`: >=, >, <= or <.
struct Comparison {
  std::string op;
  double bound = 0.0;
  [[nodiscard]] bool passes(double v) const {
    return op == ">=" ? v >= bound : op == ">" ? v > bound : op == "<=" ? v <= bound : v < bound;
  }
};

std::optional<Comparison> comparison(const std::string& text) {
  const std::size_t n = text.find_first_not_of("<>=");
  Comparison c{text.substr(0, std::min(n, text.size())), 0.0};
  if (c.op != ">=" && c.op != ">" && c.op != "<=" && c.op != "<") {
    return std::nullopt;
  }
  const std::size_t digits = text.find_first_not_of(' ', n);
  if (digits == std::string::npos || !parse_number(text.substr(digits), c.bound)) {
    return std::nullopt;
  }
  return c;
}

// `where`: every column's cell equals the value given, or passes its comparison.
bool selected(const YamlNode& source, const MicrobenchEntry& e, std::size_t row) {
  const std::optional<YamlNode> where = source.find("where");
  if (!where) {
    return true;
  }
  where->expect_map();
  for (const std::string& col : where->keys()) {
    const YamlNode want = where->at(col);
    const std::optional<YamlNode> c = e.cell(row, e.column(col, want));
    const std::string text = want.as_string();
    const std::optional<Comparison> cmp = comparison(text);
    if (!c || (cmp ? !cmp->passes(c->as_double()) : c->as_string() != text)) {
      return false;
    }
  }
  return true;
}

std::string gemm_label(const hw::GemmShape& s) {
  return fmt::format("{}x{}x{}x{}", s.batch, s.m, s.n, s.k);
}

void gemm_row(const YamlNode& src, const MicrobenchEntry& e, std::size_t row, Measurement& m) {
  static constexpr std::array<std::string_view, 2> kDtypes = {"bf16", "fp8"};
  m.dtype = src.at("dtype").as_choice(kDtypes) == "fp8" ? base::DType::kFP8 : base::DType::kBF16;
  const std::optional<YamlNode> shape = src.find("shape");
  if (shape) {
    shape->check_keys(std::array<std::string_view, 4>{"m", "n", "k", "batch"});
  }
  auto dim = [&](std::string_view key, const char* scalar_column) -> std::int64_t {
    if (shape) {
      if (std::optional<YamlNode> v = shape->find(key)) {
        return static_cast<std::int64_t>(number_of(*v, e, row));
      }
      if (key == "batch") {
        return 1;
      }
      shape->fail(fmt::format("a GEMM shape needs '{}'", key));
    }
    if (key == "batch") {
      return 1;
    }
    if (!e.scalar) {
      src.fail("a GEMM row source of a table needs shape: {m, n, k}");
    }
    const std::size_t c = e.column(scalar_column, src);
    return static_cast<std::int64_t>(e.rows[row][c].as_double());
  };
  m.gemm = {dim("m", "M"), dim("n", "N"), dim("k", "K"), dim("batch", "")};
  if (m.gemm.m < 1 || m.gemm.n < 1 || m.gemm.k < 1 || m.gemm.batch < 1) {
    src.fail(fmt::format("'{}' row {}: a GEMM of shape {}", e.id, row, gemm_label(m.gemm)));
  }
  m.label = gemm_label(m.gemm);
}

void memory_row(const YamlNode& src, const MicrobenchEntry& e, std::size_t row, Measurement& m) {
  m.bytes = 1.0;
  for (const YamlNode& f : src.at("bytes").items()) {
    m.bytes *= number_of(f, e, row);
  }
  if (m.bytes <= 0.0) {
    src.at("bytes").fail(fmt::format("'{}' row {}: {} bytes", e.id, row, m.bytes));
  }
  m.label = fmt::format("{:.4g} MB", m.bytes / 1e6);
}

void attention_row(const YamlNode& src, const MicrobenchEntry& e, std::size_t row, Measurement& m) {
  const YamlNode pass = src.at("pass");
  std::string p = pass.as_string();
  if (p != "fwd" && p != "bwd" && p != "both") {
    p = cell_at(e, row, pass).as_string();
  }
  static constexpr std::array<std::string_view, 3> kPasses = {"fwd", "bwd", "both"};
  if (std::find(kPasses.begin(), kPasses.end(), p) == kPasses.end()) {
    pass.fail(fmt::format("'{}' row {}: pass '{}'", e.id, row, p), "expected fwd, bwd or both");
  }
  m.passes = p == "fwd"   ? AttentionPasses::kForward
             : p == "bwd" ? AttentionPasses::kBackward
                          : AttentionPasses::kBoth;
  m.attention = {static_cast<std::int64_t>(number_of(src.at("seq"), e, row)),
                 static_cast<std::int64_t>(number_of(src.at("head_dim"), e, row)),
                 flag_of(src.at("causal"), e, row)};
  if (m.attention.seq < 1 || m.attention.head_dim < 1) {
    src.fail(fmt::format("'{}' row {}: sequence {} and head dim {}", e.id, row, m.attention.seq,
                         m.attention.head_dim));
  }
  m.label = fmt::format("{} {} hd{} s={}", p, m.attention.causal ? "causal" : "full",
                        m.attention.head_dim, m.attention.seq);
}

}  // namespace

// The measurements of one row source of a fits file.
std::vector<Measurement> read_rows(const YamlNode& src, const MicrobenchTables& tables) {
  static constexpr std::array<std::string_view, 14> kKeys = {
      "table",    "model",  "measured", "dtype", "shape",  "bytes",  "seq",
      "head_dim", "causal", "pass",     "where", "weight", "fitted", "note"};
  src.check_keys(kKeys);
  static constexpr std::array<std::string_view, 3> kModels = {"gemm", "memory", "attention"};
  const std::string model = src.at("model").as_choice(kModels);
  const MicrobenchEntry& e = tables.at(src.at("table"));
  const YamlNode measured = src.find("measured").value_or(src.at("table"));
  const std::size_t col = e.column(src.has("measured") ? measured.as_string() : "value", measured);
  const double weight = src.has("weight") ? src.at("weight").as_double() : 1.0;
  if (weight <= 0.0) {
    src.at("weight").fail("expected a weight above 0");
  }
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < e.rows.size(); ++i) {
    const std::optional<YamlNode> value = e.cell(i, col);
    if (!value || !selected(src, e, i)) {
      continue;
    }
    Measurement m;
    m.table = e.id;
    m.where = value->loc();
    m.measured = value->as_double();
    m.weight = weight;
    m.held_out = !e.scalar && i % 4 == 3;
    m.fitted = !src.has("fitted") || src.at("fitted").as_bool();
    if (model == "gemm") {
      m.model = KernelModel::kGemm;
      gemm_row(src, e, i, m);
    } else if (model == "memory") {
      m.model = KernelModel::kMemory;
      memory_row(src, e, i, m);
    } else {
      m.model = KernelModel::kAttention;
      attention_row(src, e, i, m);
    }
    if (m.measured <= 0.0) {
      value->fail(fmt::format("'{}' row {}: a measured rate of {}", e.id, i, m.measured));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tessera::experiments::calibrate
