// passes::compute_ranges_in_producers: which DynamicQuantizeLinear nodes take their range from
// the step that writes their input (ConvIntegerToFloat, MatMulIntegerToFloat, Add, Mul), that
// readers of one tensor share one range, and that the quantized result, scale and zero point
// are those of the DynamicQuantizeLinear's own range pass (the graph without the dynamic passes).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::ElemType;
using testing::OnnxBuilder;

// x -> DynamicQuantizeLinear (a graph input: no producer);
// Relu(x) -> DynamicQuantizeLinear (Relu gathers no range);
// Add(x, x) -> two DynamicQuantizeLinear (one range, shared); Mul(x, c) -> DynamicQuantizeLinear.
ir::Graph graph() {
  OnnxBuilder b(13, "ranges", 3);
  auto x = b.input("x", {-1, 4, 6, 6});
  auto c = b.random_uniform_init("c", {1, 4, 1, 1}, -2.0f, 2.0f);
  int k = 0;
  auto quantize = [&](const std::string& v) {
    for (const std::string& o : b.node_multi("DynamicQuantizeLinear", {v}, 3))
      b.output(o, k++ % 3 == 1 ? ElemType::f32 : ElemType::u8);
  };
  quantize(x);
  quantize(b.node("Relu", {x}));
  auto sum = b.node("Add", {x, x});
  quantize(sum);
  quantize(sum);
  quantize(b.node("Mul", {x, c}));
  return loader::load_onnx_bytes(b.serialize(), "ranges");
}

TEST(DynamicRanges, TakenFromAddAndMulNotFromInputsOrRelu) {
  Session s(graph());
  std::vector<std::string> given;  // the range input of each DynamicQuantizeLinear, in order
  for (const auto& n : s.graph().nodes)
    if (n.op == "DynamicQuantizeLinear") given.push_back(n.inputs.size() == 2 ? n.inputs[1] : "");
  ASSERT_EQ(given.size(), 5u);
  EXPECT_EQ(given[0], "") << "a graph input has no producer to gather its range";
  EXPECT_EQ(given[1], "") << "Relu does not gather ranges";
  EXPECT_NE(given[2], "");
  EXPECT_EQ(given[2], given[3]) << "two readers of one tensor share its range";
  EXPECT_NE(given[4], "");
  for (const auto& n : s.graph().nodes) {
    if (n.op == "Add" || n.op == "Mul") {
      EXPECT_EQ(n.outputs.size(), 2u) << n.op;
    }
  }
}

TEST(DynamicRanges, SameCodesScalesAndZeroPointsAsTheOwnRangePass) {
  SessionOptions own;
  own.passes.fuse_dynamic = false;
  Session gathered(graph()), separate(graph(), own);
  for (const auto& n : separate.graph().nodes) {
    if (n.op == "DynamicQuantizeLinear") {
      ASSERT_EQ(n.inputs.size(), 1u);
    }
  }
  for (int64_t batch : {1, 5}) {
    ir::TensorData x = ir::TensorData::f32({batch, 4, 6, 6}, testing::random_normal(size_t(batch) * 144, 9));
    const auto a = gathered.run({x}), b = separate.run({x});
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) EXPECT_EQ(a[o].bytes, b[o].bytes) << "output " << o << " batch " << batch;
  }
}

// A finite input whose product overflows: the infinity is in the range the Mul gathered.
TEST(DynamicRanges, AnInfiniteRangeFromTheProducerIsRefused) {
  OnnxBuilder b(13, "overflow", 3);
  auto x = b.input("x", {-1, 4});
  auto y = b.node("Mul", {x, b.initializer("c", {1, 4}, {1.0f, 2.0f, 4.0f, 8.0f})});
  for (const std::string& o : b.node_multi("DynamicQuantizeLinear", {y}, 3)) b.output(o, ElemType::u8);
  Session s(loader::load_onnx_bytes(b.serialize(), "overflow"));
  size_t given = 0;
  for (const auto& n : s.graph().nodes) given += n.op == "DynamicQuantizeLinear" && n.inputs.size() == 2;
  ASSERT_EQ(given, 1u);
  for (float big : {1.0f, 3e38f}) {
    const ir::TensorData x_in = ir::TensorData::f32({1, 4}, std::vector<float>{-1.0f, 0.5f, 2.0f, big});
    if (big == 1.0f) {
      EXPECT_NO_THROW(s.run({x_in}));
      continue;
    }
    try {
      s.run({x_in});
      ADD_FAILURE() << "no error for an infinite product";
    } catch (const ir::Error& e) {
      EXPECT_NE(std::string(e.what()).find("NaN or infinite"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace octet
