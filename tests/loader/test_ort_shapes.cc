// The loader's verdict on what ONNX Runtime knows of an AveragePool's input shape
// (loader/ort_shapes.cc, ir::kShapeKnownToOrtAttr), rule by rule, without ORT: the parity tests
// (GapOrderParity.AveragePoolAfterAReshape...) pin the same rules against ORT's output.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

// The hint on each AveragePool, in node order.
std::vector<int64_t> verdicts(const OnnxBuilder& b) {
  std::vector<int64_t> out;
  for (const auto& n : loader::load_onnx_bytes(b.serialize(), "t.onnx").nodes)
    if (n.op == "AveragePool") out.push_back(n.attrs.i(ir::kShapeKnownToOrtAttr, -1));
  return out;
}

void pool(OnnxBuilder& b, const std::string& x) { b.output(b.node("AveragePool", {x}, {{"kernel_shape", {3, 3}}})); }

std::string dim_of(OnnxBuilder& b, const std::string& shape, int64_t i) {
  return b.node("Unsqueeze", {b.node("Gather", {shape, b.initializer_i64("", {}, {i})}, {{"axis", 0}}),
                              b.initializer_i64("", {1}, {0})});
}

TEST(OrtShapes, APoolOnAGraphInputOrAConvIsKnown) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 16, 9, 9});
  pool(b, x);
  pool(b, b.node("Conv", {x, b.random_normal_init("w", {8, 16, 1, 1})}));
  EXPECT_EQ(verdicts(b), (std::vector<int64_t>{1, 1}));
}

// Weights of another rank than the input: ONNX's conv shape inference reads past its vectors
// there (the loader fuzzer's crash, a null read), so the resolution leaves the node alone; the
// model loads, and planning it is what refuses it. Conv and ConvTranspose, either rank larger.
TEST(OrtShapes, AConvWhoseWeightsHaveAnotherRankIsLeftUnresolved) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    for (const bool input_smaller : {true, false}) {
      OnnxBuilder b(13);
      auto x = input_smaller ? b.input("x", {-1, 3}) : b.input("x", {-1, 3, 5, 5, 5});
      auto w = b.random_normal_init("w", {3, 3, 3, 3});
      b.output(b.node("GlobalAveragePool", {b.node("Relu", {b.node(op, {x, w})})}));
      EXPECT_EQ(loader::load_onnx_bytes(b.serialize(), "t.onnx").nodes.size(), 3u) << op;
    }
  }
}

TEST(OrtShapes, AReshapeToAShapeOfTheSymbolicBatchIsKnownOnlyWhenFused) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 16, 9, 9});
  auto y = b.input("y", {-2, 3});
  auto shape = b.node("Shape", {x});
  // [0, 16, 9, 9]: the batch is x's own.
  pool(b, b.node("Reshape", {x, b.node("Concat", {dim_of(b, shape, 0), b.initializer_i64("", {3}, {16, 9, 9})},
                                                 {{"axis", 0}})}));
  // [M, 9, 16, 9], the batch of y and x's height at position 1: neither is x's own dimension
  // there, two -1, not fused, and nothing propagates a symbol.
  pool(b, b.node("Reshape", {x, b.node("Concat", {dim_of(b, b.node("Shape", {y}), 0), dim_of(b, shape, 2),
                                                 b.initializer_i64("", {2}, {16, 9})}, {{"axis", 0}})}));
  EXPECT_EQ(verdicts(b), (std::vector<int64_t>{1, 0}));
}

TEST(OrtShapes, ConstantFoldingMakesAFixedShapeTargetKnown) {
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 16, 81});
  auto shape = b.node("Shape", {x});
  auto halves = b.node("Div", {b.node("Gather", {shape, b.initializer_i64("", {}, {1})}, {{"axis", 0}}),
                               b.initializer_i64("", {}, {2})});
  auto target = b.node("Concat", {b.initializer_i64("", {1}, {4}),
                                  b.node("Unsqueeze", {halves, b.initializer_i64("", {1}, {0})}),
                                  b.initializer_i64("", {2}, {9, 9})}, {{"axis", 0}});
  pool(b, b.node("Reshape", {x, target}));
  EXPECT_EQ(verdicts(b), (std::vector<int64_t>{1}));
}

TEST(OrtShapes, PropagationCarriesScalarsButNeverReadsAConstant) {
  OnnxBuilder b(15);
  auto x = b.input("x", {-1, 16, 9, 9});
  auto z = b.input("z", {1296});
  auto shape = b.node("Shape", {x}, {{"start", 1}});
  auto one = b.node("Div", {b.node("Gather", {shape, b.initializer_i64("", {}, {1})}, {{"axis", 0}}),
                            b.node("Gather", {shape, b.initializer_i64("", {}, {2})}, {{"axis", 0}})});
  auto one_1d = b.node("Unsqueeze", {one, b.initializer_i64("", {1}, {0})});
  pool(b, b.node("Reshape", {z, b.node("Concat", {one_1d, dim_of(b, shape, 0), dim_of(b, shape, 1), dim_of(b, shape, 2)},
                                                 {{"axis", 0}})}));
  pool(b, b.node("Reshape", {z, b.node("Concat", {b.initializer_i64("", {1}, {1}), dim_of(b, shape, 0),
                                                 dim_of(b, shape, 1), dim_of(b, shape, 2)}, {{"axis", 0}})}));
  EXPECT_EQ(verdicts(b), (std::vector<int64_t>{1, 0}));
}

TEST(OrtShapes, TheWriterLeavesTheHintOut) {
  OnnxBuilder b(13);
  pool(b, b.input("x", {1, 8, 9, 9}));
  const ir::Graph g = loader::load_onnx_bytes(b.serialize(), "t.onnx");
  ASSERT_TRUE(g.nodes[0].attrs.has(ir::kShapeKnownToOrtAttr));
  EXPECT_EQ(loader::save_onnx_bytes(g).find(ir::kShapeKnownToOrtAttr), std::string::npos);
}

}  // namespace
}  // namespace octet
