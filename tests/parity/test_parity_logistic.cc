// Sigmoid and SiLU (Sigmoid -> Mul, which octet fuses) are ONNX Runtime's bit for bit: octet
// computes MLAS's logistic step for step (kernels/ref/activation.h, mlas_logistic). That is
// what keeps a DynamicQuantizeLinear after a SiLU on ORT's codes: one ulp moves a code when
// the value sits near a rounding tie, and YOLO's and EfficientNet's dynamic INT8 graphs have a
// DynamicQuantizeLinear after every SiLU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace logistic_parity {

using testing::ElemType;
using testing::OnnxBuilder;

// Values over the whole useful range and past the clamp at +-18, with the specials.
ir::TensorData sweep(int64_t rows) {
  std::vector<float> v;
  const int64_t cols = 4096;
  for (int64_t i = 0; i < rows * cols; ++i) v.push_back(-24.0f + 48.0f * float(i) / float(rows * cols));
  const float specials[] = {0.0f, -0.0f, 18.0f, -18.0f, INFINITY, -INFINITY, 1e-30f, -1e-30f, 88.0f, -88.0f};
  for (size_t i = 0; i < std::size(specials); ++i) v[i * 37] = specials[i];
  return ir::TensorData::f32({rows, cols}, v);
}

void expect_identical(const OnnxBuilder& b, const std::string& name, const ir::TensorData& x) {
  expect_ort_bytes_at_every_level(b, name, {{"x", x}});
}

TEST(LogisticParity, SigmoidAndSiluAreOrtsBitForBit) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4096});
  b.output(b.node("Sigmoid", {x}));
  b.output(b.node("Mul", {x, b.node("Sigmoid", {x})}));
  expect_identical(b, "sigmoid_silu", sweep(3));
}

// A SiLU no conv takes in (GroupNorm's affine Add, then x * Sigmoid(x), either operand order):
// one step (passes::fuse_standalone_silu), still ORT's bits, the Muls gone from the plan.
TEST(LogisticParity, SiluAfterAnAddIsOneStepWithOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4096});
  auto t = b.node("Add", {x, b.initializer("", {}, {0.25f})});
  b.output(b.node("Mul", {t, b.node("Sigmoid", {t})}));
  auto u = b.node("Add", {x, b.initializer("", {}, {-0.5f})});
  b.output(b.node("Mul", {b.node("Sigmoid", {u}), u}));
  expect_identical(b, "silu_after_add", sweep(3));

  ScratchDir dir;
  const std::string path = (dir.path() / "silu_after_add.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  int sigmoids = 0, muls = 0;
  for (const PlanStep& step : session.plan_for(std::vector<ir::Dims>{{3, 4096}}).steps()) {
    sigmoids += step.op == "Sigmoid";
    muls += step.op == "Mul";
  }
  EXPECT_EQ(sigmoids, 2);
  EXPECT_EQ(muls, 0) << "each x * Sigmoid(x) runs in its Sigmoid's step";
}

// The dynamic INT8 pattern: a float SiLU feeding DynamicQuantizeLinear (in a dynamic model the
// SiLU's input is a ConvInteger's exact product, scaled: the same in both engines).
TEST(LogisticParity, DynamicQuantizeAfterSiluTakesOrtsCodes) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 8, 12, 12});
  auto silu = b.node("Mul", {x, b.node("Sigmoid", {x})});
  const auto outs = b.node_multi("DynamicQuantizeLinear", {silu}, 3);
  b.output(outs[0], ElemType::u8);
  b.output(outs[1]);
  b.output(outs[2], ElemType::u8);
  b.output(silu);
  auto inputs = random_inputs({{4, 8, 12, 12}}, 4, 5);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= 4.0f;
  expect_identical(b, "silu_dql", inputs[0]);
}

}  // namespace logistic_parity
}  // namespace octet::parity
