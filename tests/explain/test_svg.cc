// The chart writer on its own: round ticks that cover the data, the dashed reference line,
// sizes that are never zero, escaped text and marked points.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "tests/explain/page_checks.h"
#include "apps/explain/svg.h"

namespace svg = octet::explain::svg;
using octet::explain::testing::count;
using octet::explain::testing::svg_sizes;

namespace {

// The numbers of every tick label in `chart`, in document order.
std::vector<double> tick_labels(const std::string& chart) {
  static const std::regex tick(R"re(class="tick">(-?[0-9.]+)</text>)re");
  std::vector<double> out;
  for (std::sregex_iterator it(chart.begin(), chart.end(), tick), end; it != end; ++it)
    out.push_back(std::stod((*it)[1]));
  return out;
}

// step = m x 10^k with m in {1, 2, 2.5, 5}.
bool round_step(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (std::fabs(mantissa - m) < 1e-9) return true;
  return false;
}

bool multiple_of(double v, double step) {
  const double k = v / step;
  return std::fabs(k - std::round(k)) < 1e-6;
}

svg::GroupedBarChart speedup_chart() {
  svg::GroupedBarChart c;
  c.title = "INT8 speed-up";
  c.y_label = "FP32 ms / INT8 ms";
  c.value_suffix = "x";
  c.groups = {"INT8 static, batch 1", "INT8 dynamic, batch 1"};
  c.series = {{"scalar", {0.81, 1.16}}, {"avx2", {1.51, 0.71}}};
  c.reference = 1.0;
  c.reference_label = "1.0: as fast as FP32";
  return c;
}

}  // namespace

TEST(SvgTicks, AreRoundNumbersThatCoverTheRange) {
  const std::pair<double, double> ranges[] = {{0, 1.51},  {0, 1},        {0.2, 0.7},   {0, 118.4}, {0, 1890},
                                              {-3.5, 12}, {0, 0.000123}, {17.5, 36.8}, {5, 5},     {0, 0}};
  for (const auto& [lo, hi] : ranges) {
    SCOPED_TRACE(::testing::Message() << "[" << lo << ", " << hi << "]");
    const svg::Ticks t = svg::nice_ticks(lo, hi);
    EXPECT_TRUE(round_step(t.step)) << t.step;
    ASSERT_GE(t.values.size(), 2u);
    EXPECT_LE(t.values.size(), 12u);
    EXPECT_LE(t.first(), lo);
    EXPECT_GE(t.last(), hi);
    for (size_t i = 0; i < t.values.size(); ++i) {
      EXPECT_TRUE(multiple_of(t.values[i], t.step)) << t.values[i];
      if (i) {
        EXPECT_NEAR(t.values[i] - t.values[i - 1], t.step, 1e-9 * t.step);
      }
    }
  }
}

TEST(SvgGroupedBars, TickLabelsAreRoundAndCoverTheBars) {
  const std::string chart = svg::grouped_bar_chart(speedup_chart());
  const auto ticks = tick_labels(chart);
  ASSERT_GE(ticks.size(), 3u) << chart;
  const double step = ticks[1] - ticks[0];
  EXPECT_TRUE(round_step(step)) << step;
  for (double v : ticks) EXPECT_TRUE(multiple_of(v, step)) << v;
  EXPECT_LE(ticks.front(), 0.0);
  EXPECT_GE(ticks.back(), 1.51);
  EXPECT_EQ(count(chart, "class=\"bar\""), 4u);
}

TEST(SvgGroupedBars, DashedReferenceLineOnlyWhenAsked) {
  auto with = speedup_chart();
  const std::string chart = svg::grouped_bar_chart(with);
  ASSERT_EQ(count(chart, "class=\"reference\""), 1u);
  const size_t line = chart.find("class=\"reference\"");
  const std::string tag = chart.substr(chart.rfind('<', line), chart.find('>', line) - chart.rfind('<', line));
  EXPECT_NE(tag.find("stroke-dasharray"), std::string::npos) << tag;
  EXPECT_NE(chart.find("1.0: as fast as FP32"), std::string::npos);

  auto without = speedup_chart();
  without.reference.reset();
  EXPECT_EQ(count(svg::grouped_bar_chart(without), "class=\"reference\""), 0u);
}

