// Erf and the erf-form GELU are ONNX Runtime's bit for bit at every ISA level: octet computes
// MLAS's erf step for step (kernels/elementwise/erf_coefficients.h, kernels/ref/activation.h
// mlas_erf) and fuses a GELU chain into its Gelu only where ORT's GeluFusion does
// (passes_decomposed.cc, ort_fuses_erf_gelu): ORT's Gelu takes erf(x * (1/√2)), the chain it
// leaves alone erf(x / √2), and the two differ by an ulp on some x. In a dynamic INT8 model a
// DynamicQuantizeLinear reads the GELU (fastvit, ConvNeXt), where one ulp can move a code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace erf_gelu_parity {

using testing::OnnxBuilder;

// x over [-6, 6] (both erf branches, the split at |x| = 0.921875 and GELU's at 1.3037, the clamp
// at 3.925 / 5.55), then the specials.
ir::TensorData sweep(int64_t rows, float offset) {
  const int64_t cols = 4096;
  std::vector<float> v;
  for (int64_t i = 0; i < rows * cols; ++i) v.push_back(offset - 6.0f + 12.0f * float(i) / float(rows * cols));
  const float specials[] = {0.0f, -0.0f, 0.921875f, -0.921875f, 1.3037281f, 3.925f, -3.925f, INFINITY, -INFINITY,
                            1e-30f, -1e-30f, 1e-42f, 30.0f, -30.0f};
  for (size_t i = 0; i < std::size(specials); ++i) v[i * 53] = specials[i];
  return ir::TensorData::f32({rows, cols}, v);
}

int steps_of(Session& s, const std::vector<ir::TensorData>& inputs, const std::string& op) {
  int n = 0;
  for (const PlanStep& step : s.plan_for(inputs).steps()) n += step.op == op;
  return n;
}

// x -> Div(√2) -> Erf -> Add(1) -> the products with x and 0.5 in `arrangement`: 0 (x · b) · 0.5,
// 1 (x · 0.5) · b, 2 x · (b · 0.5).
std::string gelu(OnnxBuilder& b, const std::string& x, int arrangement, bool div) {
  const std::string scaled = div ? b.node("Div", {x, b.initializer("", {}, {1.41421353816986f})})
                                 : b.node("Mul", {x, b.initializer("", {}, {0.70710677f})});
  const std::string bracket = b.node("Add", {b.node("Erf", {scaled}), b.initializer("", {}, {1.0f})});
  const std::string half = b.initializer("", {}, {0.5f});
  if (arrangement == 0) return b.node("Mul", {b.node("Mul", {x, bracket}), half});
  if (arrangement == 1) return b.node("Mul", {b.node("Mul", {x, half}), bracket});
  return b.node("Mul", {x, b.node("Mul", {bracket, half})});
}

TEST(ErfGeluParity, ErfAndEveryGeluFormAreOrtsBitForBit) {
  OCTET_SKIP_WITHOUT_ORT();
  // Each chain on its own input: ORT shares equal constants and merges equal nodes before it
  // fuses, and a Div read by two chains is fused in neither.
  OnnxBuilder b(13);
  std::vector<std::string> x;
  std::vector<ir::TensorData> inputs;
  std::map<std::string, ir::TensorData> feeds;
  for (int i = 0; i < 9; ++i) {
    x.push_back(b.input("x" + std::to_string(i), {-1, 4096}));
    inputs.push_back(sweep(2, 0.13f * float(i)));
    feeds[x.back()] = inputs.back();
  }
  b.output(b.node("Erf", {x[0]}));
  for (int arrangement : {0, 1, 2}) b.output(gelu(b, x[1 + arrangement], arrangement, true));
  b.output(gelu(b, x[4], 0, false));
  // x a Mul's output (a squeeze-excitation gate's): ORT leaves the Div form unfused.
  b.output(gelu(b, b.node("Mul", {x[5], x[6]}), 0, true));
  b.output(gelu(b, b.node("Mul", {x[7], x[8]}), 0, false));

  expect_ort_bytes_at_every_level(b, "erf_gelu", feeds);
  ScratchDir dir;
  const std::string path = (dir.path() / "erf_gelu.onnx").string();
  b.save(path);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    // Fused: the Div forms of arrangements 0 and 1 and both Mul(1/√2) forms; left as ops: the
    // standalone Erf, arrangement 2 and the Div form after a Mul.
    EXPECT_EQ(steps_of(session, inputs, "Gelu"), 4) << kernels::isa_name(isa);
    EXPECT_EQ(steps_of(session, inputs, "Erf"), 3) << kernels::isa_name(isa);
  }
}

}  // namespace erf_gelu_parity
}  // namespace octet::parity
