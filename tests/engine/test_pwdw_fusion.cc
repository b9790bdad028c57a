// passes::fuse_pointwise_depthwise and the PointwiseDepthwise op: a 1x1 Conv (+activation)
// read only by a depthwise Conv (+activation) becomes one step, which computes what the two
// convs computed, at every ISA level and with --isa scalar.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

struct Block {
  int in_c = 8, mid = 24, hw = 20, k = 3, stride = 2;
  const char* pw_act = "Clip";     // Relu6, as torchvision exports it; "" for none
  const char* dw_act = "HardSwish";
  const char* auto_pad = "";       // "" writes explicit pads
  bool expose_intermediate = false;  // the 1x1 conv's output is also a graph output
};

ir::Graph block_graph(const Block& bl) {
  OnnxBuilder b(14, "pwdw", 3);
  auto x = b.input("x", {-1, bl.in_c, bl.hw, bl.hw});
  auto t = b.node("Conv", {x, b.random_normal_init("w1", {bl.mid, bl.in_c, 1, 1}, 0.0f, 0.3f),
                           b.random_normal_init("b1", {bl.mid})});
  if (std::string(bl.pw_act) == "Clip") {
    t = b.node("Clip", {t, b.initializer("lo", {}, {0.0f}), b.initializer("hi", {}, {6.0f})});
  } else if (*bl.pw_act) {
    t = b.node(bl.pw_act, {t});
  }
  testing::Attrs dw_attrs = {{"group", bl.mid}, {"kernel_shape", {bl.k, bl.k}}, {"strides", {bl.stride, bl.stride}}};
  if (*bl.auto_pad) {
    dw_attrs.push_back({"auto_pad", bl.auto_pad});
  } else {
    dw_attrs.push_back({"pads", {bl.k / 2, bl.k / 2, bl.k / 2, bl.k / 2}});
  }
  auto y = b.node("Conv", {t, b.random_normal_init("w2", {bl.mid, 1, bl.k, bl.k}, 0.0f, 0.3f),
                           b.random_normal_init("b2", {bl.mid})}, dw_attrs);
  if (*bl.dw_act) y = b.node(bl.dw_act, {y});
  b.output(y);
  if (bl.expose_intermediate) b.output(t);
  return loader::load_onnx_bytes(b.serialize(), "pwdw");
}

int pwdw_fused_count(const Session& s) {
  for (const auto& p : s.pass_report())
    if (p.pass == "fuse 1x1 + depthwise Conv pairs") return p.changed;
  return -1;
}

void expect_fused_matches_unfused(const Block& bl, int batch, kernels::Isa isa) {
  SessionOptions fused_options, unfused_options;
  fused_options.isa = unfused_options.isa = isa;
  unfused_options.passes.fuse_pointwise_depthwise = false;
  Session fused(block_graph(bl), fused_options);
  Session plain(block_graph(bl), unfused_options);
  ASSERT_EQ(pwdw_fused_count(fused), 1);
  ASSERT_EQ(pwdw_fused_count(plain), -1);
  const ir::Dims dims = {batch, bl.in_c, bl.hw, bl.hw};
  int steps = 0;
  for (const PlanStep& step : fused.plan_for(std::vector<ir::Dims>{dims}).steps()) {
    if (step.op != "PointwiseDepthwise") continue;
    ++steps;
    EXPECT_EQ(step.scalar(), isa == kernels::Isa::scalar) << step.kernel;
  }
  EXPECT_EQ(steps, 1);
  const auto in = ir::TensorData::f32(dims, testing::random_normal(size_t(batch) * bl.in_c * bl.hw * bl.hw, 11));
  const auto a = fused.run({in});
  const auto b = plain.run({in});
  ASSERT_EQ(a[0].dims, b[0].dims);
  for (int64_t i = 0; i < a[0].count(); ++i) {
    const float want = b[0].as<float>()[i];
    ASSERT_NEAR(a[0].as<float>()[i], want, 1e-5f * std::fabs(want) + 1e-6f) << kernels::isa_name(isa) << " at " << i;
  }
}

TEST(PointwiseDepthwise, FusedPairMatchesTheTwoConvsAtEveryLevel) {
  Block s2;  // MobileNetV2's stride-2 expand
  Block s1;
  s1.stride = 1;
  s1.k = 5;
  s1.pw_act = "HardSwish";
  s1.dw_act = "";
  Block same;
  same.auto_pad = "SAME_UPPER";
  same.pw_act = "";
  same.dw_act = "Relu";
  Block wide;  // rows too wide for the default ring budget to hold a whole image
  wide.in_c = 16;
  wide.mid = 96;
  wide.hw = 112;
  for (kernels::Isa isa : kernels::runnable_isas()) {
    for (const Block& bl : {s2, s1, same}) {
      expect_fused_matches_unfused(bl, 1, isa);
      expect_fused_matches_unfused(bl, 3, isa);
    }
    if (isa != kernels::Isa::scalar) expect_fused_matches_unfused(wide, 2, isa);
  }
}

TEST(PointwiseDepthwise, NotFusedWhenTheIntermediateIsAnOutput) {
  Block bl;
  bl.expose_intermediate = true;
  bl.pw_act = "";
  Session s(block_graph(bl));
  EXPECT_EQ(pwdw_fused_count(s), 0);
  for (const auto& n : s.graph().nodes) EXPECT_NE(n.op, "PointwiseDepthwise");
}

TEST(PointwiseDepthwise, NotFusedBeforeADenseConv) {
  // A 1x1 conv followed by a grouped (not depthwise) conv stays two nodes.
  OnnxBuilder b(13, "pwgrouped", 3);
  auto x = b.input("x", {1, 8, 6, 6});
  auto t = b.node("Conv", {x, b.random_normal_init("w1", {16, 8, 1, 1})});
  auto y = b.node("Conv", {t, b.random_normal_init("w2", {16, 4, 3, 3})}, {{"group", 4}, {"pads", {1, 1, 1, 1}}});
  b.output(y);
  Session s(loader::load_onnx_bytes(b.serialize(), "pwgrouped"));
  EXPECT_EQ(pwdw_fused_count(s), 0);
}

}  // namespace
}  // namespace octet
