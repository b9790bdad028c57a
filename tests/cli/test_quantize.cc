// `octet quantize` and `octet eval --precision int8|both` end to end, through the CLI as a
// user runs them. The INT8 model octet writes is checked against ONNX Runtime running the
// same file, and its predictions against the labels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"
#include "io/datasets/dataset.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using octet::testing::run_cli;

const fs::path kSource = OCTET_SOURCE_DIR;
const fs::path kTinyNet = kSource / "models" / "tinynet.onnx";
const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

bool have_fashion_mnist() { return fs::exists(fs::path(kFashionDir) / "train-images-idx3-ubyte.gz"); }

// A private folder for one test's files, removed afterwards.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "octet-quantize-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~ScratchDir() { fs::remove_all(path); }
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Fashion-MNIST test images normalized as models/tinynet.json says, written out here from the
// card's numbers rather than through the CLI's preprocessing.
octet::ir::TensorData tinynet_inputs(const octet::data::Dataset& d) {
  std::ifstream f(kSource / "models" / "tinynet.json");
  const json card = json::parse(f);
  const float scale = card["input"]["scale"], mean = card["input"]["mean"][0], stddev = card["input"]["std"][0];
  auto t = octet::ir::TensorData::make(octet::ir::DType::f32, {d.count(), 1, 28, 28});
  for (size_t i = 0; i < d.pixels.size(); ++i) t.as<float>()[i] = (float(d.pixels[i]) * scale - mean) / stddev;
  return t;
}

int argmax(const float* row, int n) { return int(std::max_element(row, row + n) - row); }

// One INT8 TinyNet for the whole suite (calibration runs the FP32 reference kernels).
class Quantize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_fashion_mnist() || !fs::exists(kTinyNet)) return;
    scratch_ = new ScratchDir;
    qdq_ = scratch_->path / "tinynet_int8.onnx";
    auto r = run_cli("quantize " + kTinyNet.string() + " -o " + qdq_.string() + " --calib-count 64 --json --no-progress",
                     false);
    quantize_status_ = r.status;
    quantize_output_ = r.output;
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  void SetUp() override {
    if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";
    if (!fs::exists(kTinyNet)) GTEST_SKIP() << "models/tinynet.onnx is absent";
    ASSERT_EQ(quantize_status_, 0) << quantize_output_;
  }

  static inline ScratchDir* scratch_ = nullptr;
  static inline fs::path qdq_;
  static inline int quantize_status_ = -1;
  static inline std::string quantize_output_;
};

TEST_F(Quantize, ReportsWhatItDid) {
  const json j = json::parse(quantize_output_);
  EXPECT_EQ(j["calibration"]["images"], 64);
  EXPECT_EQ(j["calibration"]["method"], "minmax");
  EXPECT_NE(j["calibration"]["data"].get<std::string>().find("train"), std::string::npos) << j["calibration"]["data"];
  EXPECT_GT(j["calibration"]["quantized"].size(), 30u);
  EXPECT_EQ(j["int8_bytes"].get<int64_t>(), int64_t(fs::file_size(qdq_)));
  EXPECT_LT(j["int8_bytes"].get<int64_t>(), j["fp32_bytes"].get<int64_t>());
  EXPECT_GT(j["octet_int8_ops"]["QLinearConv"].get<int>(), 0);
}

