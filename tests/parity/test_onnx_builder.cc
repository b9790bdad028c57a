// The model builder the parity suite rests on: what it writes is what the ONNX schema says.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <numeric>

#include "loader/onnx_loader.h"
#include "tests/parity/parity_harness.h"
#include "tests/util/onnx_builder.h"

namespace octet::testing {
namespace {

const onnx::AttributeProto& attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a;
  throw std::runtime_error("no attribute " + name);
}

TEST(OnnxBuilder, InputsHaveSymbolicAndFixedDims) {
  OnnxBuilder b(13);
  b.input("x", {-1, 3, -2, 8});
  const auto& in = b.model().graph().input(0);
  EXPECT_EQ(in.name(), "x");
  const auto& t = in.type().tensor_type();
  EXPECT_EQ(t.elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(t.shape().dim_size(), 4);
  EXPECT_EQ(t.shape().dim(0).dim_param(), "N");
  EXPECT_EQ(t.shape().dim(1).dim_value(), 3);
  EXPECT_EQ(t.shape().dim(2).dim_param(), "M");
  EXPECT_EQ(b.model().opset_import(0).version(), 13);
}

TEST(OnnxBuilder, AttributeKindsFollowTheValues) {
  OnnxBuilder b(13);
  auto y = b.node("Conv", {"x", "w"},
                  {{"group", 16}, {"pads", {1, 1, 1, 1}}, {"alpha", 0.25f}, {"scales", {0.5f, 2.0f}},
                   {"auto_pad", "SAME_UPPER"}, {"big", int64_t{1} << 40}, {"value", TensorValue::s64({2}, {-1, 7})}});
  const auto& n = b.model().graph().node(0);
  EXPECT_EQ(n.op_type(), "Conv");
  EXPECT_EQ(n.name(), "/Conv");
  EXPECT_EQ(y, "/Conv_output_0");
  EXPECT_EQ(attr(n, "group").type(), onnx::AttributeProto::INT);
  EXPECT_EQ(attr(n, "group").i(), 16);
  EXPECT_EQ(attr(n, "pads").type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(attr(n, "pads").ints_size(), 4);
  EXPECT_EQ(attr(n, "alpha").type(), onnx::AttributeProto::FLOAT);
  EXPECT_FLOAT_EQ(attr(n, "alpha").f(), 0.25f);
  EXPECT_EQ(attr(n, "scales").type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(attr(n, "auto_pad").type(), onnx::AttributeProto::STRING);
  EXPECT_EQ(attr(n, "auto_pad").s(), "SAME_UPPER");
  EXPECT_EQ(attr(n, "big").i(), int64_t{1} << 40);
  EXPECT_EQ(attr(n, "value").type(), onnx::AttributeProto::TENSOR);
  EXPECT_EQ(attr(n, "value").t().data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(attr(n, "value").t().int64_data(1), 7);
}

TEST(OnnxBuilder, NamesAreUniqueAndMultipleOutputsWork) {
  OnnxBuilder b(13);
  auto a = b.node("Relu", {"x"});
  auto c = b.node("Relu", {a});
  auto named = b.node("Relu", {c}, {}, "my_relu");
  auto outs = b.node_multi("Split", {named}, 2, {{"axis", 1}});
  auto given = b.node_multi("Split", {named}, 2, {}, "", {"left", "right"});
  EXPECT_EQ(a, "/Relu_output_0");
  EXPECT_EQ(c, "/Relu_1_output_0");
  EXPECT_EQ(named, "my_relu_output_0");
  EXPECT_EQ(outs, (std::vector<std::string>{"/Split_output_0", "/Split_output_1"}));
  EXPECT_EQ(given, (std::vector<std::string>{"left", "right"}));
  EXPECT_THROW(b.node_multi("Split", {named}, 2, {}, "", {"one"}), std::invalid_argument);
}

TEST(OnnxBuilder, InitializersAndConstants) {
  OnnxBuilder b(13);
  b.initializer("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.initializer_i64("shape", {2}, {0, -1});
  auto k = b.constant(TensorValue::scalar_f32(6.0f));
  const auto& g = b.model().graph();
  ASSERT_EQ(g.initializer_size(), 2);
  EXPECT_EQ(g.initializer(0).data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(g.initializer(0).float_data_size(), 6);
  EXPECT_EQ(g.initializer(1).data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(g.initializer(1).int64_data(1), -1);
  EXPECT_EQ(g.node(0).op_type(), "Constant");
  EXPECT_EQ(k, "/Constant_output_0");
  EXPECT_EQ(g.node(0).attribute(0).t().dims_size(), 0);  // a scalar
  EXPECT_THROW(b.initializer("bad", {2, 2}, {1, 2, 3}), std::invalid_argument);
}

TEST(OnnxBuilder, RandomValuesAreDeterministicAndNormal) {
  const auto a = random_normal(10000, 5), a2 = random_normal(10000, 5), c = random_normal(10000, 6);
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, c);
  const double mean = std::accumulate(a.begin(), a.end(), 0.0) / double(a.size());
  double var = 0;
  for (float v : a) var += (v - mean) * (v - mean);
  var /= double(a.size());
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 1.0, 0.05);
  const auto u = random_uniform(1000, 3, -2.0f, 3.0f);
  for (float v : u) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
  OnnxBuilder b1(13, "g", 9), b2(13, "g", 9);
  EXPECT_EQ(b1.normal(17), b2.normal(17));
}

TEST(OnnxBuilder, SavedModelsLoadInOctet) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 4});
  auto y = b.node("Relu", {b.node("Gemm", {x, b.random_normal_init("w", {3, 4})}, {{"transB", 1}})});
  b.output(y);
  std::string bytes = b.serialize();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.graph().node_size(), 2);

  parity::ScratchDir dir("octet-builder-test");
  const std::string path = (dir.path() / "m.onnx").string();
  b.save(path);
  const ir::Graph g = loader::load_onnx(path);
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{y});
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_THROW(b.save((dir.path() / "missing" / "m.onnx").string()), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));
}

}  // namespace
}  // namespace octet::testing
