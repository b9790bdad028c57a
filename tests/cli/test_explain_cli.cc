// `octet explain` and `octet diff` as a user runs them: the page and the JSON written (and
// nothing half-written on failure), saved reports re-rendered and compared, clear errors for
// an INT8 model without its FP32 original, and diff's verdicts.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "io/npy.h"

namespace octet::testing {
namespace {

namespace fs = std::filesystem;

const std::string kTinyNet = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";

// 16 calibration images in TinyNet's input range, as a float32 .npy (npy: dataset spec).
std::string write_calibration(const fs::path& dir) {
  npy::Array a;
  a.dtype = npy::DType::f32;
  a.shape = {16, 1, 28, 28};
  const auto v = random_uniform(16 * 28 * 28, 5, -0.8f, 2.0f);
  a.data.resize(v.size() * sizeof(float));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  const std::string path = (dir / "calib.npy").string();
  npy::write(path, a);
  return path;
}

// TinyNet quantized by the CLI into dir/int8.onnx; empty on failure (reported).
fs::path quantized_tinynet(const fs::path& dir) {
  const fs::path int8 = dir / "int8.onnx";
  const auto r = run_cli("quantize " + kTinyNet + " -o " + int8.string() + " --calib npy:" + write_calibration(dir) +
                             " --calib-count 16 --no-progress",
                         true);
  EXPECT_EQ(r.status, 0) << r.output;
  return r.status == 0 ? int8 : fs::path();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ExplainCli, WritesThePageAndTheJsonAndRendersThemAgain) {
  ScratchDir dir;
  const std::string calib = write_calibration(dir.path);
  const fs::path page = dir.path / "page.html", report = dir.path / "report.json";
  const auto r = run_cli("explain " + kTinyNet + " --data none --batch 2 --calib npy:" + calib +
                             " --calib-count 16 --no-progress -o " + page.string() + " --json " + report.string(),
                         true);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("INT8 runs"), std::string::npos) << r.output;  // the verdict on stdout
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["schema"], "octet-explain/1");
  EXPECT_EQ(j["accuracy_missing"], "--data none");
  const std::string html = slurp(page);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find(j["verdict"].get<std::string>().substr(0, 20)), std::string::npos);
  EXPECT_FALSE(fs::exists(page.string() + ".partial"));
  for (const auto& entry : fs::directory_iterator(dir.path))  // no temporary file left behind
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();

  const fs::path again = dir.path / "again.html", both = dir.path / "both.html";
  auto re = run_cli("explain --render " + report.string() + " -o " + again.string(), true);
  ASSERT_EQ(re.status, 0) << re.output;
  EXPECT_EQ(slurp(again), html);  // the page is a function of the JSON alone
  re = run_cli("explain --compare " + report.string() + " " + report.string() + " -o " + both.string(), true);
  ASSERT_EQ(re.status, 0) << re.output;
  EXPECT_GT(fs::file_size(both), fs::file_size(page));
}

TEST(ExplainCli, RefusesWhatItCannotExplainWithoutWritingAnything) {
  ScratchDir dir;
  const fs::path int8 = quantized_tinynet(dir.path);
  ASSERT_FALSE(int8.empty());
  const fs::path page = dir.path / "page.html";
  auto r = run_cli("explain " + int8.string() + " --data none -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--fp32"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(page));

  r = run_cli("explain " + kTinyNet + " --data none --isa-levels nosuchlevel -o " + page.string(), true);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nosuchlevel"), std::string::npos) << r.output;

  r = run_cli("explain " + kTinyNet + " --data none", true);
  EXPECT_EQ(r.status, 2) << r.output;  // neither -o nor --json
  EXPECT_NE(r.output.find("-o REPORT.html"), std::string::npos) << r.output;

  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << "{\"schema\": \"something-else\"}";
  r = run_cli("explain --render " + bad.string() + " -o " + page.string(), true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("not an octet explain report"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(page));
}

TEST(DiffCli, LevelsAgreeAndTheFirstDepartingTensorIsNamed) {
  ScratchDir dir;
  // Every level octet runs gives the scalar kernels' INT8 codes.
  const fs::path int8 = quantized_tinynet(dir.path);
  ASSERT_FALSE(int8.empty());
  auto r = run_cli("diff " + int8.string() + " --isa-a scalar --batch 2 --random-range -0.8 2", true);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("no tensor departs"), std::string::npos) << r.output;

  // FP32 against INT8 with a threshold no quantized tensor can meet: every one departs, the
  // first is named.
  r = run_cli("diff " + kTinyNet + " " + int8.string() + " --batch 2 --random-range -0.8 2 --min-sqnr 200", true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("first departure: "), std::string::npos) << r.output;

  // Every intermediate, even one a fused step never writes (TinyNet's expand convs run fused
  // with their depthwise convs): diff keeps the pairs apart.
  r = run_cli("diff " + kTinyNet + " --isa-a scalar --batch 2 --all", true);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("/blocks/blocks.0/expand/expand.2/Clip_output_0"), std::string::npos) << r.output;

  r = run_cli("diff " + kTinyNet + " " + kTinyNet, true);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("one FP32 and its INT8"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace octet::testing