TEST_F(Quantize, WritesAQdqModelThatOctetAndOnnxRuntimeAgreeOn) {
  if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  // The file is standard QDQ: Q/DQ pairs, and the logits come out of a DequantizeLinear.
  const octet::ir::Graph g = octet::loader::load_onnx(qdq_.string());
  int q = 0, dq = 0;
  float logits_scale = 0;
  for (const auto& n : g.nodes) {
    q += n.op == "QuantizeLinear", dq += n.op == "DequantizeLinear";
    if (n.op == "DequantizeLinear" && n.outputs[0] == g.outputs[0])
      logits_scale = g.value(n.inputs[1]).constant->as<float>()[0];
  }
  EXPECT_GT(q, 20);
  EXPECT_GT(dq, q);
  ASSERT_GT(logits_scale, 0) << "the output is not written by a DequantizeLinear";

  octet::data::LoadOptions lo;
  lo.limit = 500;
  const auto d = octet::data::load_dataset("fashion-mnist:test", lo);
  const auto inputs = tinynet_inputs(d);
  octet::Session session = octet::Session::load(qdq_.string());
  const auto ours = session.run({inputs})[0];

  octet::npy::Array in;
  in.dtype = octet::npy::DType::f32;
  in.shape = inputs.dims;
  in.data = inputs.bytes;
  const auto ort = octet::testing::run_ort(qdq_.string(), {{session.inputs()[0].name, in}});
  const octet::npy::Array& theirs = ort.at(session.outputs()[0].name);
  ASSERT_EQ(theirs.count(), ours.count());

  int same = 0, ort_correct = 0;
  for (int64_t i = 0; i < d.count(); ++i) {
    const int a = argmax(ours.as<float>() + i * 10, 10), b = argmax(theirs.as<float>() + i * 10, 10);
    same += a == b;
    ort_correct += b == d.labels[size_t(i)];
  }
  // Every logit of the 500 images, and those of the first 100 as `octet eval` compares them below.
  int64_t identical = 0, identical_100 = 0;
  double max_diff = 0, max_diff_100 = 0;
  for (int64_t i = 0; i < ours.count(); ++i) {
    const double diff = std::abs(double(ours.as<float>()[i]) - double(theirs.as<float>()[i]));
    identical += diff == 0;
    max_diff = std::max(max_diff, diff);
    if (i < 100 * 10) identical_100 += diff == 0, max_diff_100 = std::max(max_diff_100, diff);
  }
  const int64_t max_lsb = std::llround(max_diff / logits_scale);
  std::printf("octet INT8 vs ORT INT8: top-1 agreement %d/500, ORT INT8 top-1 %d/500; logits: %lld/%lld identical, "
              "max %lld LSB\n", same, ort_correct, (long long)identical, (long long)ours.count(), (long long)max_lsb);
  // README / docs/quantization.md: with uint8 activations octet runs the QDQ file bit-identically to ORT.
  EXPECT_EQ(same, 500);
  EXPECT_EQ(identical, ours.count());
  EXPECT_EQ(max_lsb, 0);
  // 64 calibration images are enough for TinyNet to stay close to its FP32 accuracy (93.8% on
  // these 500 images).
  EXPECT_GE(ort_correct, 450);

  // `octet eval` on the same file (already quantized: int8 means the file itself) reports the
  // same comparison.
  auto r = run_cli("eval " + qdq_.string() + " --data fashion-mnist:test --limit 100 --batch 100 --latency-images 3 "
                   "--compare-ort --json --no-progress", false);
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_EQ(j["precision"], "int8");
  EXPECT_EQ(j["int8_model"]["source"], "model");
  const json& l = j["int8_logits"];
  ASSERT_TRUE(l.contains("identical")) << l;
  EXPECT_FALSE(l["added_as_output"].get<bool>());
  EXPECT_EQ(l["values"], 1000);
  EXPECT_EQ(l["identical"].get<int64_t>(), identical_100) << l;
  EXPECT_EQ(l["identical"].get<int64_t>(), 1000) << l;
  EXPECT_EQ(l["max_lsb"].get<int64_t>(), std::llround(max_diff_100 / logits_scale)) << l;
  EXPECT_EQ(l["max_lsb"].get<int64_t>(), 0) << l;
  EXPECT_FLOAT_EQ(l["scale"].get<float>(), logits_scale);
}

