// passes::fuse_activations on ConvTranspose: the activation after it runs in the gather pass
// (F32ConvTranspose's epilogue; the reference applies it at --isa scalar) on the same float
// values the separate step would read, with the same microkernel, so the output is bit-identical
// to the two steps it replaces (ORT runs them apart). In a QDQ model it is taken only inside the
// float unit (DQ -> ConvTranspose -> act -> Q), never across a Q/DQ pair: there the activation
// runs on its INT8 table, as ORT runs it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/qdq_patterns.h"

namespace octet {
namespace {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::QParams;

struct Geometry {
  int64_t c, m, group, k, hw;
};

std::string activation(OnnxBuilder& b, const std::string& act, const std::string& t) {
  if (act == "Clip") {
    return b.node("Clip", {t, b.initializer("", testing::TensorValue::scalar_f32(0.0f)),
                           b.initializer("", testing::TensorValue::scalar_f32(6.0f))});
  }
  if (act == "LeakyRelu") return b.node("LeakyRelu", {t}, {{"alpha", 0.1f}});
  if (act == "Silu") return b.node("Mul", {t, b.node("Sigmoid", {t})});
  return b.node(act, {t});
}

ir::Graph deconv_act(const Geometry& g, const std::string& act) {
  OnnxBuilder b(17, "deconv_act", 5);
  auto x = b.input("x", {-1, g.c, g.hw, g.hw});
  auto t = b.node("ConvTranspose",
                  {x, b.random_normal_init("w", {g.c, g.m / g.group, g.k, g.k}, 0, 0.4f), b.random_normal_init("b", {g.m})},
                  {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}, {"group", g.group}});
  b.output(activation(b, act, t));
  return loader::load_onnx_bytes(b.serialize(), "deconv_act");
}

const ir::Node* only_conv_transpose(const Session& s) {
  const ir::Node* found = nullptr;
  for (const auto& n : s.graph().nodes)
    if (n.op == "ConvTranspose") {
      EXPECT_EQ(found, nullptr) << "two ConvTranspose nodes";
      found = &n;
    }
  return found;
}

TEST(ConvTransposeFusion, ActivationRunsInTheGatherPassBitIdenticalToTheSeparateStep) {
  // GEMM + gather (K = 8, channels a vector and a tail), the direct path (one input channel per
  // group), and an odd channel count with batch 2.
  const Geometry geometries[] = {{8, 8, 1, 3, 7}, {16, 16, 16, 4, 6}, {5, 11, 1, 3, 5}};
  for (const kernels::Isa isa : {kernels::active_isa(), kernels::Isa::scalar}) {
    for (const Geometry& g : geometries) {
      for (const std::string act : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSwish", "Silu", "Tanh"}) {
        SCOPED_TRACE(act + " c" + std::to_string(g.c) + " at " + kernels::isa_name(isa));
        SessionOptions fused_options, apart;
        fused_options.isa = apart.isa = isa;
        apart.passes.fuse_activations = false;
        Session fused(deconv_act(g, act), fused_options);
        Session plain(deconv_act(g, act), apart);
        const ir::Node* ct = only_conv_transpose(fused);
        ASSERT_NE(ct, nullptr);
        EXPECT_EQ(ct->attrs.s("fused_act"), act);
        EXPECT_EQ(fused.graph().nodes.size(), 1u);
        EXPECT_GT(plain.graph().nodes.size(), 1u);
        const int64_t batch = g.c == 5 ? 2 : 1;
        const ir::Dims dims = {batch, g.c, g.hw, g.hw};
        auto in = ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), 11, 0, 2.0f));
        const auto a = fused.run({in});
        const auto b = plain.run({in});
        ASSERT_EQ(a[0].dims, b[0].dims);
        EXPECT_EQ(std::memcmp(a[0].as<float>(), b[0].as<float>(), size_t(a[0].count()) * sizeof(float)), 0);
      }
    }
  }
}

// DQ -> ConvTranspose [-> Q -> DQ when `across`] -> act -> Q -> DQ.
ir::Graph qdq_deconv_act(const std::string& act, bool across) {
  OnnxBuilder b(17, "qdq_deconv_act", 6);
  const QParams xq{1.0f / 64, 128, ElemType::u8}, yq{0.05f, 128, ElemType::u8};
  auto x = testing::qdq(b, b.input("x", {-1, 8, 7, 7}), xq);
  auto w = testing::qdq_weights(b, {8, 8, 3, 3}, true, 0.3f, 1);
  auto t = b.node("ConvTranspose", {x, w.dq, testing::qdq_bias(b, 8, xq.scale, w.scales)},
                  {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}});
  if (across) t = testing::qdq(b, t, yq);
  b.output(testing::qdq(b, activation(b, act, t), yq));
  return loader::load_onnx_bytes(b.serialize(), "qdq_deconv_act");
}

TEST(ConvTransposeFusion, QdqTakesTheActivationInsideTheFloatUnitOnly) {
  for (const std::string act : {"Relu", "Sigmoid", "HardSwish", "LeakyRelu"}) {
    SCOPED_TRACE(act);
    {
      Session s(qdq_deconv_act(act, false));
      const ir::Node* ct = only_conv_transpose(s);
      ASSERT_NE(ct, nullptr);
      EXPECT_EQ(ct->attrs.s("fused_act"), act);
    }
    {
      Session s(qdq_deconv_act(act, true));
      const ir::Node* ct = only_conv_transpose(s);
      ASSERT_NE(ct, nullptr);
      EXPECT_FALSE(ct->attrs.has("fused_act"));
    }
  }
}

}  // namespace
}  // namespace octet
