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
#include "tools/datasets/dataset.h"
#include "tools/model_card.h"
#include "tools/ort_client.h"

namespace octet {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string model, calib, data;
  int calib_count = 1000, per_class = 100, octet_images = 500, batch = 100;
  std::vector<std::string> methods = {"minmax", "percentile", "entropy", "mse"};
};

ir::TensorData images_as_input(const data::Dataset& d, const std::vector<int64_t>& pick, const ModelCard& card) {
  const int64_t c = d.channels, plane = int64_t{d.height} * d.width;
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, {int64_t(pick.size()), c, d.height, d.width});
  for (size_t i = 0; i < pick.size(); ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        t.as<float>()[(int64_t(i) * c + ch) * plane + p] = card.normalize(int(ch), d.image(pick[i])[ch * plane + p]);
  return t;
}

std::vector<ir::TensorData> split(const ir::TensorData& all, int64_t batch, int64_t limit = -1) {
  const int64_t n = limit < 0 ? all.dims[0] : std::min(limit, all.dims[0]);
  const size_t row = all.bytes.size() / size_t(all.dims[0]);
  std::vector<ir::TensorData> out;
  for (int64_t b = 0; b < n; b += batch) {
    ir::Dims d = all.dims;
    d[0] = std::min(batch, n - b);
    ir::TensorData t = ir::TensorData::make(all.dtype, d);
    ir::copy_bytes(t.bytes.data(), all.bytes.data() + size_t(b) * row, t.bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

npy::Array to_npy(const ir::TensorData& t) {
  npy::Array a;
  a.dtype = npy::DType::f32;
  a.shape = t.dims;
  a.data = t.bytes;
  return a;
}

int64_t argmax(const float* p, int64_t n) { return std::max_element(p, p + n) - p; }

double top1(const float* scores, int64_t rows, int64_t classes, const std::vector<int>& labels) {
  int64_t right = 0;
  for (int64_t r = 0; r < rows; ++r) right += argmax(scores + r * classes, classes) == labels[size_t(r)];
  return double(right) / double(rows);
}

// The DequantizeLinear whose output is the model's int8 result: the one writing the graph
// output, or the one feeding the float op (e.g. Softmax) that writes it. That tensor becomes
// an extra graph output so octet and ORT can be compared in LSB.
struct Int8Tap {
  std::string tensor;
  float scale = 0;
};
Int8Tap add_int8_tap(ir::Graph& g) {
  auto dq_writing = [&](const std::string& name) -> const ir::Node* {
    for (const auto& n : g.nodes)
      if (n.op == "DequantizeLinear" && n.outputs[0] == name) return &n;
    return nullptr;
  };
  const std::string out = g.outputs.at(0);
  const ir::Node* dq = dq_writing(out);
  if (!dq)
    for (const auto& n : g.nodes)
      if (n.outputs[0] == out && n.has_input(0)) dq = dq_writing(n.input(0));
  if (!dq) throw ir::Error("no DequantizeLinear feeds the model output");
  if (dq->outputs[0] != out) g.outputs.push_back(dq->outputs[0]);
  return {dq->outputs[0], g.value(dq->input(1)).constant->as<float>()[0]};
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
  const data::Dataset calib_set = data::load_dataset(o.calib);
  const data::Dataset eval_set = data::load_dataset(o.data);
  std::vector<int64_t> calib_pick = data::stratified_indices(calib_set, o.per_class);
  if (int64_t(calib_pick.size()) > o.calib_count) calib_pick.resize(size_t(o.calib_count));
  std::vector<int64_t> all(size_t(eval_set.count()));
  for (size_t i = 0; i < all.size(); ++i) all[i] = int64_t(i);
  const auto calib_batches = split(images_as_input(calib_set, calib_pick, card), o.batch);
  const ir::TensorData eval_all = images_as_input(eval_set, all, card);
  const std::string input = fp32.inputs.at(0);
  const int64_t n = eval_set.count();

  ort::EvalOptions eo;
  eo.batch = o.batch;
  eo.warmup = 1;
  auto ort_eval = [&](const std::string& path) { return ort::eval(path, input, to_npy(eval_all), eo); };
  auto fp32_result = ort_eval(o.model);
  const npy::Array& fp32_scores = fp32_result.outputs.at(fp32.outputs.at(0));
  const int64_t classes = fp32_scores.count() / n;
  const double fp32_top1 = top1(fp32_scores.as<float>(), n, classes, eval_set.labels);
  fmt::print(stderr, "{}: FP32 top-1 {:.2f}% on {} images; calibrating on {} images of {}\n", o.model,
             100 * fp32_top1, n, calib_pick.size(), calib_set.description);

  const fs::path tmp = fs::temp_directory_path() / fmt::format("octet-quant-table-{}.onnx", ::getpid());
  std::vector<Row> rows;
  for (const auto& m : o.methods) {
    calib::CalibrationOptions co;
    co.method = calib::parse_method(m);
    const auto t0 = std::chrono::steady_clock::now();
    const ir::Graph prepared = calib::prepare_for_quantization(fp32);
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
        const Int8Tap tap = add_int8_tap(qdq);
        loader::save_onnx(qdq, tmp.string());
        r.file_bytes = fs::file_size(tmp);
        auto res = ort_eval(tmp.string());
        r.ort_top1 = top1(res.outputs.at(qdq.outputs[0]).as<float>(), n, classes, eval_set.labels);
        double ms = 0;
        for (double b : res.batch_ms) ms += b;
        r.ort_ms = ms / double(n);
        // octet INT8 on the first images, compared with ORT's int8 result value by value.
        Session s{ir::Graph(qdq)};
        const size_t tap_index = qdq.outputs.size() - 1;
        const npy::Array& ort_tap = res.outputs.at(tap.tensor);
        int64_t done = 0;
        for (const auto& b : split(eval_all, o.batch, o.octet_images)) {
          auto outs = s.run({b});
          const float* mine = outs[tap_index].as<float>();
          const float* theirs = ort_tap.as<float>() + done * classes;
          for (int64_t i = 0; i < outs[tap_index].count(); ++i) {
            const int64_t d = std::llround(std::fabs(double(mine[i]) - double(theirs[i])) / tap.scale);
            r.compared++;
            r.identical += d == 0;
            r.max_lsb = std::max(r.max_lsb, d);
          }
          for (int64_t k = 0; k < b.dims[0]; ++k)
            r.same_top1 += argmax(mine + k * classes, classes) == argmax(theirs + k * classes, classes);
          r.rows += b.dims[0];
          done += b.dims[0];
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
