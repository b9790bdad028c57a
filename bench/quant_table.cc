// The accuracy table of the field's reports for one model: FP32 and every calibration
// method x weight granularity x activation type, each quantized by octet, written as a QDQ
// model and evaluated by ONNX Runtime on the whole evaluation set; octet runs the same QDQ
// model as INT8 on the first --octet-images images and the table gives their agreement with
// ORT (int8 outputs identical, max LSB, top-1), so every ORT figure is also octet's where they agree.
//
//   quant_table models/tinynet.onnx --calib fashion-mnist:train --data fashion-mnist:test
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "calib/quantize.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "apps/cli/int8_parity.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/dataset.h"
#include "io/model_card.h"
#include "tools/ort/ort_client.h"
#include "io/tensor_io.h"

namespace octet {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string model, calib, data;
  int calib_count = 1000, per_class = 100, octet_images = 500, batch = 100;
  std::vector<std::string> methods = {"minmax", "percentile", "entropy", "mse"};
};

int64_t argmax(const float* p, int64_t n) { return std::max_element(p, p + n) - p; }

double top1(const float* scores, int64_t rows, int64_t classes, const std::vector<int>& labels) {
  int64_t right = 0;
  for (int64_t r = 0; r < rows; ++r) right += argmax(scores + r * classes, classes) == labels[size_t(r)];
  return double(right) / double(rows);
}

struct Row {
  std::string config;
  double ort_top1 = 0;
  int64_t compared = 0, identical = 0, max_lsb = 0, same_top1 = 0, rows = 0;
  double ort_ms = 0, seconds = 0;
  size_t file_bytes = 0;
  std::vector<std::string> float_ops;
};

