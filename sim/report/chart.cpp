// SPDX-License-Identifier: Apache-2.0
#include "sim/report/chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <numbers>
#include <string_view>
#include <utility>

#include "base/error.h"

namespace tessera::sim::report {

namespace {

constexpr double kFont = 12.0;  // px, ticks, legend and notes
constexpr double kMargin = 16.0;
constexpr double kPlotH = 280.0;
constexpr double kMinPlotW = 440.0;
constexpr double kMinW = 760.0;
constexpr double kRotate = 40.0;  // degrees, for categorical labels that do not fit flat

// Tableau 10: distinct and readable on white.
constexpr std::array<std::string_view, 10> kColors = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                                      "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                                      "#9c755f", "#bab0ac"};

// A generous estimate of the rendered width: 0.6 em per character.
double text_w(std::string_view s, double font = kFont) {
  return static_cast<double>(s.size()) * 0.6 * font;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Long category names keep their (usually most specific) end: "...ofiles/h100-sxm.yaml".
std::string shorten(const std::string& s) {
  constexpr std::size_t kMax = 28;
  return s.size() <= kMax ? s : "..." + s.substr(s.size() - (kMax - 3));
}

// 1, 2 or 5 times a power of ten, near `raw`.
double nice_step(double raw) {
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double f = norm <= 1.0 ? 1.0 : norm <= 2.0 ? 2.0 : norm <= 5.0 ? 5.0 : 10.0;
  return f * mag;
}

int decimals_for(double step) {
  return std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
}

std::string format_tick(double v, int decimals) {
  if (std::fabs(v) < 1e-12) {
    v = 0.0;  // no "-0.00"
  }
  return fmt::format("{:.{}f}", v, decimals);
}

struct Tick {
  double pos = 0.0;  // in axis units (log2 of the value on a log axis)
  std::string label;
};

// Ticks at multiples of `step` inside [lo, hi].
std::vector<Tick> linear_ticks(double lo, double hi, double step) {
  std::vector<Tick> ticks;
  int decimals = decimals_for(step);
  for (auto k = static_cast<std::int64_t>(std::ceil(lo / step - 1e-9));
       static_cast<double>(k) * step <= hi + 1e-9 * step; ++k) {
    double v = static_cast<double>(k) * step;
    ticks.push_back({v, format_tick(v, decimals)});
  }
  return ticks;
}

// Ticks at every `every`-th power of two inside [lo, hi] (log2 units).
std::vector<Tick> log2_ticks(double lo, double hi, int every) {
  std::vector<Tick> ticks;
  for (auto k = static_cast<int>(std::ceil(lo - 1e-9));
       k <= static_cast<int>(std::floor(hi + 1e-9)); ++k) {
    if (k % every != 0) {
      continue;
    }
    std::string label = k >= 0 && k < 63 ? fmt::format("{}", std::int64_t{1} << k)
                                         : fmt::format("{:g}", std::ldexp(1.0, k));
    ticks.push_back({static_cast<double>(k), label});
  }
  return ticks;
}

double max_label_w(const std::vector<Tick>& ticks) {
  double w = 0.0;
  for (const Tick& t : ticks) {
    w = std::max(w, text_w(t.label));
  }
  return w;
}

// Whether labels centred on the ticks keep clear of each other across `px_per_unit`.
bool labels_fit(const std::vector<Tick>& ticks, double px_per_unit) {
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    double gap = (ticks[i].pos - ticks[i - 1].pos) * px_per_unit;
    if (gap < (text_w(ticks[i].label) + text_w(ticks[i - 1].label)) / 2.0 + 10.0) {
      return false;
    }
  }
  return true;
}

template <typename... T>
void emit(std::string& out, fmt::format_string<T...> format, T&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<T>(args)...);
}

// Earlier series get wider lines, so one drawn over by a later series with equal values still
// shows along its edges.
double line_w(std::size_t series) {
  return std::max(2.0, 4.5 - 1.5 * static_cast<double>(series));
}

// Series `shape` cycles circle, square, diamond, triangle. Earlier series get larger markers, so
// a series hidden under a later one with the same values still shows around its edges.
void marker(std::string& out, std::size_t shape, double x, double y, std::string_view color,
            bool hollow) {
  double r = std::max(hollow ? 6.0 : 4.5, 7.5 - 1.5 * static_cast<double>(shape));  // px
  std::string paint =
      hollow ? fmt::format("fill=\"#ffffff\" stroke=\"{}\" stroke-width=\"1.8\"", color)
             : fmt::format("fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.8\"", color);
  switch (shape % 4) {
    case 0:
      emit(out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" {}/>\n", x, y, r * 0.85, paint);
      break;
    case 1: {
      double h = r * 0.75;  // half side
      emit(out, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" {}/>\n", x - h,
           y - h, 2.0 * h, 2.0 * h, paint);
      break;
    }
    case 2:
      emit(out, "<path d=\"M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z\" {}/>\n", x,
           y - r, x + r, y, x, y + r, x - r, y, paint);
      break;
    default:
      emit(out, "<path d=\"M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z\" {}/>\n", x, y - r,
           x + 0.87 * r, y + 0.5 * r, x - 0.87 * r, y + 0.5 * r, paint);
  }
}

}  // namespace

