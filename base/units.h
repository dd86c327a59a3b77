// SPDX-License-Identifier: Apache-2.0
// Simulated time and physical quantities. Time is an integer count of picoseconds (SST's
// choice): no epsilon comparisons, and every run orders events identically. Quantities in
// input files are strings with units ("900 GB/s", "1.5 us", "80 GiB", "989 TFLOP/s").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::base {

using SimTime = std::int64_t;  // picoseconds
constexpr SimTime kPsPerSecond = 1'000'000'000'000;
constexpr SimTime kTimeNever = INT64_MAX;
// The latest time the simulator represents: 2^62 ps, about 53 days. Durations past it come
// from corrupt input; converting them throws base::SimulationError instead of overflowing.
constexpr SimTime kMaxSimTime = SimTime{1} << 62;

constexpr double kBytesPerGiB = 1073741824.0;  // 2^30

// Round to the nearest picosecond; negative or non-finite inputs are a bug upstream
// (base::InternalError), values past kMaxSimTime a base::SimulationError.
SimTime from_picoseconds(double ps);
inline SimTime from_seconds(double seconds) {
  return from_picoseconds(seconds * 1e12);
}
inline SimTime from_us(double us) {
  return from_seconds(us * 1e-6);
}
inline double to_seconds(SimTime t) {
  return static_cast<double>(t) / 1e12;
}
inline double to_us(SimTime t) {
  return static_cast<double>(t) / 1e6;
}

enum class Dimension { kBytes, kBandwidth, kTime, kFlopRate, kPower };
std::string_view dimension_name(Dimension d);     // "a size", "a bandwidth", ...
std::string_view dimension_example(Dimension d);  // "80 GiB", "900 GB/s", ...

// Parses "<number> <unit>" into SI base units (bytes, bytes/s, seconds, FLOP/s, watts).
// Returns nullopt when the text is not a quantity of that dimension. Decimal prefixes are
// powers of 1000 (GB), binary ones powers of 1024 (GiB); "Gb/s" is gigabits per second.
std::optional<double> parse_quantity(std::string_view text, Dimension d);

std::string format_bytes(double bytes);  // "12.35 GiB"
std::string format_seconds(double s);    // "1.234 s", "56.7 ms", "8.9 us"
std::string format_rate(double flops);   // "312.0 TFLOP/s"

}  // namespace tessera::base
