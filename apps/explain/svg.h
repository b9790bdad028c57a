#pragma once
// The explain page's charts as inline SVG, written by hand: a grouped bar chart, a horizontal
// stacked bar chart and a point chart along an index. Every chart has explicit width, height and
// viewBox (it is never 0x0, even without data), escapes all its text, and never means something by
// colour alone: the reference line is dashed, marked points are diamonds, bars carry their labels.
// Each chart is standalone-valid SVG (it carries the SVG xmlns) and links to nothing.
#include <optional>
#include <string>
#include <vector>

namespace octet::explain::svg {

// Axis ticks at round numbers: step = {1, 2, 2.5, 5} x 10^k, first <= lo, last >= hi.
struct Ticks {
  double step = 1;
  std::vector<double> values;  // first .. last, inclusive
  int decimals = 0;            // enough to print every value exactly
  double first() const { return values.front(); }
  double last() const { return values.back(); }
};
// About `target` intervals covering [lo, hi]; an empty or inverted range gets a unit span.
Ticks nice_ticks(double lo, double hi, int target = 5);

// The Okabe-Ito palette (distinct for colour-blind readers and in grey print), cycled.
const char* palette(size_t i);

struct Series {
  std::string name;
  std::vector<std::optional<double>> values;  // one per group; nullopt: not measured
};

struct GroupedBarChart {
  std::string title, y_label;
  std::string value_suffix;         // after each bar's value label, e.g. "x"
  std::vector<std::string> groups;  // along the x axis
  std::vector<Series> series;       // one bar per series in every group
  std::optional<double> reference;  // a dashed horizontal line, e.g. the 1.0 of a speed-up
  std::string reference_label;
  int width = 760, height = 320;
};
std::string grouped_bar_chart(const GroupedBarChart& chart);

struct StackedBar {
  std::string label;
  std::vector<double> values;  // one per segment, in the chart's segment order
};

struct StackedBarChart {
  std::string title, x_label;
  std::string unit;                   // after totals and in the tooltips, e.g. "µs"
  std::vector<std::string> segments;  // the legend, in stacking order
  std::vector<StackedBar> bars;       // top to bottom
  int width = 760;                    // the height follows from the number of bars
};
std::string stacked_bar_chart(const StackedBarChart& chart);

struct IndexPoint {
  std::string label;            // the tooltip's name, and the marked points' caption
  std::optional<double> value;  // nullopt: not drawn, and counted in the chart's note
  bool marked = false;          // drawn as a diamond in another colour, captioned
};

struct PointChart {
  std::string title, x_label, y_label;
  std::string value_suffix;    // in the tooltips, e.g. " dB"
  std::string marked_name;     // the legend's name for marked points, e.g. "culprit"
  std::string missing_reason;  // why a point has no value, e.g. "infinite SQNR: no error"
  std::vector<IndexPoint> points;
  int width = 760, height = 320;
};
std::string point_chart(const PointChart& chart);

}  // namespace octet::explain::svg
