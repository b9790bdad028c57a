// A QuantizeLinear read only by a DequantizeLinear of the same scale and zero point (a QDQ
// model's float output) is one QuantizeDequantize step (passes::fuse_quantize_dequantize), or,
// after a float Resize (DeepLabV3's and LR-ASPP's upsampled logits end Resize -> Q -> DQ), part of
// the Resize step: linear (row by row as written) and nearest (over the whole output). ONNX
// Runtime's bits at every level, u8 and s8, on maps of several vectors and a tail. A pair whose
// codes are also an output, or whose two halves differ in scale, keeps its two steps.
#include <gtest/gtest.h>

#include <string>

#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace fake_quantize_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

TEST(FakeQuantizeParity, QuantizeThenDequantizeIsOneStepWithOrtsBits) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    OnnxBuilder b(13);
    const ir::Dims dims{2, 5, 9, 11};
    auto x = b.input("x", {-1, 5, 9, 11});
    const Quant in = quant(b, s8, 0.04f, s8 ? -3 : 131), out = quant(b, s8, 0.021f, s8 ? 9 : 117);
    const Quant other = quant(b, s8, 0.05f, s8 ? 9 : 117);
    b.output(dq(b, q(b, x, out), out));  // a plain fake quantization
    // The segmentation tail: codes upsampled in float (linear, 4x), then quantized and dequantized.
    const std::string scales = b.initializer("", {4}, {1.0f, 1.0f, 4.0f, 4.0f});
    const std::string up = b.node("Resize", {dq(b, q(b, x, in), in), "", scales},
                                  {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")}});
    b.output(dq(b, q(b, up, out), out));
    const std::string near = b.node("Resize", {x, "", scales}, {{"mode", std::string("nearest")}});
    b.output(dq(b, q(b, near, out), out));
    // Left alone: codes that are an output too, and a DequantizeLinear of another scale.
    const std::string codes = q(b, b.node("Relu", {x}), out);
    b.output(dq(b, codes, out));
    b.output(codes, s8 ? ElemType::s8 : ElemType::u8);
    b.output(dq(b, q(b, b.node("Neg", {x}), out), other));
    const std::string name = s8 ? "fake_quantize_s8" : "fake_quantize_u8";
    qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 3, 2.5f);

    qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
      EXPECT_EQ(steps("QuantizeDequantize"), 2) << name << ": the plain pair and the one before the linear Resize";
      EXPECT_EQ(steps("Resize"), 2) << name << ": each with its output's pair";
      EXPECT_EQ(steps("DequantizeLinear"), 2) << name << ": the shared codes' and the other scale's";
      EXPECT_EQ(steps("QuantizeLinear"), 2) << name << ": the shared codes and the other scale's";
    });
  }
}

}  // namespace fake_quantize_parity
}  // namespace octet::parity
