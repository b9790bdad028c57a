// The atlas's half that needs no measuring (apps/explain/atlas.h): an explain report summed up
// as a model's cells and reasons, the reason kinds, the page's heat maps and links, the
// comparison, and the errors for a document that is not an atlas.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "tests/explain/sample_report.h"
#include "apps/explain/atlas.h"

namespace octet::explain::testing {
namespace atlas_tests {

using json = nlohmann::json;

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(Atlas, ReasonKinds) {
  EXPECT_EQ(reason_kind("scalar fallback: q8_x__ref ran at avx2", "int8_static", false), "scalar fallback");
  EXPECT_EQ(reason_kind("runs in float: the INT8 model keeps Resize in FP32", "int8_static", false), "runs in float");
  const std::string overhead = "INT8 runs these nodes as 3 step(s) (main: ConvInteger), FP32 as 1: quantization "
                               "overhead: DynamicQuantizeLinear (4.0 µs)";
  EXPECT_EQ(reason_kind(overhead, "int8_static", false), "quantize overhead");
  EXPECT_EQ(reason_kind(overhead, "int8_dynamic", false), "dynamic-quantize cost");
  const std::string dot = "no integer dot-product instruction at avx2: uint8 x int8 products are widened";
  EXPECT_EQ(reason_kind(dot, "int8_static", false), "no dot product");
  EXPECT_EQ(reason_kind(dot, "int8_static", true), "depthwise, no dot product");
  EXPECT_EQ(reason_kind("memory-bound: 0.5 multiply-adds per output byte", "int8_static", false), "memory-bound");
  EXPECT_EQ(reason_kind("only in the INT8 plan: no FP32 step runs these nodes (x)", "int8_static", false),
            "INT8-only steps");
  EXPECT_EQ(reason_kind("slower kernel: a at 1 GOP/s vs FP32 b at 2 GFLOP/s", "int8_static", false), "slower kernel");
}

TEST(Atlas, ModelEntryFromAnExplainReport) {
  const json report = sample_report();
  const json m = atlas_model("sample", report);
  EXPECT_EQ(m["name"], "sample");
  // One cell per level and batch (one thread), each speed-up FP32 ms ÷ INT8 ms of the report.
  ASSERT_EQ(m["cells"].size(), 4u);
  std::map<std::string, double> ms;
  for (const auto& row : report["speed"])
    if (row["engine"] == "octet")
      ms[row["precision"].get<std::string>() + "@" + row["isa"].get<std::string>() + "@" +
         std::to_string(row["batch"].get<int>())] = row["ms_per_image"];
  for (const auto& c : m["cells"]) {
    const std::string at = "@" + c["isa"].get<std::string>() + "@" + std::to_string(c["batch"].get<int>());
    for (const char* p : {"int8_static", "int8_dynamic"})
      EXPECT_DOUBLE_EQ(c["speedup"][p].get<double>(), ms["fp32" + at] / ms[p + at]) << c.dump();
    // ORT timed FP32 and static INT8 at every batch, one thread.
    EXPECT_DOUBLE_EQ(c["vs_ort"]["int8_static"].get<double>(),
                     ms["int8_static" + at] / c["ort_ms"]["int8_static"].get<double>());
    EXPECT_FALSE(c["vs_ort"].contains("int8_dynamic"));
  }
  // A reason per INT8 precision and level; at the SIMD level the rows' largest summed loss wins:
  // "no integer dot product" (9 + 9 × 0.72^6 µs) over memory-bound and quantize overhead.
  ASSERT_EQ(m["reasons"].size(), 4u);
  for (const auto& r : m["reasons"]) {
    EXPECT_LE(r["rows"].size(), 5u);
    if (r["precision"] == "int8_static" && r["isa"] == "avx2") {
      EXPECT_EQ(r["kind"], "no dot product");
      EXPECT_NEAR(r["loss_us"].get<double>(), 9.0 + 9.0 * std::pow(0.72, 6), 1e-9);
      EXPECT_EQ(r["text"].get<std::string>().rfind("no integer dot product at avx2", 0), 0u) << r["text"];
      EXPECT_EQ(r["rows"].size(), 5u);
    } else {
      EXPECT_EQ(r["kind"], "INT8 ahead on every node") << r.dump();  // the sample lists no rows there
    }
  }
}

TEST(Atlas, PageHasTheHeatMapsAndAReasonBehindEveryCell) {
  const json atlas = sample_atlas();
  const std::string html = render_atlas_html(atlas);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<table class=\"heat\">"), 3u);  // static, dynamic, octet ÷ ORT
  for (const auto& m : atlas["models"])
    for (const auto& r : m["reasons"]) {
      const std::string anchor = r["anchor"];
      EXPECT_EQ(occurrences(html, "id=\"" + anchor + "\""), 1u) << anchor;
      EXPECT_EQ(occurrences(html, "href=\"#" + anchor + "\""), 2u) << anchor;  // batch 1 and 16
    }
  EXPECT_NE(html.find("no dot product"), std::string::npos);
  EXPECT_NE(html.find("AMD EPYC 7B13"), std::string::npos);
  EXPECT_NE(html.find("0123456789ab"), std::string::npos);
  EXPECT_NE(html.find("broken: no model_int8.onnx"), std::string::npos);
}

TEST(Atlas, ComparisonShowsTheRatioOfSpeedUps) {
  const json a = sample_atlas();
  json b = sample_atlas({"Apple M2 Pro", "arm64", {"scalar", "neon", "neondot"}});
  // B's static INT8 twice as fast at every cell: every common static ratio reads 2.00.
  for (auto& m : b["models"])
    for (auto& c : m["cells"]) c["speedup"]["int8_static"] = 2.0 * c["speedup"]["int8_static"].get<double>();
  const std::string html = render_atlas_comparison_html(a, b);
  EXPECT_NE(html.find("Apple M2 Pro"), std::string::npos);
  EXPECT_NE(html.find("AMD EPYC 7B13"), std::string::npos);
  // Common columns: scalar at batch 1 and 16; two models.
  EXPECT_EQ(occurrences(html, "<span class=\"v\">2.00</span>"), 4u);
  EXPECT_EQ(occurrences(html, "<span class=\"v\">1.00</span>"), 4u);  // dynamic, unchanged
}

TEST(Atlas, RefusesWhatIsNotAnAtlas) {
  EXPECT_THROW(render_atlas_html(json{{"schema", "octet-explain/1"}}), std::runtime_error);
  json bad = sample_atlas();
  bad["models"][1]["cells"] = "none";
  try {
    render_atlas_html(bad);
    FAIL() << "rendered an atlas whose cells are a string";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("models[1].cells"), std::string::npos) << e.what();
  }
  bad = sample_atlas();
  bad["columns"][0].erase("isa");
  EXPECT_THROW(check_atlas(bad, "x.json"), std::runtime_error);
}

}  // namespace atlas_tests
}  // namespace octet::explain::testing
