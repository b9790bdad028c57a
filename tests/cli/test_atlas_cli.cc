// `octet atlas` as a user runs it: a --quick atlas of a zoo of two tiny models (TinyNet and
// ResNet-8, quantized by the atlas from their calib.npy) has a cell for every model and column
// and a reason behind every cell, on the page and in the JSON; a saved atlas re-renders and
// compares; bad input fails with one clear line and writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "io/npy.h"

namespace octet::testing {
namespace atlas_cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kModels = fs::path(OCTET_SOURCE_DIR) / "models";

// A zoo folder NAME/model.onnx, with 16 calibration images in the models' 1x28x28 input range
// as NAME/calib.npy when `calib`.
void add_model(const fs::path& zoo, const std::string& name, const std::string& onnx, bool calib) {
  fs::create_directories(zoo / name);
  fs::copy_file(kModels / onnx, zoo / name / "model.onnx");
  if (!calib) return;
  npy::Array a;
  a.dtype = npy::DType::f32;
  a.shape = {16, 1, 28, 28};
  const auto v = random_uniform(16 * 28 * 28, 7, -0.8f, 2.0f);
  a.data.resize(v.size() * sizeof(float));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  npy::write((zoo / name / "calib.npy").string(), a);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(AtlasCli, QuickAtlasOfTwoTinyModelsHasEveryCellAndItsReason) {
  ScratchDir dir;
  const fs::path zoo = dir.path / "zoo";
  add_model(zoo, "tinynet", "tinynet.onnx", true);
  add_model(zoo, "resnet8", "resnet8.onnx", true);
  add_model(zoo, "uncalibrated", "tinynet.onnx", false);  // no model_int8.onnx, no calib.npy: skipped
  const fs::path page = dir.path / "atlas.html", report = dir.path / "atlas.json";
  // ONNX Runtime starts a process per configuration: OrtAlongside times it, on one model.
  const auto r = run_cli("atlas --zoo " + zoo.string() + " --quick --no-ort --commit abc123 -o " + page.string() +
                             " --json " + report.string(),
                         true);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("atlas: model 2/3"), std::string::npos) << r.output;  // progress
  EXPECT_NE(r.output.find("skipping uncalibrated: no model_int8.onnx, and no calib.npy"), std::string::npos)
      << r.output;

  const json atlas = json::parse(slurp(report));
  EXPECT_EQ(atlas["schema"], "octet-atlas/1");
  EXPECT_EQ(atlas["commit"], "abc123");
  ASSERT_EQ(atlas["skipped_models"].size(), 1u);
  EXPECT_EQ(atlas["skipped_models"][0]["name"], "uncalibrated");
  const json& machine = atlas["machine"];
  EXPECT_FALSE(machine["isa_levels"].empty());
  EXPECT_TRUE(machine.contains("family") || machine["arch"] != "x86_64") << machine.dump();

  // Every level this CPU runs × batch {1, 16} × threads {1, every core}.
  const size_t threads = std::max(1u, std::thread::hardware_concurrency()) > 1 ? 2 : 1;
  ASSERT_EQ(atlas["columns"].size(), machine["isa_levels"].size() * 2 * threads);
  ASSERT_EQ(atlas["models"].size(), 2u);
  const std::string html = slurp(page);
  EXPECT_NE(html.find("<table class=\"heat\">"), std::string::npos);
  EXPECT_NE(html.find("static INT8 ÷ FP32"), std::string::npos);
  EXPECT_NE(html.find("dynamic INT8 ÷ FP32"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // self-contained
  for (const json& m : atlas["models"]) {
    EXPECT_TRUE(m["name"] == "tinynet" || m["name"] == "resnet8") << m["name"];
    // Every cell measured, or (a batch-16 run over --quick's 0.5 s on a loaded machine) listed
    // as skipped with its estimate.
    auto skipped = [&](const json& col, const std::string& precision) {
      for (const json& s : m.value("skipped", json::array()))
        if (s["isa"] == col["isa"] && s["batch"] == col["batch"] && s["threads"] == col["threads"] &&
            (s["precision"] == precision || s["precision"] == "fp32"))
          return s["estimated_run_seconds"].get<double>() > 0.5;
      return false;
    };
    for (const json& col : atlas["columns"]) {
      const json* cell = nullptr;
      for (const json& c : m["cells"])
        if (c["isa"] == col["isa"] && c["batch"] == col["batch"] && c["threads"] == col["threads"]) cell = &c;
      if (col["batch"] == 1) {
        ASSERT_NE(cell, nullptr) << m["name"] << " " << col.dump();
      }
      for (const char* p : {"int8_static", "int8_dynamic"}) {
        if (!cell || !(*cell)["speedup"].contains(p)) {
          EXPECT_TRUE(skipped(col, p)) << m["name"] << " " << p << " " << col.dump();
          continue;
        }
        const double fp32 = (*cell)["ms"]["fp32"], int8 = (*cell)["ms"][p];
        EXPECT_NEAR((*cell)["speedup"][p].get<double>(), fp32 / int8, 1e-9 * fp32 / int8);
      }
    }
    // A reason for each INT8 precision at each level, named on the page where the cells link.
    std::set<std::string> reasons;
    for (const json& reason : m["reasons"]) {
      reasons.insert(reason["precision"].get<std::string>() + "@" + reason["isa"].get<std::string>());
      EXPECT_FALSE(reason["kind"].get<std::string>().empty());
      EXPECT_NE(reason["kind"], "not measured");
      const std::string anchor = reason["anchor"];
      EXPECT_EQ(count(html, "id=\"" + anchor + "\""), 1u) << anchor;
      EXPECT_EQ(count(html, "href=\"#" + anchor + "\""), 2 * threads) << anchor;  // batch 1 and 16
    }
    EXPECT_EQ(reasons.size(), 2 * machine["isa_levels"].size()) << m["reasons"].dump();
  }
  for (const auto& entry : fs::directory_iterator(dir.path))  // no temporary file left behind
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();

  // The page is a function of the JSON; two atlases compare (here one with itself: every ratio 1).
  const fs::path again = dir.path / "again.html", both = dir.path / "both.html";
  auto re = run_cli("atlas --render " + report.string() + " -o " + again.string(), true);
  ASSERT_EQ(re.status, 0) << re.output;
  EXPECT_EQ(slurp(again), html);
  re = run_cli("atlas --render " + report.string() + " --compare " + report.string() + " -o " + both.string(), true);
  ASSERT_EQ(re.status, 0) << re.output;
  const std::string compared = slurp(both);
  EXPECT_NE(compared.find("B's speed-up ÷ A's"), std::string::npos);
  size_t measured = 0;
  for (const json& m : atlas["models"])
    for (const json& c : m["cells"]) measured += c["speedup"].size();
  EXPECT_EQ(count(compared, "<span class=\"v\">1.00</span>"), measured);
}

TEST(AtlasCli, OrtAlongside) {
  ScratchDir dir;
  const fs::path zoo = dir.path / "zoo";
  add_model(zoo, "tinynet", "tinynet.onnx", true);
  const fs::path report = dir.path / "atlas.json", page = dir.path / "atlas.html";
  const auto r = run_cli("atlas --zoo " + zoo.string() + " --quick -o " + page.string() + " --json " + report.string(),
                         true);
  ASSERT_EQ(r.status, 0) << r.output;
  const json atlas = json::parse(slurp(report));
  ASSERT_TRUE(atlas["machine"].contains("ort_version")) << r.output;  // tools/setup.sh installs it
  size_t ratios = 0;
  for (const json& c : atlas["models"][0]["cells"])
    for (const char* p : {"fp32", "int8_static", "int8_dynamic"})
      if (c["vs_ort"].contains(p)) {
        EXPECT_NEAR(c["vs_ort"][p].get<double>(), c["ms"][p].get<double>() / c["ort_ms"][p].get<double>(), 1e-9);
        ++ratios;
      }
  EXPECT_GE(ratios, 3u);  // batch 1, one thread, at least
  EXPECT_NE(slurp(page).find("octet ÷ ORT, static INT8"), std::string::npos);
}

TEST(AtlasCli, BadInputFailsWithOneClearLineAndWritesNothing) {
  ScratchDir dir;
  const fs::path page = dir.path / "atlas.html";
  auto r = run_cli("atlas --zoo " + (dir.path / "nowhere").string() + " -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;

  const fs::path zoo = dir.path / "zoo";
  add_model(zoo, "uncalibrated", "tinynet.onnx", false);
  r = run_cli("atlas --zoo " + zoo.string() + " --only nosuchmodel -o " + page.string(), true);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nosuchmodel is not a model of"), std::string::npos) << r.output;
  r = run_cli("atlas --zoo " + zoo.string() + " --quick -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("no model of"), std::string::npos) << r.output;
  r = run_cli("atlas --zoo " + zoo.string(), true);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("-o ATLAS.html"), std::string::npos) << r.output;

  const fs::path other = dir.path / "other.json", text = dir.path / "text.json";
  std::ofstream(other) << "{\"schema\": \"octet-explain/1\"}";
  std::ofstream(text) << "not json";
  r = run_cli("atlas --render " + other.string() + " -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("not an octet atlas"), std::string::npos) << r.output;
  r = run_cli("atlas --render " + text.string() + " -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("not JSON"), std::string::npos) << r.output;
  r = run_cli("atlas --render " + other.string() + " --json " + (dir.path / "x.json").string() + " --compare " +
                  other.string(),
              true);
  EXPECT_EQ(r.status, 2) << r.output;  // --compare without a page to write
  EXPECT_FALSE(fs::exists(page));
  EXPECT_FALSE(fs::exists(dir.path / "x.json"));
}

}  // namespace atlas_cli
}  // namespace octet::testing
