// "Where INT8 loses time" on the zoo, whose FP32 and INT8 plans fuse differently (MnasNet's
// 1x1 + depthwise pairs and residual convs, MobileNetV3's squeeze-excitation blocks, ConvNeXt's
// float islands between a quantize and a dequantize): on every model every group of steps holds
// steps of both plans, and on three the report's rows have both times, the sums of the steps
// they name, and a reason. Registered only when the zoo was exported at configure time
// (tests/explain/CMakeLists.txt), like the zoo parity tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "apps/cli/calibration.h"
#include "apps/explain/differences.h"
#include "apps/explain/explain.h"

namespace octet::explain::zoo_test {

using json = nlohmann::json;
namespace fs = std::filesystem;

fs::path zoo_dir() {
  if (const char* env = std::getenv("OCTET_ZOO_DIR"); env && *env) return env;
  return fs::path(OCTET_SOURCE_DIR) / "out" / "zoo";
}

const json* profile(const json& report, const json& row, const std::string& precision) {
  for (const auto& p : report["profiles"])
    if (p["precision"] == precision && p["isa"] == row["isa"]) return &p;
  return nullptr;
}

class ExplainZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(ExplainZoo, EveryRowComparesWholeGroupsWithBothTimes) {
  const fs::path dir = zoo_dir() / GetParam();
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << ": export the zoo (tools/zoo/export.py --small)";
  ExplainOptions o;
  o.model = (dir / "model.onnx").string();
  o.data = "none";
  o.mode = "both";
  o.batches = {1};
  o.all_cores = false;
  o.progress = false;
  o.budget = {2, 5, 0.0};
  const auto levels = kernels::runnable_isas();
  o.levels = {levels.back()};
  o.calib.spec = "npy:" + (dir / "calib.npy").string();
  o.calib.progress = false;
  const json r = explain_model(o);

  ASSERT_FALSE(r["differences"].empty()) << "no group is slower in INT8 on " << GetParam();
  std::map<std::string, std::set<size_t>> used;  // "INT8 precision / plan" -> steps of the rows so far
  for (const auto& d : r["differences"]) {
    SCOPED_TRACE(d.dump());
    ASSERT_TRUE(d["fp32_us"].is_number());
    ASSERT_TRUE(d["int8_us"].is_number());
    const double fp32_us = d["fp32_us"], int8_us = d["int8_us"];
    EXPECT_NEAR(d["delta_us"].get<double>(), int8_us - fp32_us, 1e-9 * int8_us);
    EXPECT_GT(d["fp32_steps"].get<int>(), 0);
    const std::string reason = d["reason"];
    EXPECT_FALSE(reason.empty());
    EXPECT_EQ(reason.find("no FP32 step"), std::string::npos);
    EXPECT_FALSE(d["nodes"].empty());
    // The row's times are the sums of the steps it names in the two profiles, and no step is
    // in two rows.
    for (const std::string& precision : {std::string("fp32"), d["precision"].get<std::string>()}) {
      const json* p = profile(r, d, precision);
      ASSERT_NE(p, nullptr);
      const json& indices = d["step_indices"][precision == "fp32" ? "fp32" : "int8"];
      double sum = 0;
      for (const auto& i : indices) {
        sum += (*p)["steps"].at(i.get<size_t>())["us"].get<double>();
        EXPECT_TRUE(used[d["precision"].get<std::string>() + " / " + precision].insert(i.get<size_t>()).second)
            << precision << " step " << i << " is in two rows";
      }
      EXPECT_NEAR(sum, precision == "fp32" ? fp32_us : int8_us, 1e-9 * sum) << precision;
      EXPECT_EQ(indices.size(), d[precision == "fp32" ? "fp32_steps" : "int8_steps"].get<size_t>());
    }
  }
}

// The steps of the plan for one image, with the nodes of `model` each runs.
std::vector<StepProfile> steps_of(const ir::Graph& model) {
  Session session{ir::Graph(model)};
  std::vector<StepProfile> steps;
  for (const PlanStep& s : session.plan_for(session.input_dims_at(1)).steps())
    steps.push_back(describe_step(s, session.graph()));
  assign_sources(steps, model);
  return steps;
}

std::string describe(const CoFusionGroup& g, const std::vector<StepProfile>& fp32, const std::vector<StepProfile>& int8) {
  std::string out = "INT8:";
  for (size_t i : g.int8) out += " [" + int8[i].node + " " + int8[i].op + "]";
  out += " FP32:";
  for (size_t i : g.fp32) out += " [" + fp32[i].node + " " + fp32[i].op + "]";
  return out;
}

TEST(ExplainZooGroups, EveryGroupOfEveryModelHoldsStepsOfBothPlans) {
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(zoo_dir(), ec))
    if (fs::exists(e.path() / "model.onnx") && fs::exists(e.path() / "calib.npy")) models.push_back(e.path());
  std::sort(models.begin(), models.end());
  ASSERT_GE(models.size(), 3u) << zoo_dir();
  for (const fs::path& dir : models) {
    SCOPED_TRACE(dir.filename().string());
    const std::string path = (dir / "model.onnx").string();
    const ir::Graph fp32 = loader::load_onnx(path);
    const std::vector<StepProfile> f = steps_of(fp32);
    for (const char* mode : {"static", "dynamic"}) {
      SCOPED_TRACE(mode);
      cli::CalibrationArgs args;
      args.spec = "npy:" + (dir / "calib.npy").string();
      args.mode = mode;
      args.progress = false;
      const std::vector<StepProfile> q = steps_of(cli::quantize_for_cli(fp32, path, args).graph);
      std::vector<int> in_fp32(f.size()), in_int8(q.size());
      for (const CoFusionGroup& g : co_fusion_groups(f, q)) {
        EXPECT_FALSE(g.fp32.empty() || g.int8.empty()) << describe(g, f, q);
        for (size_t i : g.fp32) ++in_fp32[i];
        for (size_t i : g.int8) ++in_int8[i];
      }
      EXPECT_EQ(std::count(in_fp32.begin(), in_fp32.end(), 1), std::ptrdiff_t(f.size()));
      EXPECT_EQ(std::count(in_int8.begin(), in_int8.end(), 1), std::ptrdiff_t(q.size()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExplainZoo, ::testing::Values("mnasnet0_5", "mobilenet_v3_small", "convnext_mini"));

}  // namespace octet::explain::zoo_test
