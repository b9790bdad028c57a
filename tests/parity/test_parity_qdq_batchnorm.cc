// A float BatchNormalization between a DequantizeLinear and a QuantizeLinear (DenseNet's
// pre-activations in a QDQ model: DQ -> BN -> Relu -> Q) runs as one QLinearBatchNormalization
// step (passes::fuse_qdq_batchnorm), still ONNX Runtime's bytes at every level, over maps of
// several L1D chunks and a tail, with a Relu, a Clip, no activation (all in registers) and a
// LeakyRelu (over a float scratch); a chain the pass must leave alone (the dequantized map read
// twice) keeps its steps and ORT's bytes too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "tests/parity/qdq_chain_util.h"

namespace octet::parity {
namespace qdq_batchnorm_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using qdq_chain::dq;
using qdq_chain::q;
using qdq_chain::Quant;
using qdq_chain::quant;

// A BN of `channels` with some negative scales and a spread of variances (epsilon 1e-5).
std::string batchnorm(OnnxBuilder& b, const std::string& x, int64_t channels) {
  std::vector<float> var(static_cast<size_t>(channels));
  for (size_t i = 0; i < var.size(); ++i) var[i] = 0.05f + 0.37f * float(i % 7);
  return b.node("BatchNormalization", {x, b.random_normal_init("", {channels}, 0.2f, 1.0f),
                                       b.random_normal_init("", {channels}), b.random_normal_init("", {channels}),
                                       b.initializer("", {channels}, var)});
}

TEST(QdqBatchNormParity, BatchNormBetweenDequantizeAndQuantizeIsOneStepWithOrtsBytes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool s8 : {false, true}) {
    OnnxBuilder b(13);
    // 24 channels (no multiple of a vector) over 30x31 pixels: several chunks of half the L1D
    // and a shorter last one.
    const ir::Dims dims{2, 24, 30, 31};
    auto x = b.input("x", {-1, 24, 30, 31});
    const Quant in = quant(b, s8, 0.04f, s8 ? -3 : 131), out = quant(b, s8, 0.03f, s8 ? 2 : 120);
    const auto xq = q(b, x, in);
    const ElemType type = s8 ? ElemType::s8 : ElemType::u8;
    b.output(q(b, b.node("Relu", {batchnorm(b, dq(b, xq, in), 24)}), out), type);  // DenseNet's
    b.output(q(b, batchnorm(b, dq(b, xq, in), 24), out), type);                     // no activation
    // A Clip (the in-register kernel's clamp at both ends) and a LeakyRelu (the float scratch).
    b.output(q(b, b.node("Clip", {batchnorm(b, dq(b, xq, in), 24), b.initializer("", {}, {-0.5f}),
                                  b.initializer("", {}, {1.5f})}), out), type);
    b.output(q(b, b.node("LeakyRelu", {batchnorm(b, dq(b, xq, in), 24)}, {{"alpha", 0.1f}}), out), type);
    // Left alone: the dequantized map is read by the BN and by the output.
    const auto shared = dq(b, xq, in);
    b.output(q(b, batchnorm(b, shared, 24), out), type);
    b.output(shared);
    const std::string name = s8 ? "qdq_batchnorm_s8" : "qdq_batchnorm_u8";
    qdq_chain::expect_ort_bytes_on_wide_input(b, name, dims, 5, 2.5f);

    qdq_chain::at_every_level(b, name, dims, [&](const auto& steps, kernels::Isa isa) {
      EXPECT_EQ(steps("QLinearBatchNormalization"), 4) << name << " at " << kernels::isa_name(isa);
      EXPECT_EQ(steps("BatchNormalization"), 1) << name << ": only the BN of a shared map stays";
    });
  }
}

}  // namespace qdq_batchnorm_parity
}  // namespace octet::parity