int run(const Options& o) {
  if (auto why = ort::unavailable_reason(); !why.empty()) throw ir::Error(why);
  const ir::Graph fp32 = loader::load_onnx(o.model);
  const ModelCard card = find_model_card(o.model).value_or(ModelCard{});
  const TensorSpec input = cli::image_input(fp32, o.model);
  const data::Dataset calib_all = cli::load_dataset_for(o.calib, input);
  std::vector<int64_t> calib_pick = data::stratified_indices(calib_all, o.per_class);
  if (int64_t(calib_pick.size()) > o.calib_count) calib_pick.resize(size_t(o.calib_count));
  const data::Dataset calib_set = data::subset(calib_all, calib_pick);
  const data::Dataset eval_set = cli::load_dataset_for(o.data, input);
  const auto calib_batches = cli::split_batches(cli::make_inputs(calib_set, card, input), o.batch);
  const ir::TensorData eval_all = cli::make_inputs(eval_set, card, input);
  const int64_t n = eval_set.count();

  ort::EvalOptions eo;
  eo.batch = o.batch;
  eo.warmup = 1;
  auto ort_eval = [&](const std::string& path) { return ort::eval(path, input.name, to_npy(eval_all), eo); };
  auto fp32_result = ort_eval(o.model);
  const npy::Array& fp32_scores = fp32_result.outputs.at(fp32.outputs.at(0));
  const int64_t classes = fp32_scores.count() / n;
  const double fp32_top1 = top1(fp32_scores.as<float>(), n, classes, eval_set.labels);
  fmt::print(stderr, "{}: FP32 top-1 {:.2f}% on {} images; calibrating on {} images of {}\n", o.model,
             100 * fp32_top1, n, calib_set.count(), calib_set.description);

  const fs::path tmp = fs::temp_directory_path() / fmt::format("octet-quant-table-{}.onnx", ::getpid());
  std::vector<Row> rows;
  const ir::Graph prepared = calib::prepare_for_quantization(fp32);
  for (const auto& m : o.methods) {
    calib::CalibrationOptions co;
    co.method = calib::parse_method(m);
    const auto t0 = std::chrono::steady_clock::now();
    const auto observers = calib::observe_activations(prepared, calib_batches, co);
    const double calib_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (bool per_channel : {true, false}) {
      for (auto act : {calib::QType::u8, calib::QType::s8}) {
        Row r;
        r.config = fmt::format("{} {} {}", m, per_channel ? "per-channel" : "per-tensor",
                               act == calib::QType::u8 ? "uint8" : "int8");
        calib::QuantizeOptions qo;
        qo.per_channel = per_channel;
        qo.activations = act;
        calib::QuantizeReport report;
        ir::Graph qdq = calib::quantize_graph(prepared, observers, qo, &report);
        r.float_ops = report.float_ops;
        r.seconds = calib_s;
        const auto tap = cli::find_logits_tap(qdq);
        if (!tap || tap->scale <= 0) throw ir::Error("no per-tensor DequantizeLinear writes the model's result");
        qdq = cli::with_tap_output(std::move(qdq), *tap);
        loader::save_onnx(qdq, tmp.string());
        r.file_bytes = fs::file_size(tmp);
        auto res = ort_eval(tmp.string());
        r.ort_top1 = top1(res.outputs.at(qdq.outputs[0]).as<float>(), n, classes, eval_set.labels);
        // octet INT8 on the first images, compared with ORT's int8 result value by value.
        Session s{ir::Graph(qdq)};
        const size_t tap_index = qdq.outputs.size() - 1;
        const float* theirs = res.outputs.at(tap->tensor).as<float>();
        for (const auto& b : cli::split_batches(eval_all, o.batch, o.octet_images)) {
          auto outs = s.run({b});
          const std::span<const float> mine = outs[tap_index].values<float>();
          const cli::TapComparison c = cli::compare_tap(mine, {theirs, mine.size()}, tap->scale);
          r.compared += c.values;
          r.identical += c.identical;
          r.max_lsb = std::max(r.max_lsb, c.max_lsb);
          for (int64_t k = 0; k < b.dims[0]; ++k)
            r.same_top1 += argmax(mine.data() + k * classes, classes) == argmax(theirs + k * classes, classes);
          r.rows += b.dims[0];
          theirs += mine.size();
        }
        fmt::print(stderr, "  {:<32} ORT int8 top-1 {:.2f}%  octet=ORT int8 values {:.2f}% (max {} LSB)\n", r.config,
                   100 * r.ort_top1, 100.0 * double(r.identical) / double(r.compared), r.max_lsb);
        rows.push_back(std::move(r));
      }
    }
  }
  fs::remove(tmp);

  fmt::print("### {} — {} evaluation images, {} calibration images ({})\n\n", o.model, n, calib_pick.size(),
             calib_set.description);
  fmt::print("| configuration | top-1 | Δ vs FP32 | octet = ORT int8 values (first {} images) | max LSB | top-1 agreement | QDQ file |\n",
             std::min<int64_t>(o.octet_images, n));
  fmt::print("|---|---:|---:|---:|---:|---:|---:|\n");
  fmt::print("| FP32 | {:.2f}% | | | | | {} B |\n", 100 * fp32_top1, fs::file_size(o.model));
  for (const auto& r : rows)
    fmt::print("| {} | {:.2f}% | {:+.2f} | {:.2f}% | {} | {}/{} | {} B |\n", r.config, 100 * r.ort_top1,
               100 * (r.ort_top1 - fp32_top1), 100.0 * double(r.identical) / double(r.compared), r.max_lsb,
               r.same_top1, r.rows, r.file_bytes);
  if (!rows.empty() && !rows[0].float_ops.empty()) {
    fmt::print("\nkept in float:\n");
    for (const auto& f : rows[0].float_ops) fmt::print("- {}\n", f);
  }
  return 0;
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  octet::Options o;
  CLI::App app{"Accuracy of every quantization configuration of one model (ORT on the whole set, octet parity on a prefix)"};
  app.add_option("model", o.model, "FP32 ONNX model")->required()->check(CLI::ExistingFile);
  app.add_option("--calib", o.calib, "Calibration dataset spec (a training split)")->required();
  app.add_option("--data", o.data, "Evaluation dataset spec")->required();
  app.add_option("--calib-count", o.calib_count, "Calibration images at most");
  app.add_option("--per-class", o.per_class, "Calibration images per class (stratified)");
  app.add_option("--octet-images", o.octet_images, "Images octet runs as INT8 to compare with ORT");
  app.add_option("--methods", o.methods, "Calibration methods")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  try {
    return octet::run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "quant_table: error: {}\n", e.what());
    return 1;
  }
}
