// NonMaxSuppression at YOLOv8's size: 80 classes x 8400 boxes, score_threshold 0.25, iou 0.45, at
// most 100 per class. The model (`--write-model FILE`, for build/bench/model_bench against ONNX
// Runtime) takes the raw head [1, 84, 8400] (as [1, 84, 1, 8400]): boxes (centre, size) from rows 0-3, class scores
// Sigmoid(rows 4-83 - 3) (a few percent above the threshold, as a trained detector's), then NMS.
// BM_NmsModel runs it through a Session (the first stage's plan, the cut); BM_NmsSelection the
// selection alone (ops::non_max_suppression) on the same boxes and scores.
//
//   build/bench/nms_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   build/bench/nms_bench --write-model /tmp/nms8400.onnx && build/bench/model_bench /tmp/nms8400.onnx
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "engine/ops/nms.h"
#include "engine/session.h"
#include "tests/util/onnx_builder.h"

namespace {

using octet::Session;
using octet::ir::TensorData;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;
using octet::testing::TensorValue;

constexpr int64_t kBoxes = 8400, kClasses = 80;

void write_model(const std::string& path) {
  OnnxBuilder b(13);
  // [1, 84, 1, 8400]: an image-shaped input, so that `octet explain` (which calibrates on
  // [N, C, H, W] arrays) takes the model too.
  auto pred = b.node("Reshape", {b.input("pred", {-1, 4 + kClasses, 1, kBoxes}),
                                 b.initializer_i64("", {3}, {-1, 4 + kClasses, kBoxes})});
  auto rows = [&](int64_t from, int64_t to) {
    return b.node("Slice", {pred, b.initializer_i64("", {1}, {from}), b.initializer_i64("", {1}, {to}),
                            b.initializer_i64("", {1}, {1})});
  };
  auto scale = b.initializer("", {1, 4, 1}, {300.0f, 300.0f, 40.0f, 40.0f});
  auto boxes = b.node("Transpose", {b.node("Mul", {b.node("Abs", {rows(0, 4)}), scale})}, {{"perm", {0, 2, 1}}});
  auto scores = b.node("Sigmoid", {b.node("Sub", {rows(4, 4 + kClasses), b.initializer("", TensorValue::scalar_f32(3.0f))})});
  auto selected = b.node("NonMaxSuppression", {boxes, scores, b.initializer_i64("", {1}, {100}),
                                               b.initializer("", TensorValue::scalar_f32(0.45f)),
                                               b.initializer("", TensorValue::scalar_f32(0.25f))},
                         {{"center_point_box", int64_t(1)}});
  // [1, count, 3]: model_bench's ORT runner wants the batch on axis 0 of every output.
  b.output(b.node("Unsqueeze", {selected, b.initializer_i64("", {1}, {0})}), ElemType::s64);
  b.save(path);
}

// model_bench's input: normal(0, 1) from seed 1234.
TensorData head() {
  TensorData t = TensorData::make(octet::ir::DType::f32, {1, 4 + kClasses, 1, kBoxes});
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  float* v = t.as<float>();
  for (int64_t i = 0; i < t.count(); ++i) v[i] = dist(rng);
  return t;
}

void BM_NmsModel(benchmark::State& state) {
  const std::string path = (std::filesystem::temp_directory_path() / "bench_nms.onnx").string();
  write_model(path);
  Session s = Session::load(path);
  const std::vector<TensorData> in{head()};
  const int64_t kept = s.run(in)[0].dims[1];
  for (auto _ : state) benchmark::DoNotOptimize(s.run(in));
  state.counters["selected"] = double(kept);
  std::filesystem::remove(path);
}
BENCHMARK(BM_NmsModel)->Unit(benchmark::kMicrosecond);

void BM_NmsSelection(benchmark::State& state) {
  const TensorData h = head();
  const float* v = h.as<float>();
  std::vector<float> boxes(size_t(kBoxes * 4)), scores(size_t(kClasses * kBoxes));
  const float scale[4] = {300, 300, 40, 40};
  for (int64_t i = 0; i < kBoxes; ++i)
    for (int64_t c = 0; c < 4; ++c) boxes[size_t(i * 4 + c)] = std::fabs(v[c * kBoxes + i]) * scale[c];
  for (int64_t k = 0; k < kClasses * kBoxes; ++k) scores[size_t(k)] = 1.0f / (1.0f + std::exp(3.0f - v[4 * kBoxes + k]));
  octet::ops::NmsProblem p;
  p.boxes = boxes.data();
  p.scores = scores.data();
  p.batches = 1;
  p.classes = kClasses;
  p.boxes_per_image = kBoxes;
  p.max_per_class = 100;
  p.iou_threshold = 0.45f;
  p.score_threshold = 0.25f;
  p.center_point_box = true;
  size_t kept = 0;
  for (auto _ : state) {
    auto sel = octet::ops::non_max_suppression(p);
    kept = sel.size() / 3;
    benchmark::DoNotOptimize(sel.data());
  }
  state.counters["selected"] = double(kept);
}
BENCHMARK(BM_NmsSelection)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--write-model") == 0) {
      write_model(argv[i + 1]);
      return 0;
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
