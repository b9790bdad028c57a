// `octet quantize --mode dynamic`, `octet eval --precision dynamic|all` and the dynamic split of
// `octet run --profile`, through the CLI as a user runs them, on the bundled TinyNet.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/util/cli_runner.h"
#include "tests/util/ort_oracle.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using octet::testing::run_cli;

const fs::path kSource = OCTET_SOURCE_DIR;
const fs::path kTinyNet = kSource / "models" / "tinynet.onnx";

bool have_fashion_mnist() { return fs::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"); }

struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "octet-dynamic-cli-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~ScratchDir() { fs::remove_all(path); }
};

json parse_json(const std::string& out) {
  try {
    return json::parse(out);
  } catch (const json::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << out;
    return json();
  }
}

// No calibration data is read: the dynamic export needs none.
TEST(QuantizeDynamic, WritesConvIntegerModelThatOctetFuses) {
  ScratchDir dir;
  const fs::path out = dir.path / "tinynet_dynamic.onnx";
  auto r = run_cli("quantize " + kTinyNet.string() + " --mode dynamic -o " + out.string() + " --json --no-progress", false);
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = parse_json(r.output);
  EXPECT_EQ(j["calibration"]["mode"], "dynamic");
  EXPECT_EQ(j["calibration"]["weights"], "int8 symmetric per tensor");
  EXPECT_EQ(j["calibration"]["images"], 0);
  EXPECT_GT(j["octet_int8_ops"].value("ConvIntegerToFloat", 0), 30) << r.output;
  EXPECT_EQ(j["octet_int8_ops"].value("MatMulIntegerToFloat", 0), 1) << r.output;
  EXPECT_LT(j["int8_bytes"].get<int64_t>(), j["fp32_bytes"].get<int64_t>() / 2);

  auto info = run_cli("info " + out.string() + " --kernels", false);
  ASSERT_EQ(info.status, 0);
  EXPECT_NE(info.output.find("ConvInteger "), std::string::npos) << "the file holds ConvInteger";
  EXPECT_NE(info.output.find("DynamicQuantizeLinear"), std::string::npos);
  EXPECT_EQ(info.output.find("[scalar]"), std::string::npos) << "a dynamic step runs a scalar kernel:\n" << info.output;

  auto per_channel = run_cli("quantize " + kTinyNet.string() + " --mode dynamic --per-channel -o " +
                                 (dir.path / "pc.onnx").string() + " --json --no-progress",
                             false);
  ASSERT_EQ(per_channel.status, 0) << per_channel.output;
  EXPECT_EQ(parse_json(per_channel.output)["calibration"]["weights"], "int8 symmetric per channel");
}

TEST(QuantizeDynamic, BadOptionsFailCleanly) {
  ScratchDir dir;
  const fs::path out = dir.path / "out.onnx";
  const std::string model = kTinyNet.string();
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {"quantize " + model + " -o " + out.string() + " --mode sideways", "--mode must be static or dynamic"},
      {"quantize " + model + " -o " + out.string() + " --per-channel", "--per-channel is for --mode dynamic"},
      {"quantize " + model + " -o " + out.string() + " --mode dynamic --per-tensor", "--per-tensor is for --mode static"},
      {"quantize " + model + " -o " + out.string() + " --mode dynamic --act int8", "uint8 activations"},
      {"eval " + model + " --precision all --mode dynamic --limit 4", "already has a dynamic column"},
      {"eval " + model + " --precision half --limit 4", "fp32, int8, dynamic, both or all"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args + " --no-progress", true);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("octet: error: ", 0), 0u) << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

// FP32, static INT8 and dynamic INT8 side by side, each checked against ONNX Runtime on the
// same file: the dynamic model agrees on every top-1 and its speed is reported.
TEST(QuantizeDynamic, EvalAllComparesThreePrecisionsWithOrt) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";
  if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto r = run_cli("eval " + kTinyNet.string() +
                       " --precision all --calib-count 64 --limit 200 --latency-images 5 --compare-ort --json --no-progress",
                   false);
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = parse_json(r.output);
  for (const char* section : {"fp32", "int8", "dynamic"}) {
    ASSERT_TRUE(j.contains(section)) << section;
    EXPECT_GT(j[section]["octet"]["accuracy"]["top1"].get<double>(), 0.85) << section;
    EXPECT_EQ(j[section]["agreement"]["same_top1"], j[section]["agreement"]["images"]) << section;
  }
  EXPECT_LT(j["dynamic"]["bytes"].get<int64_t>(), j["file_bytes"].get<int64_t>() / 2);
  EXPECT_EQ(j["dynamic_calibration"]["mode"], "dynamic");

  auto text = run_cli("eval " + kTinyNet.string() + " --precision dynamic --limit 50 --latency-images 5 --no-progress",
                      false);
  ASSERT_EQ(text.status, 0) << text.output;
  EXPECT_NE(text.output.find("top-1"), std::string::npos) << text.output;
}

// The profile splits each dynamic layer into the range pass, the quantize pass and the GEMM.
TEST(QuantizeDynamic, ProfileShowsWhereTheDynamicTimeGoes) {
  ScratchDir dir;
  const fs::path out = dir.path / "d.onnx";
  ASSERT_EQ(run_cli("quantize " + kTinyNet.string() + " --mode dynamic -o " + out.string() + " --no-progress", false).status, 0);
  auto r = run_cli("run " + out.string() + " --random --profile --profile-runs 5", false);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("dynamic quantization by layer"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("all layers"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/stem/stem.0/Conv_quant"), std::string::npos) << r.output;
}

}  // namespace