XScale numeric_x_scale(std::span<const double> xs) {
  if (xs.empty()) {
    return XScale::kLinear;
  }
  auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  return *lo > 0.0 && *hi / *lo > 8.0 ? XScale::kLog2 : XScale::kLinear;
}

std::string line_chart_svg(const LineChart& chart) {
  // Categories (in order of first appearance) and data ranges.
  std::vector<std::string> categories;
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = -std::numeric_limits<double>::infinity();
  bool any_flagged = false;
  bool log2 = chart.x_scale == XScale::kLog2;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      if (std::find(categories.begin(), categories.end(), p.x_label) == categories.end()) {
        categories.push_back(p.x_label);
      }
      double x = log2 ? std::log2(p.x) : p.x;
      if (std::isfinite(x)) {
        x_lo = std::min(x_lo, x);
        x_hi = std::max(x_hi, x);
      }
      if (std::isfinite(p.y)) {
        y_lo = std::min(y_lo, p.y);
        y_hi = std::max(y_hi, p.y);
        any_flagged = any_flagged || p.flagged;
      }
    }
  }
  if (std::isfinite(chart.reference_y)) {
    y_lo = std::min(y_lo, chart.reference_y);
    y_hi = std::max(y_hi, chart.reference_y);
  }
  if (!std::isfinite(y_lo)) {
    y_lo = 0.0;
    y_hi = 1.0;
  }

  // Y ticks: 1-2-5 steps, about six of them, with a little headroom around the data.
  double y_span = y_hi - y_lo;
  if (y_span < 1e-9 * std::max(1.0, std::fabs(y_hi))) {
    y_span = std::max(0.1 * std::fabs(y_hi), 0.1);
    y_lo -= y_span / 2.0;
    y_hi += y_span / 2.0;
  }
  double y_step = nice_step(y_span / 5.0);
  double y_min = std::floor((y_lo - 0.04 * y_span) / y_step) * y_step;
  double y_max = std::ceil((y_hi + 0.04 * y_span) / y_step) * y_step;
  std::vector<Tick> y_ticks = linear_ticks(y_min, y_max, y_step);

  // Horizontal layout: y title | y tick labels | plot | legend.
  double legend_text_w = any_flagged ? text_w(chart.flag_note) : 0.0;
  for (const ChartSeries& s : chart.series) {
    legend_text_w = std::max(legend_text_w, text_w(s.name));
  }
  double legend_w = legend_text_w + 52.0;
  double plot_l = kMargin + 22.0 + max_label_w(y_ticks) + 8.0;
  double width = std::max({kMinW, plot_l + kMinPlotW + 24.0 + legend_w + kMargin,
                           plot_l + text_w(chart.title, 15.0) + kMargin});
  for (const std::string& note : chart.notes) {
    width = std::max(width, 2.0 * kMargin + text_w(note, 11.0));
  }
  double legend_x = width - kMargin - legend_w;
  double plot_r = legend_x - 24.0;
  double plot_w = plot_r - plot_l;

  // X ticks, thinned (numeric) or rotated (categorical) until their labels keep clear.
  std::vector<Tick> x_ticks;
  double x_min = 0.0;
  double x_max = 1.0;
  bool rotate = false;
  if (chart.x_scale == XScale::kCategorical) {
    x_min = -0.5;
    x_max = static_cast<double>(categories.size()) - 0.5;
    for (std::size_t i = 0; i < categories.size(); ++i) {
      x_ticks.push_back({static_cast<double>(i), shorten(categories[i])});
    }
    double spacing = plot_w / std::max(x_max - x_min, 1.0);
    rotate = !labels_fit(x_ticks, spacing);
    if (rotate && spacing < 20.0) {  // slanted labels need about 20 px each: label every k-th
      auto k = static_cast<std::size_t>(std::ceil(20.0 / spacing));
      std::vector<Tick> kept;
      for (std::size_t i = 0; i < x_ticks.size(); i += k) {
        kept.push_back(x_ticks[i]);
      }
      x_ticks = std::move(kept);
    }
    if (rotate && !x_ticks.empty()) {
      // Keep the first slanted label inside the picture: widen it on the left if need be.
      double reach = text_w(x_ticks[0].label) * std::cos(kRotate * std::numbers::pi / 180.0);
      double shift = kMargin + reach - (plot_l + 0.5 * plot_w / (x_max - x_min));
      if (shift > 0.0) {
        width += shift;
        plot_l += shift;
        plot_r += shift;
        legend_x += shift;
      }
    }
  } else {
    if (!std::isfinite(x_lo)) {
      x_lo = 0.0;
      x_hi = 1.0;
    }
    double span = x_hi - x_lo;
    if (span <= 0.0) {
      span = log2 ? 2.0 : std::max(std::fabs(x_hi), 1.0);
      x_lo -= span / 2.0;
      x_hi += span / 2.0;
    }
    x_min = x_lo - 0.06 * span;
    x_max = x_hi + 0.06 * span;
    double px = plot_w / (x_max - x_min);
    if (log2) {
      for (int every = 1; every < 64; every *= 2) {
        x_ticks = log2_ticks(x_min, x_max, every);
        if (labels_fit(x_ticks, px)) {
          break;
        }
      }
    } else {
      bool integral = true;  // whole-number data gets whole-number ticks
      for (const ChartSeries& s : chart.series) {
        for (const ChartPoint& p : s.points) {
          integral = integral && p.x == std::round(p.x);
        }
      }
      double first = nice_step(span / 8.0);
      for (double step = integral ? std::max(first, 1.0) : first;; step = nice_step(step * 1.5)) {
        x_ticks = linear_ticks(x_min, x_max, step);
        if (labels_fit(x_ticks, px)) {
          break;
        }
      }
    }
  }

  // Vertical layout: title | plot | x tick labels | x title | notes.
  double tick_h =
      rotate ? max_label_w(x_ticks) * std::sin(kRotate * std::numbers::pi / 180.0) + 18.0 : 20.0;
  double plot_t = chart.title.empty() ? kMargin + 8.0 : kMargin + 36.0;
  double plot_b = plot_t + kPlotH;
  double x_title_y = plot_b + tick_h + 18.0;
  double height = x_title_y + 8.0 + 16.0 * static_cast<double>(chart.notes.size()) + kMargin;

  auto px_x = [&](double v) { return plot_l + (v - x_min) / (x_max - x_min) * plot_w; };
  auto px_y = [&](double v) { return plot_b - (v - y_min) / (y_max - y_min) * kPlotH; };
  auto point_x = [&](const ChartPoint& p) {
    if (chart.x_scale == XScale::kCategorical) {
      auto it = std::find(categories.begin(), categories.end(), p.x_label);
      return px_x(static_cast<double>(it - categories.begin()));
    }
    return px_x(log2 ? std::log2(p.x) : p.x);
  };

  std::string out;
  emit(out,
       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
       "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
       "font-size=\"{2:.0f}\">\n",
       width, height, kFont);
  emit(out, "<rect width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", width, height);
  if (!chart.title.empty()) {
    emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
         plot_l, kMargin + 16.0, xml_escape(chart.title));
  }

  // Grid, frame and ticks.
  out += "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n";
  for (const Tick& t : y_ticks) {
    emit(out, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", plot_l,
         px_y(t.pos), plot_r, px_y(t.pos));
  }
  for (const Tick& t : x_ticks) {
    emit(out, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n", px_x(t.pos),
         plot_t, px_x(t.pos), plot_b);
  }
  out += "</g>\n";
  emit(out,
       "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
       "stroke=\"#555555\" stroke-width=\"1\"/>\n",
       plot_l, plot_t, plot_w, kPlotH);
  out += "<g fill=\"#333333\">\n";
  for (const Tick& t : y_ticks) {
    emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", plot_l - 6.0,
         px_y(t.pos) + 4.0, xml_escape(t.label));
  }
  for (const Tick& t : x_ticks) {
    if (rotate) {
      emit(out,
           "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"end\" "
           "transform=\"rotate(-{2:.0f} {0:.1f} {1:.1f})\">{3}</text>\n",
           px_x(t.pos) + 3.0, plot_b + 14.0, kRotate, xml_escape(t.label));
    } else {
      emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px_x(t.pos),
           plot_b + 16.0, xml_escape(t.label));
    }
  }
  out += "</g>\n";

  // Axis titles.
  emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
       plot_l + plot_w / 2.0, x_title_y, xml_escape(chart.x_title));
  emit(out,
       "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" font-size=\"13\" "
       "transform=\"rotate(-90 {0:.1f} {1:.1f})\">{2}</text>\n",
       plot_l - max_label_w(y_ticks) - 20.0, plot_t + kPlotH / 2.0, xml_escape(chart.y_title));

  // Reference line.
  if (std::isfinite(chart.reference_y)) {
    emit(out,
         "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#777777\" "
         "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n",
         plot_l, px_y(chart.reference_y), plot_r, px_y(chart.reference_y));
  }

  // Series: lines broken at missing values, in x order, then markers on top.
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    std::string_view color = kColors[i % kColors.size()];
    std::vector<std::pair<double, const ChartPoint*>> pts;
    for (const ChartPoint& p : chart.series[i].points) {
      pts.emplace_back(point_x(p), &p);
    }
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> segments(1);
    for (const auto& [x, p] : pts) {
      if (!std::isfinite(p->y)) {
        segments.emplace_back();
        continue;
      }
      fmt::format_to(std::back_inserter(segments.back()), "{}{:.1f},{:.1f}",
                     segments.back().empty() ? "" : " ", x, px_y(p->y));
    }
    for (const std::string& seg : segments) {
      if (seg.find(' ') != std::string::npos) {
        emit(out,
             "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{:.1f}\" "
             "stroke-linejoin=\"round\"/>\n",
             seg, color, line_w(i));
      }
    }
    for (const auto& [x, p] : pts) {
      if (std::isfinite(p->y)) {
        marker(out, i, x, px_y(p->y), color, p->flagged);
      }
    }
  }

  // Legend, beside the plot so it never covers data.
  std::size_t entries = chart.series.size() + (any_flagged ? 1 : 0);
  emit(out,
       "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#ffffff\" "
       "stroke=\"#cccccc\"/>\n",
       legend_x, plot_t, legend_w, 12.0 + 20.0 * static_cast<double>(entries));
  for (std::size_t i = 0; i < entries; ++i) {
    double y = plot_t + 16.0 + 20.0 * static_cast<double>(i);
    double x = legend_x + 10.0;
    if (i < chart.series.size()) {
      std::string_view color = kColors[i % kColors.size()];
      emit(out,
           "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
           "stroke-width=\"{:.1f}\"/>\n",
           x, y, x + 28.0, y, color, line_w(i));
      marker(out, i, x + 14.0, y, color, false);
      emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 36.0, y + 4.0,
           xml_escape(chart.series[i].name));
    } else {
      marker(out, 0, x + 14.0, y, "#555555", true);
      emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 36.0, y + 4.0,
           xml_escape(chart.flag_note));
    }
  }

  // Small print.
  for (std::size_t i = 0; i < chart.notes.size(); ++i) {
    emit(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#666666\">{}</text>\n",
         kMargin, x_title_y + 22.0 + 16.0 * static_cast<double>(i), xml_escape(chart.notes[i]));
  }
  out += "</svg>\n";
  return out;
}

void write_line_chart_svg(const std::string& path, const LineChart& chart) {
  std::ofstream f(path);
  if (!f) {
    throw base::InputError(base::SourceLoc{path, 0, 0}, "cannot write this file");
  }
  f << line_chart_svg(chart);
}

}  // namespace tessera::sim::report
