// LRN against ONNX Runtime at every level this CPU has: FP32 within 1e-5 of max |ORT| (the
// running sums are ORT's bit for bit; ORT's power is Eigen's vectorised pow, octet's std::pow at
// level scalar and its own vector power above, each within an ulp or two), the codes of a
// QuantizeLinear after a float LRN inside a QDQ unit identical to ORT's, and the zoo's
// Conv -> Relu -> LRN -> MaxPool block (AlexNet, CaffeNet, GoogLeNet) at batch 1 and 5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <span>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace lrn_parity {

using testing::ElemType;
using testing::OnnxBuilder;

struct LrnCase {
  int64_t size;
  float alpha, beta, bias;
  ir::Dims dims;
  float input_scale;  // random normal inputs times this: large enough that the window sum matters
};

std::string lrn(OnnxBuilder& b, const std::string& x, const LrnCase& c) {
  return b.node("LRN", {x}, {{"size", c.size}, {"alpha", c.alpha}, {"beta", c.beta}, {"bias", c.bias}});
}

// Runs `model` (input "x") in octet at every level and in ORT. `exact`: every output byte equal;
// else max |octet - ORT| <= 1e-5 max |ORT|.
void compare_at_every_level(const OnnxBuilder& model, const std::string& name, const ir::Dims& dims, float scale,
                            bool exact) {
  auto inputs = random_inputs({dims}, dims[0], 9);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= scale;
  if (exact) return expect_ort_bytes_at_every_level(model, name, {{"x", inputs[0]}});
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  model.save(path);
  const auto theirs = testing::run_ort(path, {{"x", to_npy(inputs[0])}});
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    const auto mine = session.run(inputs);
    const std::string& out = session.outputs()[0].name;
    const Figures f = compare(mine[0], theirs.at(out));
    const int64_t differ = differing_bytes(mine[0], theirs.at(out)) > 0 ? 1 : 0;
    std::printf("%s at %s: %s%s\n", name.c_str(), kernels::isa_name(isa), describe(f).c_str(),
                differ ? "" : " (bit-identical)");
    EXPECT_TRUE(f.shape_ok) << name << ": " << f.shape_note;
    EXPECT_LE(f.max_abs_diff, 1e-5 * f.max_abs_ref) << name << " at " << kernels::isa_name(isa) << ": " << describe(f);
  }
}

TEST(LrnParity, Fp32WithinOneE5OfOrtAtEveryLevel) {
  OCTET_SKIP_WITHOUT_ORT();
  const LrnCase cases[] = {
      {5, 1e-4f, 0.75f, 1.0f, {1, 96, 27, 27}, 30.0f},  // AlexNet's first LRN, smaller map
      {5, 1e-4f, 0.75f, 2.0f, {2, 64, 11, 13}, 30.0f},
      {3, 0.5f, 0.75f, 1.0f, {1, 37, 9, 10}, 2.0f},
      {11, 2.0f, 1.5f, 0.5f, {1, 19, 6, 7}, 1.0f},
      {1, 1.0f, 0.5f, 1.0f, {3, 5, 4, 4}, 1.0f},
      {7, 1e-3f, 0.75f, 1e-2f, {1, 200, 3, 5}, 4.0f},
  };
  for (const LrnCase& c : cases) {
    OnnxBuilder b(13);
    b.output(lrn(b, b.input("x", c.dims), c));
    char name[64];
    std::snprintf(name, sizeof name, "lrn_n%lld_c%lld", static_cast<long long>(c.size), static_cast<long long>(c.dims[1]));
    compare_at_every_level(b, name, c.dims, c.input_scale, false);
  }
}

// DequantizeLinear -> LRN -> QuantizeLinear: ORT runs the LRN in float between them, and so
// does octet.
TEST(LrnParity, Int8CodesAfterAFloatLrnAreOrts) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const LrnCase& c : {LrnCase{5, 1e-4f, 0.75f, 1.0f, {2, 64, 9, 9}, 2.0f}, LrnCase{3, 0.5f, 0.75f, 1.0f, {1, 21, 7, 5}, 2.0f}}) {
    OnnxBuilder b(13);
    auto x = b.input("x", c.dims);
    auto scale = b.initializer("s", {}, {0.05f});
    auto zp = b.initializer("zp", testing::TensorValue::u8({}, {128}));
    auto dq = b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, scale, zp}), scale, zp});
    b.output(b.node("QuantizeLinear", {lrn(b, dq, c), b.initializer("s_out", {}, {0.02f}), zp}), ElemType::u8);
    compare_at_every_level(b, "lrn_qdq_n" + std::to_string(c.size), c.dims, c.input_scale, true);
  }
}

class LrnModelParity : public ParityTest {};

// The zoo's block: Conv -> Relu -> LRN -> MaxPool, at batch 1 and 5 (a batch runs in slices:
// LRN keeps the images apart).
TEST_F(LrnModelParity, AlexNetBlock) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 31, 31});
  auto conv = b.node("Conv", {x, b.random_normal_init("w", {48, 3, 5, 5}, 0.0f, 0.4f), b.random_normal_init("bias", {48})},
                     {{"strides", {2, 2}}, {"pads", {2, 2, 2, 2}}});
  auto norm = lrn(b, b.node("Relu", {conv}), {5, 1e-4f, 0.75f, 1.0f, {}, 1.0f});
  b.output(b.node("MaxPool", {norm}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}));
  check_model(b, "lrn_alexnet_block");
}

}  // namespace lrn_parity
}  // namespace octet::parity