// Every failure exits 1 with one line on stderr and leaves nothing at -o; an existing file
// there stays as it was.
TEST_F(Quantize, ErrorsLeaveNoOutput) {
  ScratchDir dir;
  const fs::path out = dir.path / "out.onnx";
  const fs::path kept = dir.path / "kept.onnx";
  { std::ofstream(kept) << "previous contents"; }
  const std::string model = kTinyNet.string();
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {"quantize " + model + " -o " + out.string() + " --calib fashion-mnist:test", "test split"},
      {"quantize " + model + " -o " + out.string() + " --calib fashion-mnist", "test split"},
      {"quantize " + model + " -o " + out.string() + " --calib cifar10:/nowhere/test_batch.bin", "test split"},
      {"quantize " + model + " -o " + out.string() + " --calib-count 0", "empty"},
      {"quantize " + model + " -o " + out.string() + " --method bogus", "unknown calibration method"},
      {"quantize " + model + " -o " + out.string() + " --act int4", "--act"},
      {"quantize " + qdq_.string() + " -o " + out.string(), "already quantized"},
      {"quantize " + qdq_.string() + " -o " + kept.string(), "already quantized"},
      {"eval " + model + " --precision int8 --calib fashion-mnist:test --limit 10", "test split"},
      {"eval " + qdq_.string() + " --precision both --limit 10", "no FP32 original"},
      {"eval " + model + " --precision int4 --limit 10", "--precision"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args + " --no-progress", true);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("octet: error: ", 0), 0u) << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args;
    EXPECT_EQ(read_file(kept), "previous contents") << c.args;
  }
  // Test images are accepted when asked for explicitly.
  auto r = run_cli("quantize " + model + " -o " + out.string() +
                   " --calib fashion-mnist:test --allow-test-calibration --calib-count 8 --no-progress", false);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(out));
  // Only the final file is there, no temporary beside it ...
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 3);
  // ... and the FP32 model's card beside it, so `octet eval out.onnx` preprocesses the same way.
  std::ifstream card(dir.path / "out.json");
  const json c = json::parse(card);
  EXPECT_EQ(c["model"], "out.onnx");
  EXPECT_EQ(c["input"], json::parse(std::ifstream(kSource / "models" / "tinynet.json"))["input"]);
}

// A model with nothing octet can quantize fails after calibration, leaving -o untouched.
TEST_F(Quantize, NothingToQuantize) {
  ScratchDir dir;
  octet::testing::OnnxBuilder b(13);
  auto x = b.input("x", {-1, 1, 28, 28});
  b.output(b.node("Relu", {x}));
  const fs::path model = dir.path / "relu.onnx", out = dir.path / "out.onnx";
  b.save(model.string());
  { std::ofstream(out) << "previous contents"; }
  auto r = run_cli("quantize " + model.string() + " -o " + out.string() +
                   " --calib fashion-mnist:train --calib-count 8 --no-progress", true);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("nothing to quantize"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(out), "previous contents");
}

TEST_F(Quantize, EvalBothPrintsFp32AndInt8SideBySide) {
  const std::string common = "eval " + kTinyNet.string() + " --precision both --calib-count 64 --limit 100 "
                             "--latency-images 3 --no-progress";
  auto text = run_cli(common, false);
  ASSERT_EQ(text.status, 0) << text.output;
  for (const char* s : {"octet FP32", "octet INT8", "top-1 drop", "model size", "INT8 speed-up, batch 1",
                        "P50 ms/image, batch 64"})
    EXPECT_NE(text.output.find(s), std::string::npos) << s << "\n" << text.output;

  if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  // The child's temporary files go to a folder of this test's own, checked empty afterwards.
  ScratchDir tmp;
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  setenv("TMPDIR", tmp.path.c_str(), 1);
  auto r = run_cli(common + " --compare-ort --json", false);
  if (old_tmpdir) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  EXPECT_TRUE(fs::is_empty(tmp.path)) << "a temporary file was left in " << tmp.path;
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_EQ(j["precision"], "both");
  EXPECT_EQ(j["int8_model"]["source"], "quantized in memory");
  EXPECT_EQ(j["calibration"]["images"], 64);
  for (const char* p : {"fp32", "int8"}) {
    EXPECT_EQ(j[p]["octet"]["accuracy"]["labelled"], 100) << p;
    EXPECT_EQ(j[p]["ort"]["accuracy"]["labelled"], 100) << p;
    EXPECT_EQ(j[p]["agreement"]["same_top1"].get<int64_t>(), 100) << p;
  }
  EXPECT_LT(j["int8_bytes"].get<int64_t>(), j["file_bytes"].get<int64_t>());
  // The INT8 model quantized in memory, written and run by ORT: every logit identical.
  const json& l = j["int8"]["int8_logits"];
  EXPECT_EQ(l["values"], 1000) << l;
  EXPECT_EQ(l["identical"].get<int64_t>(), 1000) << l;
  EXPECT_EQ(l["max_lsb"].get<int64_t>(), 0) << l;
}

