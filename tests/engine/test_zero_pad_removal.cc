// passes::remove_zero_pads: a Pad by zeros (torch writes one before DenseNet's transition
// AveragePool) is a copy that also made the planner relayout around it (Pad runs row-major,
// the convs and the pool channels-last). Removed, the plan has neither; a Pad by anything else
// stays, and the output is what the Pad gave.
#include <gtest/gtest.h>

#include <bit>
#include <string>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::zero_pad_removal {
namespace {

using testing::OnnxBuilder;

// x -> Conv 1x1 -> Pad(pads) -> AveragePool 2x2 stride 2, or the Pad's output as the graph's.
ir::Graph conv_pad_pool(const std::vector<int64_t>& pads, bool pad_is_output = false) {
  OnnxBuilder b(13, "zero_pad", 3);
  const auto x = b.input("x", {-1, 8, 8, 8});
  const auto t = b.node("Conv", {x, b.random_normal_init("w", {16, 8, 1, 1}, 0.0f, 0.3f)});
  const auto p = b.node("Pad", {t, b.initializer_i64("pads", {int64_t(pads.size())}, pads)});
  b.output(pad_is_output ? p : b.node("AveragePool", {p}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
  return loader::load_onnx_bytes(b.serialize(), "zero_pad");
}

int steps_of(Session& s, const std::string& op_prefix) {
  int n = 0;
  for (const auto& step : s.plan_for(s.input_dims_at(2)).steps()) n += step.op.rfind(op_prefix, 0) == 0;
  return n;
}

void expect_identical(Session& a, Session& b) {
  const ir::Dims dims = a.input_dims_at(2)[0];
  const ir::TensorData x = ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), 9));
  const auto ya = a.run({x});
  const auto yb = b.run({x});
  ASSERT_EQ(ya[0].dims, yb[0].dims);
  for (int64_t i = 0; i < ya[0].count(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(ya[0].as<float>()[i]), std::bit_cast<uint32_t>(yb[0].as<float>()[i])) << i;
}

TEST(ZeroPadRemoval, PadByZerosGoesWithItsRelayouts) {
  for (bool pad_is_output : {false, true}) {
    SCOPED_TRACE(pad_is_output ? "the Pad's output is the graph's" : "Pad then AveragePool");
    const ir::Graph g = conv_pad_pool({0, 0, 0, 0, 0, 0, 0, 0}, pad_is_output);
    Session s(g);
    EXPECT_EQ(steps_of(s, "Pad"), 0);
    if (!pad_is_output) {
      EXPECT_EQ(steps_of(s, "Relayout"), 1) << "only the input's";
    }
    EXPECT_EQ(s.outputs()[0].name, g.outputs[0]);
    // The pass always runs: compare with the graph written without the Pad (same weights, seed).
    OnnxBuilder b(13, "zero_pad", 3);
    const auto x = b.input("x", {-1, 8, 8, 8});
    const auto t = b.node("Conv", {x, b.random_normal_init("w", {16, 8, 1, 1}, 0.0f, 0.3f)});
    b.output(pad_is_output ? t : b.node("AveragePool", {t}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}));
    Session plain(loader::load_onnx_bytes(b.serialize(), "plain"));
    expect_identical(s, plain);
  }
}

TEST(ZeroPadRemoval, PadByOneIsNotRemoved) {
  // As the graph's output (no window op to fold it into, tests/engine/test_pad_folding.cc).
  Session s(conv_pad_pool({0, 0, 1, 1, 0, 0, 1, 1}, true));
  EXPECT_EQ(steps_of(s, "Pad"), 1);
  EXPECT_EQ(s.outputs()[0].dims, (ir::Dims{-1, 16, 10, 10}));
}

}  // namespace
}  // namespace octet::zero_pad_removal
