// SPDX-License-Identifier: Apache-2.0
#include "base/units.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "base/error.h"

namespace tessera::base {

SimTime from_picoseconds(double ps) {
  if (!std::isfinite(ps) || ps < 0.0) {
    throw InternalError(fmt::format("invalid duration {} s", ps * 1e-12));
  }
  if (ps >= static_cast<double>(kMaxSimTime)) {  // llround beyond int64 would be garbage
    throw SimulationError(
        fmt::format("a duration of {:.3g} s is beyond what the simulator can "
                    "represent (53 days); the input asks for it",
                    ps * 1e-12));
  }
  return static_cast<SimTime>(std::llround(ps));
}

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::kBytes:
      return "a size";
    case Dimension::kBandwidth:
      return "a bandwidth";
    case Dimension::kTime:
      return "a time";
    case Dimension::kFlopRate:
      return "a compute rate";
    case Dimension::kPower:
      return "a power";
  }
  return "?";
}

std::string_view dimension_example(Dimension d) {
  switch (d) {
    case Dimension::kBytes:
      return "\"80 GiB\"";
    case Dimension::kBandwidth:
      return "\"900 GB/s\" or \"400 Gb/s\"";
    case Dimension::kTime:
      return "\"1.5 us\"";
    case Dimension::kFlopRate:
      return "\"989 TFLOP/s\"";
    case Dimension::kPower:
      return "\"700 W\"";
  }
  return "?";
}

namespace {

using UnitTable = std::pair<std::string_view, double>;

constexpr std::array kByteUnits = {
    UnitTable{"B", 1.0},         UnitTable{"KB", 1e3},           UnitTable{"MB", 1e6},
    UnitTable{"GB", 1e9},        UnitTable{"TB", 1e12},          UnitTable{"KiB", 1024.0},
    UnitTable{"MiB", 1048576.0}, UnitTable{"GiB", 1073741824.0}, UnitTable{"TiB", 1099511627776.0}};
constexpr std::array kBandwidthUnits = {
    UnitTable{"B/s", 1.0},     UnitTable{"KB/s", 1e3},    UnitTable{"MB/s", 1e6},
    UnitTable{"GB/s", 1e9},    UnitTable{"TB/s", 1e12},   UnitTable{"GiB/s", 1073741824.0},
    UnitTable{"b/s", 0.125},   UnitTable{"Kb/s", 125.0},  UnitTable{"Mb/s", 1.25e5},
    UnitTable{"Gb/s", 1.25e8}, UnitTable{"Tb/s", 1.25e11}};
constexpr std::array kTimeUnits = {UnitTable{"s", 1.0}, UnitTable{"ms", 1e-3},
                                   UnitTable{"us", 1e-6}, UnitTable{"ns", 1e-9},
                                   UnitTable{"ps", 1e-12}};
constexpr std::array kRateUnits = {UnitTable{"FLOP/s", 1.0}, UnitTable{"GFLOP/s", 1e9},
                                   UnitTable{"TFLOP/s", 1e12}, UnitTable{"PFLOP/s", 1e15}};
constexpr std::array kPowerUnits = {UnitTable{"W", 1.0}, UnitTable{"kW", 1e3}};

template <std::size_t N>
std::optional<double> scale_of(const std::array<UnitTable, N>& table, std::string_view unit) {
  for (const auto& [name, scale] : table) {
    if (name == unit) {
      return scale;
    }
  }
  return std::nullopt;
}

std::optional<double> unit_scale(Dimension d, std::string_view unit) {
  switch (d) {
    case Dimension::kBytes:
      return scale_of(kByteUnits, unit);
    case Dimension::kBandwidth:
      return scale_of(kBandwidthUnits, unit);
    case Dimension::kTime:
      return scale_of(kTimeUnits, unit);
    case Dimension::kFlopRate:
      return scale_of(kRateUnits, unit);
    case Dimension::kPower:
      return scale_of(kPowerUnits, unit);
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<double> parse_quantity(std::string_view text, Dimension d) {
  text = trim(text);
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin || !std::isfinite(value)) {
    return std::nullopt;
  }
  std::string_view unit = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  auto scale = unit_scale(d, unit);
  if (!scale) {
    return std::nullopt;
  }
  return value * *scale;
}

std::string format_bytes(double bytes) {
  constexpr double kMiB = 1048576.0;
  if (std::abs(bytes) >= kBytesPerGiB) {
    return fmt::format("{:.2f} GiB", bytes / kBytesPerGiB);
  }
  if (std::abs(bytes) >= kMiB) {
    return fmt::format("{:.2f} MiB", bytes / kMiB);
  }
  return fmt::format("{:.0f} B", bytes);
}

std::string format_seconds(double s) {
  if (s >= 1.0) {
    return fmt::format("{:.3f} s", s);
  }
  if (s >= 1e-3) {
    return fmt::format("{:.2f} ms", s * 1e3);
  }
  return fmt::format("{:.2f} us", s * 1e6);
}

std::string format_rate(double flops) {
  return fmt::format("{:.1f} TFLOP/s", flops / 1e12);
}

}  // namespace tessera::base