TEST(SvgGroupedBars, AbsentValueIsNotMeasuredNotZero) {
  auto c = speedup_chart();
  c.series[1].values[1].reset();
  const std::string chart = svg::grouped_bar_chart(c);
  EXPECT_EQ(count(chart, "class=\"bar\""), 3u);
  EXPECT_NE(chart.find("n/m: not measured"), std::string::npos);
}

TEST(SvgCharts, HaveAPositiveSizeAndViewBoxEvenWithoutData) {
  const std::string charts[] = {svg::grouped_bar_chart({}), svg::stacked_bar_chart({}), svg::point_chart({}),
                                svg::grouped_bar_chart(speedup_chart())};
  for (const auto& chart : charts) {
    const auto sizes = svg_sizes(chart);
    ASSERT_EQ(sizes.size(), 1u);
    EXPECT_GT(sizes[0].width, 0);
    EXPECT_GT(sizes[0].height, 0);
    EXPECT_NE(chart.find("viewBox=\"0 0 "), std::string::npos);
    EXPECT_EQ(chart.find("nan"), std::string::npos) << chart;
  }
}

TEST(SvgCharts, EscapeEveryText) {
  svg::StackedBarChart c;
  c.title = "time <b>&\"quoted\"";
  c.unit = "µs";
  c.segments = {"dense<", "other&"};
  c.bars = {{"a\"b", {10, 5}}};
  const std::string chart = svg::stacked_bar_chart(c);
  EXPECT_EQ(chart.find("<b>"), std::string::npos);
  EXPECT_EQ(chart.find("dense<"), std::string::npos);
  EXPECT_EQ(chart.find("a\"b"), std::string::npos);
  EXPECT_NE(chart.find("time &lt;b&gt;&amp;&quot;quoted&quot;"), std::string::npos);
  EXPECT_NE(chart.find("a&quot;b"), std::string::npos);
}

TEST(SvgStackedBars, OneSegmentPerNonZeroValueAndATotal) {
  svg::StackedBarChart c;
  c.title = "Time per category";
  c.unit = "µs";
  c.segments = {"dense", "depthwise", "quantize"};
  c.bars = {{"avx2 · FP32", {70, 20, 0}}, {"avx2 · INT8 static", {60, 25, 8}}};
  const std::string chart = svg::stacked_bar_chart(c);
  EXPECT_EQ(count(chart, "class=\"segment\""), 5u);
  EXPECT_EQ(count(chart, "class=\"total\""), 2u);
  EXPECT_NE(chart.find(">90.0 µs<"), std::string::npos);
  EXPECT_NE(chart.find(">93.0 µs<"), std::string::npos);
  const auto ticks = tick_labels(chart);
  ASSERT_FALSE(ticks.empty());
  EXPECT_GE(ticks.back(), 93.0);
}

TEST(SvgPointChart, MarksCulpritsWithAShapeAndSaysWhatIsNotDrawn) {
  svg::PointChart c;
  c.title = "SQNR";
  c.marked_name = "culprit";
  c.missing_reason = "infinite SQNR";
  c.points = {{"in", std::nullopt, false}, {"a", 31.0, false}, {"b", 17.5, true}, {"c", 29.0, false}};
  const std::string chart = svg::point_chart(c);
  EXPECT_EQ(count(chart, "class=\"point\""), 2u);
  EXPECT_EQ(count(chart, "class=\"point marked\""), 1u);
  EXPECT_NE(chart.find("1 not drawn (infinite SQNR): #0 in"), std::string::npos) << chart;
  // The index axis: whole numbers only.
  for (double v : tick_labels(chart)) EXPECT_EQ(v, std::floor(v));
}
