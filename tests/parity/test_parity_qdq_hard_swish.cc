// A QDQ hard swish as MobileNetV3 exports it below opset 14, HardSigmoid(x) * x with every
// tensor quantized, is one QLinearSilu table (gate HardSigmoid: passes::fuse_qlinear_silu) with
// ONNX Runtime's bytes at every level: torch's alpha 1/6, ONNX's default 0.2, both operand orders,
// u8 and s8, the Mul's scale for x its own. A HardSigmoid of another tensor (the squeeze-excitation
// gate) and one with a second reader keep their QLinearHardSigmoid and QLinearMul steps.
#include <gtest/gtest.h>

#include <string>

#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace qdq_hard_swish_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

TEST(QdqHardSwishParity, HardSigmoidTimesItsInputIsOneTableWithOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    OnnxBuilder b(13);
    const ir::Dims dims{2, 24, 9, 11};
    auto x = b.input("x", {-1, 24, 9, 11});
    const Quant in = quant(b, s8, 0.05f, s8 ? -7 : 121), other = quant(b, s8, 0.048f, s8 ? 1 : 125);
    const Quant gate = quant(b, s8, 1.0f / 255.0f, s8 ? -128 : 0), out = quant(b, s8, 0.031f, s8 ? -40 : 88);
    const auto xq = q(b, x, in);
    const ElemType type = s8 ? ElemType::s8 : ElemType::u8;
    auto hard_sigmoid = [&](const std::string& v, float alpha, float beta) {
      return q(b, b.node("HardSigmoid", {dq(b, v, in)}, {{"alpha", alpha}, {"beta", beta}}), gate);
    };
    // torch's hard swish (alpha 1/6), gate second; ONNX's default HardSigmoid, gate first.
    b.output(q(b, b.node("Mul", {dq(b, xq, in), dq(b, hard_sigmoid(xq, 1.0f / 6.0f, 0.5f), gate)}), out), type);
    b.output(q(b, b.node("Mul", {dq(b, hard_sigmoid(xq, 0.2f, 0.5f), gate), dq(b, xq, in)}), out), type);
    // Left alone: a gate of another tensor (x + 1 in its own quantization), and a gate read twice.
    const auto shifted = q(b, b.node("Add", {dq(b, xq, in), b.initializer("", {}, {1.0f})}), in);
    b.output(q(b, b.node("Mul", {dq(b, xq, in), dq(b, hard_sigmoid(shifted, 1.0f / 6.0f, 0.5f), gate)}), out), type);
    const auto shared = hard_sigmoid(xq, 1.0f / 6.0f, 0.5f);
    b.output(q(b, b.node("Mul", {dq(b, xq, in), dq(b, shared, gate)}), other), type);
    b.output(shared, type);
    const std::string name = s8 ? "qdq_hard_swish_s8" : "qdq_hard_swish_u8";
    qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 7, 3.0f);

    qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
      EXPECT_EQ(steps("QLinearSilu"), 2) << name << " at " << kernels::isa_name(isa);
      EXPECT_EQ(steps("QLinearHardSigmoid"), 2) << name << ": the other tensor's gate and the shared one stay";
      EXPECT_EQ(steps("QLinearMul"), 2) << name << " at " << kernels::isa_name(isa);
    });
  }
}

}  // namespace qdq_hard_swish_parity
}  // namespace octet::parity
