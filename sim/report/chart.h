// SPDX-License-Identifier: Apache-2.0
// A small, dependency-free SVG line chart: one polyline with markers per series, a legend, axis
// titles and an optional dashed reference line. Output is deterministic (fixed number formats),
// so charts can be diffed and checked in.
#pragma once

#include <limits>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim::report {

// How x values are placed: categories in order of first appearance, or a numeric axis.
enum class XScale : unsigned char { kCategorical, kLinear, kLog2 };

struct ChartPoint {
  std::string x_label;  // the tick text on a categorical axis
  double x = 0.0;       // the position on a numeric axis (unused when categorical)
  double y = std::numeric_limits<double>::quiet_NaN();  // NaN: no value, a gap in the line
  bool flagged = false;  // drawn hollow; LineChart::flag_note says what that means
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
};

struct LineChart {
  std::string title;
  std::string x_title;
  std::string y_title;
  XScale x_scale = XScale::kCategorical;
  std::vector<ChartSeries> series;
  double reference_y = std::numeric_limits<double>::quiet_NaN();  // dashed line; NaN: none
  std::string flag_note;           // legend entry for hollow markers, shown if any are flagged
  std::vector<std::string> notes;  // small print under the chart, one line each
};

// The scale for numeric x values: log2 when all are positive and they span more than 8x,
// linear otherwise.
XScale numeric_x_scale(std::span<const double> xs);

// The chart as a standalone SVG document (starts with "<svg").
std::string line_chart_svg(const LineChart& chart);
// Throws base::InputError when the file cannot be written.
void write_line_chart_svg(const std::string& path, const LineChart& chart);

}  // namespace tessera::sim::report
