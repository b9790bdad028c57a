#include "tests/explain/sample_report.h"

#include "apps/explain/atlas.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace octet::explain::testing {
namespace {

using json = nlohmann::json;

struct Step {
  const char* node;
  const char* op;
  const char* category;
  double share;  // of the profile's total
  int64_t macs;
};

// Twelve steps of a small MobileNet-like classifier, per precision.
const std::vector<Step>& steps_of(const std::string& precision) {
  static const std::vector<Step> fp32{{"/stem/Conv", "Conv", "dense", 0.16, 112896},
                                      {"/stem/Relu", "Relu", "elementwise", 0.03, 0},
                                      {"/b1/dw/Conv", "Conv", "depthwise", 0.08, 28224},
                                      {"/b1/pw/Conv", "Conv", "dense", 0.15, 401408},
                                      {"/b1/Add", "Add", "elementwise", 0.03, 0},
                                      {"/b2/dw/Conv", "Conv", "depthwise", 0.07, 14112},
                                      {"/b2/pw/Conv", "Conv", "dense", 0.2, 802816},
                                      {"/b2/Add", "Add", "elementwise", 0.03, 0},
                                      {"/pool/GlobalAveragePool", "GlobalAveragePool", "elementwise", 0.04, 0},
                                      {"/head/Flatten", "Flatten", "layout", 0.02, 0},
                                      {"/head/Gemm", "Gemm", "dense", 0.17, 1280},
                                      {"/head/Softmax", "Softmax", "elementwise", 0.02, 0}};
  static const std::vector<Step> int8_static{
      {"/input/QuantizeLinear", "QuantizeLinear", "quantize", 0.05, 0},
      {"/stem/Conv", "QLinearConv", "dense", 0.17, 112896},
      {"/b1/dw/Conv", "QLinearConv", "depthwise", 0.12, 28224},
      {"/b1/pw/Conv", "QLinearConv", "dense", 0.14, 401408},
      {"/b1/Add", "QLinearAdd", "elementwise", 0.05, 0},
      {"/b2/dw/Conv", "QLinearConv", "depthwise", 0.1, 14112},
      {"/b2/pw/Conv", "QLinearConv", "dense", 0.18, 802816},
      {"/b2/Add", "QLinearAdd", "elementwise", 0.05, 0},
      {"/pool/GlobalAveragePool", "QLinearGlobalAveragePool", "elementwise", 0.04, 0},
      {"/head/Flatten", "Flatten", "layout", 0.02, 0},
      {"/head/Gemm", "QGemm", "dense", 0.05, 1280},
      {"/output/DequantizeLinear", "DequantizeLinear", "quantize", 0.03, 0}};
  static const std::vector<Step> int8_dynamic{
      {"/stem/DynamicQuantizeLinear", "DynamicQuantizeLinear", "dynamic_range", 0.12, 0},
      {"/stem/Conv", "ConvInteger", "dense", 0.14, 112896},
      {"/stem/Relu", "Relu", "elementwise", 0.03, 0},
      {"/b1/dw/Conv", "Conv", "depthwise", 0.06, 28224},
      {"/b1/DynamicQuantizeLinear", "DynamicQuantizeLinear", "quantize", 0.1, 0},
      {"/b1/pw/Conv", "ConvInteger", "dense", 0.13, 401408},
      {"/b1/Add", "Add", "elementwise", 0.03, 0},
      {"/b2/dw/Conv", "Conv", "depthwise", 0.05, 14112},
      {"/b2/DynamicQuantizeLinear", "DynamicQuantizeLinear", "dynamic_range", 0.1, 0},
      {"/b2/pw/Conv", "ConvInteger", "dense", 0.15, 802816},
      {"/pool/GlobalAveragePool", "GlobalAveragePool", "elementwise", 0.04, 0},
      {"/head/Gemm", "MatMulInteger", "dense", 0.05, 1280}};
  return precision == "fp32" ? fp32 : precision == "int8_static" ? int8_static : int8_dynamic;
}

// ms per image by level (scalar, SIMD, higher SIMD levels each 30% faster), precision and batch: INT8 static wins at
// the SIMD level, dynamic INT8 loses everywhere (its range passes), and batch 16 amortises the per-call costs.
double ms_per_image(size_t level, const std::string& precision, int batch) {
  const double base = precision == "fp32" ? 0.178 : precision == "int8_static" ? 0.118 : 0.251;
  const double scalar = precision == "fp32" ? 5.1 : precision == "int8_static" ? 6.3 : 4.4;
  return base * (level == 0 ? scalar : std::pow(0.7, double(level - 1))) * (batch == 1 ? 1.0 : 0.62);
}

std::string kernel_of(const Step& s, const std::string& isa, const std::string& precision) {
  const std::string cat = s.category;
  if (cat != "dense" && cat != "depthwise") return std::string("elementwise_") + s.op + "__" + isa;
  if (precision == "fp32") return (cat == "dense" ? "f32_igemm_6x16__" : "f32_dwconv_3x3__") + isa;
  return (cat == "dense" ? "qu8s8_igemm_6x16c2__" : "qu8s8_dwconv_3x3__") + isa + (isa == "avx2" ? "_madd16" : "");
}

}  // namespace

