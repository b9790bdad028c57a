// The explain page's structure from a sample report built in code: sections and their order,
// one chart per what the data implies, nothing external, escaping, "not measured" for what is
// absent, and errors that name the field of the wrong type.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tests/explain/page_checks.h"
#include "tests/explain/sample_report.h"
#include "apps/explain/report_html.h"

using nlohmann::json;
using octet::explain::render_comparison_html;
using octet::explain::render_report_html;
using namespace octet::explain::testing;

namespace {

// The text of section `id`: from its opening tag to the next </section>.
std::string section_text(const std::string& page, const std::string& id) {
  const size_t begin = page.find("<section id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  return page.substr(begin, page.find("</section>", begin) - begin);
}

void expect_sections_in_order(const std::string& page) {
  const auto at = section_positions(page);
  for (size_t i = 0; i < at.size(); ++i) {
    SCOPED_TRACE(section_ids()[i]);
    ASSERT_NE(at[i], std::string::npos);
    EXPECT_EQ(count(page, "<section id=\"" + section_ids()[i] + "\""), 1u);
    EXPECT_EQ(page.find("<h2>", at[i]), page.find('>', at[i]) + 2) << "the section opens with its <h2>";
    if (i) {
      EXPECT_GT(at[i], at[i - 1]);
    }
  }
}

std::string error_of(const json& report) {
  try {
    render_report_html(report);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

SampleOptions apple() { return {"Apple M2 Pro", "arm64", {"scalar", "neon", "neondot"}}; }

}  // namespace

TEST(ReportHtml, SixSectionsInOrderEachWithAHeading) {
  const std::string page = render_report_html(sample_report());
  ASSERT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  expect_sections_in_order(page);
  EXPECT_NE(section_text(page, "verdict").find("1.51x faster than FP32"), std::string::npos);
}

TEST(ReportHtml, OneChartPerWhatTheDataImplies) {
  json report = sample_report();
  // The speed-up chart, a time chart per batch (1 and 16) and the SQNR chart.
  ASSERT_EQ(expected_chart_count(report), 4u);
  EXPECT_EQ(count(render_report_html(report), "<svg"), 4u);
  EXPECT_EQ(count(section_text(render_report_html(report), "time"), "<svg"), 2u);

  json one_batch = report;
  json kept = json::array();
  for (const auto& p : one_batch["profiles"])
    if (p["batch"] == 1) kept.push_back(p);
  one_batch["profiles"] = kept;
  one_batch.erase("accuracy");
  ASSERT_EQ(expected_chart_count(one_batch), 2u);
  EXPECT_EQ(count(render_report_html(one_batch), "<svg"), 2u);

  json bare = report;
  bare.erase("speedups");
  bare.erase("profiles");
  bare.erase("accuracy");
  EXPECT_EQ(count(render_report_html(bare), "<svg"), 0u);
}

TEST(ReportHtml, EverySvgHasAPositiveSize) {
  const auto sizes = svg_sizes(render_report_html(sample_report()));
  ASSERT_FALSE(sizes.empty());
  for (const auto& s : sizes) {
    EXPECT_GT(s.width, 0);
    EXPECT_GT(s.height, 0);
  }
}

TEST(ReportHtml, NothingExternalAndNoScript) {
  for (const std::string& page :
       {render_report_html(sample_report()), render_comparison_html(sample_report(), sample_report(apple()))}) {
    const std::string inner = without_svg_namespace(page);
    EXPECT_EQ(inner.find("http://"), std::string::npos);
    EXPECT_EQ(inner.find("https://"), std::string::npos);
    EXPECT_EQ(inner.find("=\"//"), std::string::npos) << "no protocol-relative URL";
    EXPECT_EQ(page.find("<script"), std::string::npos);
    EXPECT_EQ(page.find("url("), std::string::npos);
    EXPECT_EQ(page.find("@import"), std::string::npos);
    EXPECT_EQ(page.find(" src="), std::string::npos);
    // Links only within the page.
    for (size_t at = page.find("href=\""); at != std::string::npos; at = page.find("href=\"", at + 1))
      EXPECT_EQ(page[at + 6], '#') << page.substr(at, 40);
  }
}

TEST(ReportHtml, EscapesNamesFromTheModel) {
  json report = sample_report();
  const std::string hostile = "<b>&\"x";
  report["differences"][0]["node"] = hostile;
  report["profiles"][0]["steps"][0]["node"] = hostile;
  report["accuracy"]["tensors"][3]["name"] = hostile;
  report["model"]["name"] = hostile;
  report["recommendations"][0]["text"] = "Use <script>alert(1)</script> & more";
  const std::string page = render_report_html(report);
  EXPECT_EQ(page.find(hostile), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_GE(count(page, "&lt;b&gt;&amp;&quot;x"), 5u);  // title, h1, differences, steps, tensors, chart
  EXPECT_NE(page.find("Use &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"), std::string::npos);
}

TEST(ReportHtml, WithoutAccuracyTheSectionSaysNotMeasured) {
  json report = sample_report();
  report.erase("accuracy");
  const std::string page = render_report_html(report);
  expect_sections_in_order(page);
  const std::string accuracy = section_text(page, "accuracy");
  EXPECT_NE(accuracy.find("not measured"), std::string::npos) << accuracy;
  EXPECT_NE(accuracy.find("no data set"), std::string::npos) << accuracy;
  EXPECT_EQ(accuracy.find("<svg"), std::string::npos);
}

TEST(ReportHtml, AbsentOptionalFieldsSayNotMeasuredNeverZeroOrNaN) {
  json report = sample_report();
  report["machine"].erase("ort_version");
  report["machine"].erase("peaks");
  report["accuracy"].erase("top1");
  report["accuracy"].erase("ort");
  report["speed"][0].erase("ms_per_image");
  report["speed"][1]["ms_per_image"] = nullptr;
  report["speed"][2]["ms_per_image"] = std::numeric_limits<double>::quiet_NaN();  // never valid, never shown
  report["profiles"][0]["steps"][0].erase("gops");
  const std::string page = render_report_html(report);
  const std::string machine = section_text(page, "machine");
  EXPECT_GE(count(machine, "not measured"), 2u) << machine;
  EXPECT_NE(section_text(page, "accuracy").find("Top-1 accuracy: <span class=\"nm\">not measured"), std::string::npos);
  EXPECT_NE(section_text(page, "accuracy").find("ORT comparison: <span class=\"nm\">not measured"), std::string::npos);
  EXPECT_GE(count(section_text(page, "speed"), "not measured"), 3u);
  for (const char* bad : {"nan", "NaN", "inf<", ">inf", "null"}) EXPECT_EQ(page.find(bad), std::string::npos) << bad;
}

TEST(ReportHtml, InfiniteSqnrIsShownAsExactAndLeftOffTheChart) {
  const std::string accuracy = section_text(render_report_html(sample_report()), "accuracy");
  EXPECT_NE(accuracy.find("∞ (exact)"), std::string::npos);
  EXPECT_NE(accuracy.find("1 not drawn (infinite SQNR"), std::string::npos);
  EXPECT_EQ(count(accuracy, "class=\"point marked\""), 1u);
  EXPECT_EQ(count(accuracy, "class=\"point\""), 8u);
  EXPECT_NE(accuracy.find("◆ culprit"), std::string::npos);
}

TEST(ReportHtml, AFieldOfTheWrongTypeThrowsNamingIt) {
  const auto with = [](const char* pointer, json value) {
    json r = sample_report();
    r[json::json_pointer(pointer)] = std::move(value);
    return r;
  };
  EXPECT_EQ(error_of(with("/speed/3/ms_per_image", "fast")), "report.speed[3].ms_per_image: expected a number");
  EXPECT_EQ(error_of(with("/machine/cpu", 5)), "report.machine.cpu: expected a string");
  EXPECT_EQ(error_of(with("/profiles/2/steps", json::object())), "report.profiles[2].steps: expected an array");
  EXPECT_EQ(error_of(with("/profiles/1/batch", 1.5)), "report.profiles[1].batch: expected an integer");
  EXPECT_EQ(error_of(with("/accuracy/tensors/4/range", "wide")), "report.accuracy.tensors[4].range: expected an array");
  EXPECT_EQ(error_of(with("/accuracy/tensors/5/culprit", "yes")),
            "report.accuracy.tensors[5].culprit: expected true or false");
  EXPECT_EQ(error_of(with("/recommendations/1", 3)), "report.recommendations[1]: expected an object");
  EXPECT_EQ(error_of(with("/speedups", "none")), "report.speedups: expected an array");
  EXPECT_EQ(error_of(with("/differences/0/node", json::array())), "report.differences[0].node: expected a string");
  json no_engine = sample_report();
  no_engine["speed"][0].erase("engine");
  EXPECT_EQ(error_of(no_engine), "report.speed[0].engine: missing");
  EXPECT_EQ(error_of(json::array()), "report: expected an object (an octet explain report)");
  EXPECT_NE(error_of(with("/schema", "octet-eval/1")).find("report.schema: expected \"octet-explain/1\""),
            std::string::npos);
}

TEST(ReportHtml, ComparisonShowsBothMachinesInEverySection) {
  const json a = sample_report(), b = sample_report(apple());
  const std::string page = render_comparison_html(a, b);
  expect_sections_in_order(page);
  EXPECT_NE(page.find("AMD EPYC 7B13"), std::string::npos);
  EXPECT_NE(page.find("Apple M2 Pro"), std::string::npos);
  EXPECT_EQ(count(page, "<svg"), expected_chart_count(a) + expected_chart_count(b));
  for (const auto& id : section_ids()) {
    const std::string s = section_text(page, id);
    EXPECT_NE(s.find("A: AMD EPYC 7B13"), std::string::npos) << id;
    EXPECT_NE(s.find("B: Apple M2 Pro"), std::string::npos) << id;
  }
  EXPECT_NE(section_text(page, "machine").find("neondot"), std::string::npos);
  EXPECT_NE(section_text(page, "speed").find("Fastest octet level on each machine"), std::string::npos);
  EXPECT_EQ(page.find("different models"), std::string::npos);
}

TEST(ReportHtml, ComparisonErrorsSayWhichReport) {
  json b = sample_report(apple());
  b["speed"][3]["ms_per_image"] = "fast";
  try {
    render_comparison_html(sample_report(), b);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "report_b.speed[3].ms_per_image: expected a number");
  }
}
