// A float Add of a constant row along the last axis between a DequantizeLinear and a
// QuantizeLinear (the bias of a Linear torch exports as MatMul + Add, which the quantizer leaves
// in float: ConvNeXt's MLP) runs as one QLinearBiasAdd step (passes::fuse_qdq_bias_add), still
// ONNX Runtime's bytes at every level: rank 3 and 4, a row of 37 (no multiple of a vector) over
// several L1D chunks and a tail, the bias as either operand and as [C] or [1, 1, C]. Left alone,
// with ORT's bytes too: a row along another axis, a dequantized map read twice, and an x whose
// last axis the Add broadcasts (x [N, L, 1] + B [C] grows the output).
#include <gtest/gtest.h>

#include <string>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace qdq_bias_add_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

TEST(QdqBiasAddParity, BiasAddBetweenDequantizeAndQuantizeIsOneStepWithOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    for (bool rank4 : {false, true}) {
      OnnxBuilder b(13);
      // 150 rows of 37 (5550 floats an image: chunks of a quarter of the L1D and a shorter last).
      const ir::Dims dims = rank4 ? ir::Dims{2, 10, 15, 37} : ir::Dims{2, 150, 37};
      auto x = b.input("x", rank4 ? std::vector<int64_t>{-1, 10, 15, 37} : std::vector<int64_t>{-1, 150, 37});
      const Quant in = quant(b, s8, 0.04f, s8 ? -3 : 131), out = quant(b, s8, 0.03f, s8 ? 2 : 120);
      const auto xq = q(b, x, in);
      const ElemType type = s8 ? ElemType::s8 : ElemType::u8;
      const auto bias = b.random_normal_init("", {37}, 0.0f, 1.5f);
      b.output(q(b, b.node("Add", {dq(b, xq, in), bias}), out), type);
      const auto row = b.random_normal_init("", rank4 ? std::vector<int64_t>{1, 1, 1, 37} : std::vector<int64_t>{1, 1, 37});
      b.output(q(b, b.node("Add", {row, dq(b, xq, in)}), out), type);  // the bias first
      // Left alone: a row along the second-to-last axis; the dequantized map read twice; an x
      // of last extent 1 that the Add broadcasts to 37.
      const auto other_axis = b.random_normal_init("", rank4 ? std::vector<int64_t>{15, 1} : std::vector<int64_t>{150, 1});
      b.output(q(b, b.node("Add", {dq(b, xq, in), other_axis}), out), type);
      const auto shared = dq(b, xq, in);
      b.output(q(b, b.node("Add", {shared, bias}), out), type);
      b.output(shared);
      const auto narrow = q(b, b.node("ReduceMean", {dq(b, xq, in)}, {{"axes", {-1}}, {"keepdims", 1}}), in);
      b.output(q(b, b.node("Add", {dq(b, narrow, in), bias}), out), type);
      const std::string name = std::string("qdq_bias_add_") + (s8 ? "s8" : "u8") + (rank4 ? "_rank4" : "_rank3");
      qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 7, 2.5f);

      qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
        EXPECT_EQ(steps("QLinearBiasAdd"), 2) << name << " at " << kernels::isa_name(isa);
        EXPECT_EQ(steps("Add"), 3) << name << ": the three Adds the pass must leave";
      });
    }
  }
}

}  // namespace qdq_bias_add_parity
}  // namespace octet::parity