json sample_report(const SampleOptions& options) {
  const std::vector<std::string> precisions{"fp32", "int8_static", "int8_dynamic"};
  const std::vector<int> batches{1, 16};
  json r;
  r["schema"] = "octet-explain/1";
  r["created"] = "2026-11-26T10:30:00Z";
  r["model"] = {{"path", "models/tinynet.onnx"},
                {"name", "tinynet"},
                {"inputs", json::array({{{"name", "input"}, {"dims", {-1, 1, 28, 28}}, {"dtype", "float32"}}})},
                {"parameters", 78000},
                {"macs_per_image", 4500000},
                {"size_bytes", {{"fp32", 312000}, {"int8_static", 95000}, {"int8_dynamic", 90000}}}};
  json peaks = json::array();
  for (size_t l = 0; l < options.levels.size(); ++l)
    peaks.push_back(
        {{"isa", options.levels[l]}, {"f32_gflops", l == 0 ? 4.2 : 60.1}, {"int8_gops", l == 0 ? 3.1 : 61.0}});
  r["machine"] = {{"cpu", options.cpu},      {"arch", options.arch},    {"cores", 2},    {"isa_levels", options.levels},
                  {"octet_version", "0.11"}, {"ort_version", "1.30.0"}, {"peaks", peaks}};
  r["options"] = {{"mode", "both"},         {"batches", batches},
                  {"threads", 1},           {"data", "fashion-mnist:test"},
                  {"images", 1000},         {"calib", "fashion-mnist:train"},
                  {"calib_images", 256},    {"method", "minmax"},
                  {"activations", "uint8"}, {"per_channel", true},
                  {"compare_ort", true}};

  json speed = json::array(), speedups = json::array(), profiles = json::array();
  for (size_t l = 0; l < options.levels.size(); ++l) {
    const std::string& isa = options.levels[l];
    for (int batch : batches) {
      for (const auto& p : precisions) {
        const double ms = ms_per_image(l, p, batch);
        speed.push_back({{"engine", "octet"},
                         {"precision", p},
                         {"isa", isa},
                         {"batch", batch},
                         {"threads", 1},
                         {"ms_per_image", ms}});
        if (p != "fp32")
          speedups.push_back({{"engine", "octet"},
                              {"precision", p},
                              {"isa", isa},
                              {"batch", batch},
                              {"threads", 1},
                              {"speedup", ms_per_image(l, "fp32", batch) / ms}});
        // Profiles: every precision and level, at batch 1 and the largest batch.
        const double total = ms * 1000.0 * batch;
        json steps = json::array(),
             categories = {{"dense", 0.0},  {"depthwise", 0.0},   {"quantize", 0.0}, {"dynamic_range", 0.0},
                           {"layout", 0.0}, {"elementwise", 0.0}, {"other", 0.0}};
        const auto& plan = steps_of(p);
        for (size_t i = 0; i < plan.size(); ++i) {
          const Step& s = plan[i];
          const double us = total * s.share;
          json step = {{"index", i},
                       {"node", s.node},
                       {"op", s.op},
                       {"kernel", kernel_of(s, isa, p)},
                       {"category", s.category},
                       {"us", us},
                       {"macs", s.macs * batch},
                       {"gops", 2.0 * double(s.macs * batch) / (us * 1000.0)},
                       {"scalar", l > 0 && std::string(s.op) == "QLinearGlobalAveragePool"}};
          if (s.macs > 0) step["peak_fraction"] = step["gops"].get<double>() / (l == 0 ? 4.2 : 60.1);
          steps.push_back(step);
          categories[s.category] = categories[s.category].get<double>() + us;
        }
        // The shares of the dynamic plan add up to 1.0 and the others to 1.0 as well; what
        // rounding leaves over is "other", so the categories sum to total_us as the schema says.
        double sum = 0;
        for (const auto& [k, v] : categories.items()) sum += v.get<double>();
        categories["other"] = std::max(0.0, categories["other"].get<double>() + (total - sum));
        profiles.push_back({{"precision", p},
                            {"isa", isa},
                            {"batch", batch},
                            {"threads", 1},
                            {"total_us", total},
                            {"categories", categories},
                            {"steps", steps}});
      }
    }
  }
  for (int batch : batches) {
    const double fp32 = 0.374 * (batch == 1 ? 1.0 : 0.55), int8 = 0.241 * (batch == 1 ? 1.0 : 0.55);
    speed.push_back({{"engine", "ort"},
                     {"precision", "fp32"},
                     {"isa", nullptr},
                     {"batch", batch},
                     {"threads", 1},
                     {"ms_per_image", fp32}});
    speed.push_back({{"engine", "ort"},
                     {"precision", "int8_static"},
                     {"isa", nullptr},
                     {"batch", batch},
                     {"threads", 1},
                     {"ms_per_image", int8}});
    speedups.push_back({{"engine", "ort"},
                        {"precision", "int8_static"},
                        {"isa", nullptr},
                        {"batch", batch},
                        {"threads", 1},
                        {"speedup", fp32 / int8}});
  }
  r["speed"] = speed;
  r["speedups"] = speedups;
  r["profiles"] = profiles;

  const std::string simd = options.levels.back();
  r["differences"] = json::array();
  const std::pair<const char*, const char*> diffs[] = {
      {"/b1/dw/Conv",
       "no integer dot product at LEVEL: uint8 x int8 widened to int16 (vpmaddwd), half the FP32 FMA rate"},
      {"/input/QuantizeLinear", "quantization overhead"},
      {"/pool/GlobalAveragePool", "scalar fallback: qu8_gavgpool__scalar ran at LEVEL"},
      {"/b1/Add", "memory-bound: 0.5 MACs per byte moved"},
      {"/b2/Add", "memory-bound: 0.5 MACs per byte moved"},
      {"/output/DequantizeLinear", "quantization overhead"},
      {"/b2/dw/Conv", "no integer dot product at LEVEL"},
      {"/stem/Conv",
       "slower kernel: qu8s8_igemm_6x16c2__LEVEL_madd16 18.8 GOP/s vs f32_igemm_6x16__LEVEL 21.0 GFLOP/s"},
      {"/head/Flatten", "memory-bound: 0 MACs per byte moved"},
      {"/b2/pw/Conv", "slower kernel"}};
  double delta = 9.0;
  for (const auto& [node, reason] : diffs) {
    std::string why = reason;
    for (size_t at; (at = why.find("LEVEL")) != std::string::npos;) why.replace(at, 5, simd);
    const double fp32 = 4.0 + delta / 3;
    r["differences"].push_back({{"precision", "int8_static"},
                                {"isa", simd},
                                {"node", node},
                                {"fp32_us", fp32},
                                {"int8_us", fp32 + delta},
                                {"delta_us", delta},
                                {"int8_steps", 2},
                                {"fp32_steps", 1},
                                {"reason", why}});
    delta *= 0.72;
  }

  json tensors = json::array(), ort = json::array();
  const char* names[] = {"input_quantized",      "/stem/Relu_output_0", "/b1/dw/Conv_output_0",
                         "/b1/pw/Conv_output_0", "/b1/Add_output_0",    "/b2/dw/Conv_output_0",
                         "/b2/pw/Conv_output_0", "/b2/Add_output_0",    "/pool/GlobalAveragePool_output_0",
                         "/head/Gemm_output_0"};
  for (int i = 0; i < 10; ++i) {
    const double hi = 2.0 + 0.7 * i;
    // "/b1/pw/Conv_output_0" comes from node "/b1/pw/Conv", a Conv.
    const std::string name = names[i],
                      producer = i == 0 ? "/input/QuantizeLinear" : name.substr(0, name.find("_output"));
    json t = {{"name", name},
              {"producer", producer},
              {"op", producer.substr(producer.rfind('/') + 1)},
              {"scale", hi / 255.0},
              {"zero_point", i == 9 ? 128 : 0},
              {"range", {i == 9 ? -hi : 0.0, hi}},
              {"clip_rate", i == 6 ? 0.0123 : 0.0001 * i},
              {"methods",
               {{"minmax", {0.0, hi}},
                {"percentile", {0.0, hi * 0.7}},
                {"entropy", {0.0, hi * 0.6}},
                {"mse", {0.0, hi * 0.65}}}},
              {"sqnr_drop_db", i == 6 ? 9.4 : 0.3 + 0.1 * i},
              {"culprit", i == 6}};
    // The input is exactly representable on its 8-bit grid: no error, so no sqnr_db.
    if (i != 0) t["sqnr_db"] = i == 6 ? 17.5 : 38.0 - 1.2 * i;
    tensors.push_back(t);
    ort.push_back({{"name", names[i]}, {"identical", i == 6 ? 0.9981 : 1.0}, {"max_lsb", i == 6 ? 1 : 0}});
  }
  r["accuracy"] = {{"images", 1000},
                   {"top1", {{"fp32", 0.912}, {"int8_static", 0.909}, {"int8_dynamic", 0.911}}},
                   {"agreement", {{"int8_static", 0.994}, {"int8_dynamic", 0.997}}},
                   {"tensors", tensors},
                   {"ort", ort},
                   {"first_difference", {{"name", names[6]}, {"values", 784}, {"max_lsb", 1}}}};

  r["recommendations"] = json::array(
      {{{"id", "static_over_dynamic"},
        {"text", "Use static quantization: 2.1x faster than dynamic here (0.118 vs 0.251 ms per image at " + simd +
                     ", batch 1)."},
        {"effect", {{"metric", "ms_per_image"}, {"from", 0.251}, {"to", 0.118}}}},
       {{"id", "calibration_method"},
        {"text", "Calibrate /b2/pw/Conv_output_0 with the percentile method: 1.23% of its values clip with minmax."}},
       {{"id", "vnni"},
        {"text",
         "A CPU with AVX-512 VNNI or AVX-VNNI runs the INT8 convolutions at about twice the rate of " + simd + "."},
        {"effect", {{"metric", "ms_per_image"}, {"from", 0.118}, {"to", 0.071}}}}});
  r["verdict"] = "INT8 static is 1.51x faster than FP32 at " + simd +
                 " (0.118 vs 0.178 ms per image, batch 1) and agrees with FP32 on 99.4% of the images; dynamic INT8 "
                 "is slower than FP32 (0.71x) because it measures every activation's range at run time. "
                 "/b2/pw/Conv_output_0 loses the most accuracy (9.4 dB).";
  return r;
}

