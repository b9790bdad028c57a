// The measuring half of `octet explain` (apps/explain/): the per-tensor accuracy finds a layer
// deliberately quantized with a wrong scale, the JSON's numbers agree with each other, and the
// recommendations say only what the numbers show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "calib/quantize.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/dataset.h"
#include "apps/explain/accuracy.h"
#include "apps/explain/advice.h"
#include "apps/explain/explain.h"
#include "io/npy.h"
#include "io/tensor_io.h"

namespace octet::explain {
namespace {

using json = nlohmann::json;
using testing::OnnxBuilder;

// Three 3x3 convs with Relu on 8 channels: enough layers for an error to be inherited.
ir::Graph three_convs() {
  OnnxBuilder b(13);
  std::string x = b.input("x", {-1, 4, 12, 12});
  int c_in = 4;
  for (int layer = 0; layer < 3; ++layer) {
    auto w = b.random_normal_init("", {8, c_in, 3, 3}, 0.0f, 0.3f);
    auto bias = b.random_normal_init("", {8}, 0.0f, 0.1f);
    x = b.node("Conv", {x, w, bias}, {{"pads", {1, 1, 1, 1}}}, "conv" + std::to_string(layer));
    x = b.node("Relu", {x}, {}, "relu" + std::to_string(layer));
    c_in = 8;
  }
  b.output(x);
  return loader::load_onnx_bytes(b.serialize(), "three_convs");
}

ir::TensorData images(int64_t n, uint32_t seed) {
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, {n, 4, 12, 12});
  const auto v = testing::random_uniform(size_t(t.count()), seed, -1.0f, 1.0f);
  std::copy(v.begin(), v.end(), t.as<float>());
  return t;
}

// The QuantizeLinear that quantizes `tensor` gets a scale `factor` times smaller: most of the
// tensor's values clip.
void shrink_scale(ir::Graph& qdq, const std::string& tensor, float factor) {
  for (const ir::Node& n : qdq.nodes) {
    // octet's quantizer quantizes a producer's output under the name T_float.
    if (n.op != "QuantizeLinear" || (n.input(0) != tensor && n.input(0) != tensor + "_float")) continue;
    ir::Value& scale = qdq.value(n.input(1));
    ASSERT_TRUE(scale.constant && scale.constant->count() == 1);
    scale.constant->as<float>()[0] /= factor;
    // The DequantizeLinear reading it must agree, or the QDQ pair no longer fuses.
    for (ir::Node& d : qdq.nodes)
      if (d.op == "DequantizeLinear" && d.input(0) == n.outputs[0] && d.input(1) != n.input(1))
        qdq.value(d.input(1)).constant->as<float>()[0] /= factor;
    return;
  }
  FAIL() << "no QuantizeLinear of " << tensor;
}

TEST(ExplainAccuracy, AMisScaledLayerIsTheCulprit) {
  const ir::Graph fp32 = three_convs();
  const auto calib_batches = std::vector<ir::TensorData>{images(16, 1)};
  calib::QuantizeOptions qo;
  ir::Graph qdq = calib::quantize_model(fp32, calib_batches, {}, qo);

  AccuracyOptions ao;
  ao.batch = 8;
  const AccuracyResult clean = measure_accuracy(fp32, qdq, images(16, 2), ao);
  ASSERT_GE(clean.tensors.size(), 3u);
  for (const auto& t : clean.tensors) {
    std::printf("%-24s SQNR %6.1f dB drop %5.1f dB clipped %.4f%%\n", t.name.c_str(), t.sqnr_db().value_or(-1),
                t.sqnr_drop_db.value_or(-1), 100.0 * double(t.clipped) / double(std::max<int64_t>(1, t.values)));
    EXPECT_GT(t.values, 0) << t.name << " was never compared";
    EXPECT_FALSE(t.culprit) << t.name << " flagged in the correctly calibrated model";
    ASSERT_TRUE(t.sqnr_db()) << t.name;
    EXPECT_GT(*t.sqnr_db(), 20.0) << t.name;
  }

  // The middle layer's output quantized 20x too finely: it clips, and the error starts there.
  const std::string victim = clean.tensors[2].name;
  shrink_scale(qdq, victim, 20.0f);
  const AccuracyResult broken = measure_accuracy(fp32, qdq, images(16, 2), ao);
  int culprits = 0;
  for (const auto& t : broken.tensors) {
    culprits += t.culprit;
    if (t.name == victim) {
      EXPECT_TRUE(t.culprit) << victim << " SQNR " << t.sqnr_db().value_or(-1) << " drop "
                             << t.sqnr_drop_db.value_or(-1);
      EXPECT_GT(double(t.clipped) / double(t.values), 0.3);
      EXPECT_EQ(t.methods.count("minmax"), 1u);
      EXPECT_EQ(t.methods.count("percentile"), 1u);
    }
  }
  EXPECT_EQ(culprits, 1);
  // The damage reaches the output: the broken model's scores are further from FP32's than the
  // clean model's, in SQNR and in top-1 agreement.
  const double clean_top1 = top1_agreement(clean.fp32, clean.int8), broken_top1 = top1_agreement(broken.fp32, broken.int8);
  const auto clean_sqnr = scores_sqnr_db(clean.fp32, clean.int8), broken_sqnr = scores_sqnr_db(broken.fp32, broken.int8);
  ASSERT_TRUE(clean_sqnr && broken_sqnr);
  std::printf("output: top-1 agreement with FP32 %.4f clean, %.4f broken; SQNR %.1f dB clean, %.1f dB broken\n",
              clean_top1, broken_top1, *clean_sqnr, *broken_sqnr);
  EXPECT_LT(*broken_sqnr, *clean_sqnr - 10.0);
  EXPECT_EQ(clean_top1, 1.0);  // 16 of 16 images
  EXPECT_LT(broken_top1, 0.5);
}

TEST(ExplainAccuracy, ExactValuesHaveNoSqnr) {
  TensorAccuracy t;
  t.signal = 4.0;
  t.values = 10;
  EXPECT_FALSE(t.sqnr_db());
  t.noise = 0.04;
  ASSERT_TRUE(t.sqnr_db());
  EXPECT_NEAR(*t.sqnr_db(), 20.0, 1e-9);
}

// A synthetic report: the advice follows the numbers, not a template.
json report_with(double fp32_ms, double static_ms, double dynamic_ms, const std::string& level) {
  json r;
  r["options"] = {{"levels", {"scalar", level}}};
  r["speed"] = json::array();
  for (auto [p, ms] : {std::pair{"fp32", fp32_ms}, {"int8_static", static_ms}, {"int8_dynamic", dynamic_ms}})
    r["speed"].push_back(
        {{"engine", "octet"}, {"precision", p}, {"isa", level}, {"batch", 1}, {"threads", 1}, {"ms_per_image", ms}});
  r["profiles"] = json::array();
  return r;
}

TEST(ExplainAdvice, RecommendsOnlyWhatTheNumbersShow) {
  auto ids = [](const json& recs) {
    std::set<std::string> s;
    for (const auto& r : recs) s.insert(r["id"].get<std::string>());
    return s;
  };
  // INT8 slower than FP32 on a level without a dot product, dynamic far slower than static.
  const json slow = report_with(1.0, 1.3, 9.0, "avx2");
  const auto r1 = ids(recommendations(slow));
  EXPECT_TRUE(r1.count("static_over_dynamic"));
  EXPECT_TRUE(r1.count("fp32_faster_int8_static"));
  const std::string v1 = verdict(slow);
  EXPECT_NE(v1.find("1.30x slower"), std::string::npos) << v1;
  EXPECT_NE(v1.find("no integer dot-product"), std::string::npos) << v1;

  // INT8 faster, dynamic close to static: neither of those sentences.
  const json fast = report_with(1.0, 0.5, 0.55, "avx512vnni");
  const auto r2 = ids(recommendations(fast));
  EXPECT_FALSE(r2.count("static_over_dynamic"));
  EXPECT_FALSE(r2.count("fp32_faster_int8_static"));
  EXPECT_NE(verdict(fast).find("2.00x faster"), std::string::npos) << verdict(fast);
}

// The dynamic profile's DynamicQuantizeLinear steps and the range passes run for them by their
// producers: counted and summed into the verdict.
TEST(ExplainAdvice, VerdictCountsTheDynamicQuantizationAndItsShare) {
  json r = report_with(1.0, 0.8, 1.2, "avx2");
  json steps = json::array();
  steps.push_back({{"op", "DynamicQuantizeLinear"}, {"us", 30.0}, {"range_us", 10.0}});
  steps.push_back({{"op", "ConvIntegerToFloat"}, {"us", 500.0}});
  steps.push_back({{"op", "Mul"}, {"us", 100.0}, {"range_us", 40.0}});
  steps.push_back({{"op", "DynamicQuantizeLinear"}, {"us", 20.0}, {"range_us", 0.0}});
  steps.push_back({{"op", "Relu"}, {"us", 350.0}});
  r["profiles"].push_back({{"precision", "int8_dynamic"}, {"isa", "avx2"}, {"batch", 1}, {"threads", 1},
                           {"total_us", 1000.0}, {"steps", steps}});
  // 2 steps; ranges 10 + 40 us, rounding (30 - 10) + 20 us: 90 of 1000 us.
  const std::string v = verdict(r);
  EXPECT_NE(v.find("quantizes 2 tensor(s) at run time (DynamicQuantizeLinear): 9.0% of its time (0.09 of 1.00 ms "
                   "per image; 0.05 ms finding each tensor's range, 0.04 ms rounding"),
            std::string::npos)
      << v;
  // No dynamic profile at the best level: no such sentence.
  r["profiles"][0]["isa"] = "scalar";
  EXPECT_EQ(verdict(r).find("DynamicQuantizeLinear"), std::string::npos) << verdict(r);
}

// The bundled TinyNet end to end, small: every number of the JSON agrees with the others.
TEST(ExplainModel, TinyNetReportIsConsistent) {
  const std::string model = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";
  ExplainOptions o;
  o.model = model;
  o.data = "none";
  o.mode = "both";
  o.batches = {1, 4};
  o.budget = {2, 5, 0.0};
  o.progress = false;
  o.calib.spec = "npy:";  // replaced below: calibrate on random images written to a file
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "octet_explain_test";
  std::filesystem::create_directories(dir);
  {
    // 16 images in the model's input range, as a float32 npy the calibration reads as they are.
    ir::TensorData calib = ir::TensorData::make(ir::DType::f32, {16, 1, 28, 28});
    const auto v = testing::random_uniform(size_t(calib.count()), 3, -0.8f, 2.0f);
    std::copy(v.begin(), v.end(), calib.as<float>());
    npy::write((dir / "calib.npy").string(), to_npy(calib));
  }
  o.calib.spec = "npy:" + (dir / "calib.npy").string();
  o.calib.progress = false;
  const json r = explain_model(o);

  const auto levels = kernels::runnable_isas();
  // Levels x precisions x batches at 1 thread, and the best level again on every core when more.
  const size_t timed = levels.size() + r["options"]["thread_counts"].size() - 1;
  EXPECT_EQ(r["speed"].size(), timed * 3 * 2);
  for (const auto& row : r["speed"]) EXPECT_GT(row["ms_per_image"].get<double>(), 0.0) << row.dump();
  EXPECT_EQ(r["speedups"].size(), timed * 2 * 2);
  for (const auto& s : r["speedups"]) {
    double fp32 = 0, int8 = 0;
    for (const auto& row : r["speed"]) {
      if (row["isa"] != s["isa"] || row["batch"] != s["batch"] || row["threads"] != s["threads"]) continue;
      if (row["precision"] == "fp32") fp32 = row["ms_per_image"];
      if (row["precision"] == s["precision"]) int8 = row["ms_per_image"];
    }
    EXPECT_NEAR(s["speedup"].get<double>(), fp32 / int8, 1e-9 * fp32 / int8);
  }
  ASSERT_EQ(r["profiles"].size(), levels.size() * 3);
  for (const auto& p : r["profiles"]) {
    double steps = 0, categories = 0;
    for (const auto& s : p["steps"]) steps += s["us"].get<double>();
    for (const auto& [name, us] : p["categories"].items()) categories += us.get<double>();
    const double total = p["total_us"];
    EXPECT_NEAR(steps, total, 1e-6 * total) << p["precision"] << " at " << p["isa"];
    EXPECT_NEAR(categories, total, 1e-6 * total) << p["precision"] << " at " << p["isa"];
    if (p["precision"] == "int8_dynamic") {
      EXPECT_GT(p["categories"]["dynamic_range"].get<double>(), 0.0);
    }
    if (p["isa"] != "scalar") {
      for (const auto& s : p["steps"]) EXPECT_FALSE(s["scalar"].get<bool>()) << s.dump();
    }
  }
  for (const auto& d : r["differences"]) {
    EXPECT_GT(d["delta_us"].get<double>(), 0.0);
    EXPECT_FALSE(d["reason"].get<std::string>().empty());
  }
  EXPECT_FALSE(r.contains("accuracy"));
  EXPECT_EQ(r["accuracy_missing"], "--data none");
  EXPECT_FALSE(r["verdict"].get<std::string>().empty());
  int dynamic_quantize_steps = 0;
  for (const auto& p : r["profiles"])
    if (p["precision"] == "int8_dynamic" && p["isa"] == kernels::isa_name(levels.back()))
      for (const auto& s : p["steps"]) dynamic_quantize_steps += s["op"] == "DynamicQuantizeLinear";
  EXPECT_GT(dynamic_quantize_steps, 0);
  EXPECT_NE(r["verdict"].get<std::string>().find(
                "quantizes " + std::to_string(dynamic_quantize_steps) + " tensor(s) at run time"),
            std::string::npos)
      << r["verdict"];
  EXPECT_GT(r["model"]["macs_per_image"].get<int64_t>(), 0);
  std::filesystem::remove_all(dir);
}

// README: "On the MLPerf ResNet8 all 17 quantized tensors' codes are identical to ORT's on 32
// images" (`octet explain --compare-ort`, which adds every quantized tensor as an ORT output):
// the model of ../shared calibrated on the first 1000 images of calib_subset.bin, the first 32
// test images.
TEST(ExplainOrtParity, MlperfResNet8EveryQuantizedTensorIdenticalToOrt) {
  if (std::string why = testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  namespace fs = std::filesystem;
  const fs::path shared = fs::path(OCTET_SOURCE_DIR) / ".." / "shared";
  const fs::path model = shared / "models" / "resnet8_cifar10_fp32.onnx";
  const fs::path calib = shared / "data" / "cifar10" / "calib_subset.bin";
  const fs::path test = shared / "data" / "cifar10" / "test_subset.bin";
  for (const fs::path& p : {model, calib, test})
    if (!fs::exists(p)) GTEST_SKIP() << p.string() << " is absent (../shared, next to the project, holds it)";
  const ir::Graph fp32 = loader::load_onnx(model.string());
  const TensorSpec input = cli::image_input(fp32, model.string());
  auto load = [&](const fs::path& file, int64_t limit) {
    data::LoadOptions lo;
    lo.limit = limit;
    return cli::make_inputs(data::load_dataset("cifar10:" + file.string(), lo), ModelCard{}, input);
  };
  // The sanitizer stage (OCTET_PARITY_LIMIT) calibrates on fewer images: the reference kernels
  // run there at a fraction of the speed, and every code must match whatever the calibration.
  const char* limit = std::getenv("OCTET_PARITY_LIMIT");
  const int64_t calib_count = limit && std::atoll(limit) > 0 ? std::min<int64_t>(1000, std::atoll(limit)) : 1000;
  const ir::Graph qdq = calib::quantize_model(fp32, cli::split_batches(load(calib, calib_count), 64), {}, {});
  AccuracyOptions ao;
  ao.isa = kernels::active_isa();
  int tensors = 0;
  for (const auto& c : compare_with_ort(qdq, load(test, 32), ao)) {
    if (c.values == 0) continue;
    ++tensors;
    EXPECT_EQ(c.identical, c.values) << c.name << " (" << c.quantized << "): max " << c.max_lsb << " LSB";
  }
  std::printf("%d quantized tensors compared with ORT on 32 images\n", tensors);
  EXPECT_EQ(tensors, 17);
}

}  // namespace
}  // namespace octet::explain
