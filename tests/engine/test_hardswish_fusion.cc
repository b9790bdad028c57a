// HardSwish as torch exports it below opset 14, Mul(t, HardSigmoid(t)) with alpha = 1/6 and
// beta = 0.5 after a Conv (MobileNetV3's and DeepLabV3's backbones), fused into the Conv by
// passes::fuse_activations as HardSwish: bit-identical to the two ops (the HardSwish kernel's
// formula is x * HardSigmoid(x) with the same alpha), and left alone with another alpha.
#include <gtest/gtest.h>

#include <bit>
#include <string>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::hardswish_fusion {
namespace {

using testing::OnnxBuilder;

ir::Graph conv_then_gate(float alpha, bool gate_first) {
  OnnxBuilder b(13, "hswish", 3);
  const auto x = b.input("x", {-1, 8, 9, 9});
  const auto t = b.node("Conv", {x, b.random_normal_init("w", {16, 8, 3, 3}, 0.0f, 0.3f),
                                 b.random_normal_init("b", {16})},
                        {{"pads", {1, 1, 1, 1}}}, "conv");
  const auto gate = b.node("HardSigmoid", {t}, {{"alpha", alpha}, {"beta", 0.5f}});
  b.output(b.node("Mul", gate_first ? std::vector<std::string>{gate, t} : std::vector<std::string>{t, gate}));
  return loader::load_onnx_bytes(b.serialize(), "hswish");
}

std::string fused_act(const Session& s) {
  for (const auto& n : s.graph().nodes)
    if (n.name == "conv") return n.attrs.has("fused_act") ? n.attrs.s("fused_act") : "";
  return "no conv";
}

TEST(HardSwishFusion, HardSigmoidTimesInputBecomesTheConvsHardSwish) {
  for (bool gate_first : {false, true}) {
    SCOPED_TRACE(gate_first ? "Mul(gate, t)" : "Mul(t, gate)");
    const ir::Graph g = conv_then_gate(1.0f / 6.0f, gate_first);
    Session fused(g);
    SessionOptions off;
    off.passes.fuse_activations = false;
    Session plain(g, off);
    EXPECT_EQ(fused_act(fused), "HardSwish");
    EXPECT_EQ(fused.graph().nodes.size(), 1u);
    for (int64_t batch : {1, 3}) {
      const ir::Dims dims = fused.input_dims_at(batch)[0];
      const ir::TensorData x = ir::TensorData::f32(
          dims, testing::random_normal(size_t(ir::element_count(dims)), uint32_t(batch), 0.0f, 3.0f));
      const auto a = fused.run({x});
      const auto p = plain.run({x});
      ASSERT_EQ(a[0].dims, p[0].dims);
      for (int64_t i = 0; i < a[0].count(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(a[0].as<float>()[i]), std::bit_cast<uint32_t>(p[0].as<float>()[i]))
            << "batch " << batch << " at " << i;
    }
  }
}

TEST(HardSwishFusion, AnotherAlphaIsNotHardSwish) {
  Session s(conv_then_gate(0.2f, false));
  EXPECT_EQ(fused_act(s), "");
  int muls = 0;
  for (const auto& n : s.graph().nodes) muls += n.op == "Mul";
  EXPECT_EQ(muls, 1);
}

}  // namespace
}  // namespace octet::hardswish_fusion
