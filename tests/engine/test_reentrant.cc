// Session::run from several threads at once: each concurrent run gets a plan of its own (the
// activations and the kernels' scratch, such as the INT8 conv's padded copy), the packed
// weights stay shared, and every result equals the single-threaded one bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;
using testing::TensorValue;

ir::Graph float_model() {
  OnnxBuilder b(13, "reentrant_f32", 8);
  auto x = b.input("x", {-1, 4, 10, 10});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {8, 4, 3, 3}), b.random_normal_init("b1", {8})},
                                  {{"pads", {1, 1, 1, 1}}})});
  y = b.node("Conv", {y, b.random_normal_init("w2", {8, 8, 3, 3})}, {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
  b.output(b.node("Gemm", {b.node("Flatten", {b.node("GlobalAveragePool", {y})}), b.random_normal_init("fc", {5, 8})},
                  {{"transB", 1}}));
  return loader::load_onnx_bytes(b.serialize(), "reentrant_f32");
}

// A padded QLinearConv: its driver writes a padded copy of the input on every run.
ir::Graph int8_model() {
  OnnxBuilder b(13, "reentrant_q8", 8);
  auto x = b.input("x", {-1, 6, 9, 9}, testing::ElemType::u8);
  std::vector<int64_t> w(8 * 6 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t(i * 37 % 255) - 127;
  auto scalar = [&](const std::string& name, float v) { return b.initializer(name, {}, {v}); };
  b.output(b.node("QLinearConv",
                  {x, scalar("xs", 0.05f), b.initializer("xz", TensorValue::u8({}, {128})),
                   b.initializer("w", TensorValue::s8({8, 6, 3, 3}, w)), scalar("ws", 0.01f),
                   b.initializer("wz", TensorValue::s8({}, {0})), scalar("ys", 0.4f),
                   b.initializer("yz", TensorValue::u8({}, {120}))},
                  {{"pads", {1, 1, 1, 1}}}),
           testing::ElemType::u8);
  return loader::load_onnx_bytes(b.serialize(), "reentrant_q8");
}

ir::TensorData input_of(const TensorSpec& spec, int64_t batch, uint32_t seed) {
  ir::Dims d = spec.dims;
  d[0] = batch;
  ir::TensorData t = ir::TensorData::make(spec.dtype, d);
  uint32_t r = seed * 2654435761u + 1;
  for (auto& byte : t.bytes) {
    r = r * 1664525u + 1013904223u;
    byte = std::byte(r >> 24);
  }
  if (spec.dtype == ir::DType::f32)  // keep the floats finite: small values from the bytes
    for (int64_t i = 0; i < t.count(); ++i) t.as<float>()[i] = float(int(uint8_t(t.bytes[size_t(i) * 4])) - 128) / 64.0f;
  return t;
}

void expect_reentrant(ir::Graph graph) {
  SessionOptions o;
  o.batch_slice = 0;  // whole batches: the threads share plans of the same shapes
  Session session(std::move(graph), o);
  const TensorSpec& spec = session.inputs()[0];
  // The answers, one run at a time: 8 inputs over batch sizes 1, 2 and 3.
  std::vector<ir::TensorData> inputs;
  std::vector<std::vector<std::byte>> want;
  for (uint32_t i = 0; i < 8; ++i) {
    inputs.push_back(input_of(spec, 1 + i % 3, i));
    want.push_back(session.run({inputs.back()})[0].bytes);
  }
  const size_t packings = session.packed_weights().entries();
  constexpr int kThreads = 4, kRounds = 25;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const size_t i = size_t(t + r) % inputs.size();
        if (session.run({inputs[i]})[0].bytes != want[i]) ++mismatches[size_t(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
  // More plans were built for the overlapping runs; their weights were not packed again.
  EXPECT_EQ(session.packed_weights().entries(), packings);
}

TEST(Reentrant, FloatSessionFromFourThreads) { expect_reentrant(float_model()); }

TEST(Reentrant, Int8SessionFromFourThreads) { expect_reentrant(int8_model()); }

}  // namespace
}  // namespace octet