// When a float op (here Softmax, kept in float) computes the output from the final
// DequantizeLinear, eval compares that DequantizeLinear's tensor, adding it as an output on both
// sides. Quantized (the default, as ORT's tool does it), the Softmax's own output DequantizeLinear
// is the model output and is compared as it is: probabilities in steps of 1/256.
TEST_F(Quantize, ComparesTheLogitsUnderASoftmaxTail) {
  if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  ScratchDir dir;
  octet::testing::OnnxBuilder b(13);
  auto x = b.input("x", {-1, 1, 28, 28});
  auto w = b.random_normal_init("w", {8, 1, 3, 3}, 0.0f, 0.01f);
  auto bias = b.random_normal_init("b", {8}, 0.0f, 0.1f);
  auto c = b.node("Relu", {b.node("Conv", {x, w, bias}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})});
  auto flat = b.node("Flatten", {b.node("GlobalAveragePool", {c})});
  auto fc = b.node("Gemm", {flat, b.random_normal_init("fc", {10, 8}, 0.0f, 0.5f), b.random_normal_init("fcb", {10})},
                   {{"transB", 1}});
  b.output(b.node("Softmax", {fc}, {{"axis", 1}}));
  const fs::path model = dir.path / "softmax_tail.onnx";
  b.save(model.string());
  for (bool keep_float : {true, false}) {
    std::string command = "eval " + model.string();
    command += " --precision int8 --data fashion-mnist:test --limit 100 --calib fashion-mnist:train --calib-count 32 "
               "--latency-images 3 --compare-ort --json --no-progress";
    if (keep_float) command += " --keep-float Softmax";
    auto r = run_cli(command, false);
    ASSERT_EQ(r.status, 0) << r.output;
    const json j = json::parse(r.output);
    const json& l = j["int8_logits"];
    ASSERT_TRUE(l.contains("identical_share")) << l;
    EXPECT_EQ(l["added_as_output"].get<bool>(), keep_float) << l;
    EXPECT_EQ(l["values"], 1000);
    EXPECT_EQ(l["identical_share"].get<double>(), 1.0) << l;
    EXPECT_EQ(l["max_lsb"].get<int64_t>(), 0) << l;
    if (!keep_float) {
      EXPECT_FLOAT_EQ(l["scale"].get<float>(), 1.0f / 256.0f) << l;
    }
    std::printf("softmax tail%s: %s\n", keep_float ? " (kept in float)" : "", l.dump().c_str());
  }
  // Quantized, the tail's QLinearSoftmax runs on its microkernel at any SIMD level: no scalar
  // step, no "their time measures octet" warning.
  const fs::path int8 = dir.path / "softmax_tail_int8.onnx";
  auto q = run_cli("quantize " + model.string() + " -o " + int8.string() +
                       " --calib fashion-mnist:train --calib-count 32 --no-progress",
                   true);
  ASSERT_EQ(q.status, 0) << q.output;
  auto ran = run_cli("run " + int8.string() + " --random", true);
  ASSERT_EQ(ran.status, 0) << ran.output;
  EXPECT_EQ(ran.output.find("scalar reference kernels"), std::string::npos) << ran.output;
  auto info = run_cli("info " + int8.string() + " --kernels", true);
  if (octet::kernels::active_isa() != octet::kernels::Isa::scalar) {
    EXPECT_EQ(info.output.find("[scalar]"), std::string::npos) << info.output;
    EXPECT_NE(info.output.find("u8_softmax__"), std::string::npos) << info.output;
  }
}

}  // namespace
