// Constant folding runs ops on row-major constants; ops that read another layout (Conv and
// the pools read NHWC) must get the data relayouted, so a folded result equals the same op
// run on the same tensor fed at run time.
#include <gtest/gtest.h>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

// y = Op(x) with x either a graph input or an initializer holding `values`.
ir::Graph one_op(const std::string& op, const testing::Attrs& attrs, bool constant_input,
                 const std::vector<float>& values, bool with_weights) {
  OnnxBuilder b(13, "fold", 3);
  const std::vector<int64_t> dims = {2, 3, 5, 4};
  auto x = constant_input ? b.initializer("x", dims, values) : b.input("x", dims);
  std::vector<std::string> in = {x};
  if (with_weights) {
    in.push_back(b.random_normal_init("w", {4, 3, 3, 3}));
    in.push_back(b.random_normal_init("b", {4}));
  }
  auto y = b.node(op, in, attrs);
  if (constant_input) {
    // Something must read an input; add 0 to a dummy one so the graph has an input at all.
    auto d = b.input("d", {1});
    y = b.node("Add", {y, b.node("Mul", {d, b.initializer("zero", {1}, {0.0f})})});
  }
  b.output(y);
  return loader::load_onnx_bytes(b.serialize(), "fold");
}

void expect_fold_equals_run(const std::string& op, const testing::Attrs& attrs, bool with_weights) {
  auto values = testing::random_normal(2 * 3 * 5 * 4, 11);
  Session folded{one_op(op, attrs, true, values, with_weights)};
  // Folding evaluates with the scalar ref kernels; the run-time side uses them too, so the
  // two agree bit for bit and any difference is a layout mistake.
  SessionOptions ref_kernels;
  ref_kernels.isa = kernels::Isa::scalar;
  Session ran{one_op(op, attrs, false, values, with_weights), ref_kernels};
  auto a = folded.run({ir::TensorData::f32({1}, std::vector<float>{1.0f})});
  auto b = ran.run({ir::TensorData::f32({2, 3, 5, 4}, values)});
  ASSERT_EQ(a[0].dims, b[0].dims) << op;
  for (int64_t i = 0; i < a[0].count(); ++i) ASSERT_FLOAT_EQ(a[0].as<float>()[i], b[0].as<float>()[i]) << op << " at " << i;
}

TEST(ConstantFolding, ConvOnAConstantEqualsConvAtRunTime) {
  expect_fold_equals_run("Conv", {{"pads", {1, 1, 1, 1}}}, true);
}

TEST(ConstantFolding, PoolsOnAConstantEqualPoolsAtRunTime) {
  expect_fold_equals_run("MaxPool", {{"kernel_shape", {2, 2}}}, false);
  expect_fold_equals_run("AveragePool", {{"kernel_shape", {3, 2}}, {"pads", {1, 0, 1, 1}}}, false);
  expect_fold_equals_run("GlobalAveragePool", {}, false);
  expect_fold_equals_run("GlobalMaxPool", {}, false);
}

}  // namespace
}  // namespace octet
