// Float element-wise chains between a DequantizeLinear and a QuantizeLinear (ConvNeXt's GELU in
// a QDQ model: DQ -> Div -> Erf -> Add -> Q, and DQ -> Mul(0.5) -> Q) run as one QLinearTable
// lookup (passes::fuse_qdq_float_chains), still ONNX Runtime's bytes at every level; chains the
// pass must leave alone (a per-channel constant, an op whose float result may depend on the
// level, a link with a second reader) keep their steps and ORT's bytes too.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace float_chain_table_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

std::string scalar(OnnxBuilder& b, float v) { return b.initializer("", {}, {v}); }

TEST(FloatChainTableParity, ChainsBetweenDequantizeAndQuantizeAreOneLookupWithOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    OnnxBuilder b(13);
    const ir::Dims dims{2, 24, 9, 11};
    auto x = b.input("x", {-1, 24, 9, 11});
    const Quant in = quant(b, s8, 0.05f, s8 ? -3 : 131), mid = quant(b, s8, 0.03f, s8 ? 5 : 120),
                out = quant(b, s8, 0.02f, s8 ? 0 : 128);
    const auto xq = q(b, x, in);
    const auto h = dq(b, xq, in);  // read by the GELU chain and by its final Mul
    // GELU as ConvNeXt's quantized export writes it.
    const auto erf = b.node("Add", {b.node("Erf", {b.node("Div", {h, scalar(b, 1.4142135f)})}), scalar(b, 1.0f)});
    // With int8 activations the gating Mul (x times the erf term, both dequantized) is left
    // out: in this graph ORT keeps an int8 QDQ Mul in float (its optimized model: DequantizeLinear,
    // Mul, QuantizeLinear) where it fuses the uint8 one into QLinearMul, while octet fuses both,
    // and the integer kernel differs from the float chain by a code on 108 of 4752 outputs (with
    // this pass or without it). ORT does fuse an int8 QDQ Mul in other graphs; its rule is not
    // yet known (the note of 2026-11-30). The lookups are tested on both types all the same.
    const auto gate = dq(b, q(b, erf, mid), mid);
    const auto gated = s8 ? gate : dq(b, q(b, b.node("Mul", {h, gate}), mid), mid);
    b.output(q(b, b.node("Mul", {gated, scalar(b, 0.5f)}), out), s8 ? ElemType::s8 : ElemType::u8);
    // The other ops the pass takes, the chain input on either side of a constant.
    const auto h2 = dq(b, xq, in);
    b.output(q(b, b.node("Abs", {b.node("Neg", {b.node("Relu", {b.node("Sub", {scalar(b, 0.25f), h2})})})}), out),
             s8 ? ElemType::s8 : ElemType::u8);
    // Left alone: a per-channel constant, a Sigmoid (fuse_qdq's QLinearSigmoid), a link read twice.
    b.output(q(b, b.node("Add", {dq(b, xq, in), b.random_normal_init("", {24, 1, 1})}), out), s8 ? ElemType::s8 : ElemType::u8);
    b.output(q(b, b.node("Sigmoid", {dq(b, xq, in)}), out), s8 ? ElemType::s8 : ElemType::u8);
    const auto twice = b.node("Erf", {dq(b, xq, in)});
    b.output(q(b, b.node("Mul", {twice, scalar(b, 2.0f)}), out), s8 ? ElemType::s8 : ElemType::u8);
    b.output(twice);
    const std::string name = s8 ? "float_chain_table_s8" : "float_chain_table_u8";
    qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 11, 3.0f);

    qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
      // The GELU's erf chain, its Mul by 0.5, the Sub-Relu-Neg-Abs chain.
      EXPECT_EQ(steps("QLinearTable"), 3) << name << " at " << kernels::isa_name(isa);
      EXPECT_EQ(steps("Erf"), 1) << name << ": only the Erf read twice stays";
    });
  }
}

}  // namespace float_chain_table_parity
}  // namespace octet::parity
