// "Where INT8 loses time" on zoo models whose FP32 and INT8 plans fuse differently (MnasNet's
// 1x1 + depthwise pairs and residual convs, MobileNetV3's squeeze-excitation blocks, ConvNeXt's
// float islands between a quantize and a dequantize): every row has both times, the sums of
// the steps it names, and a reason. Registered only when a zoo was exported at configure time
// (tests/explain/CMakeLists.txt), like the zoo parity tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "kernels/isa.h"
#include "tools/explain/explain.h"

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

INSTANTIATE_TEST_SUITE_P(Models, ExplainZoo, ::testing::Values("mnasnet0_5", "mobilenet_v3_small", "convnext_mini"));

}  // namespace octet::explain::zoo_test