size_t expected_chart_count(const json& report) {
  size_t n = report.contains("speedups") && !report["speedups"].empty() ? 1 : 0;
  std::set<std::pair<int64_t, int64_t>> batches;
  if (report.contains("profiles"))
    for (const auto& p : report["profiles"])
      if (p.contains("categories")) batches.insert({p["batch"].get<int64_t>(), p.value("threads", int64_t(0))});
  n += batches.size();
  if (report.contains("accuracy") && !report["accuracy"].value("tensors", json::array()).empty()) ++n;
  return n;
}

json sample_atlas(const SampleOptions& options) {
  const json report = sample_report(options);
  json columns = json::array();
  for (const auto& isa : options.levels)
    for (int batch : {1, 16}) columns.push_back({{"isa", isa}, {"batch", batch}, {"threads", 1}});
  return {{"schema", "octet-atlas/1"},
          {"created", "2026-11-29T05:00:00Z"},
          {"octet_version", "0.11"},
          {"commit", "0123456789ab"},
          {"seconds", 600.0},
          {"machine", {{"cpu", options.cpu}, {"family", "25"}, {"model", "1"}, {"stepping", "1"},
                       {"flags", {"fma", "avx", "avx2"}}, {"cores", 2}, {"load_average", {0.5, 0.7}},
                       {"isa_levels", options.levels}, {"ort_version", "1.30.0"}}},
          {"options", {{"zoo", "build/zoo"}, {"quick", false}}},
          {"columns", columns},
          {"models", {atlas_model("sample", report), atlas_model("sample_b", report)}},
          {"skipped_models", {{{"name", "broken"}, {"why", "no model_int8.onnx"}}}}};
}

}  // namespace octet::explain::testing
