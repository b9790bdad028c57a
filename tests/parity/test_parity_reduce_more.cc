// ReduceL1 / L2 / SumSquare / LogSum / LogSumExp / Prod, LpNormalization, CumSum and Hardmax against ONNX Runtime,
// in the patterns models use them: a face / re-id embedding normalised by LpNormalization or by
// ReduceL2 and a Div, and each reduction over a conv's channels-last output along channels,
// spatial axes and every axis (at batches 1 and 5, so the batch is also run in slices).
#include <gtest/gtest.h>

#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace {

using testing::OnnxBuilder;

TEST_F(ParityTest, EmbeddingNormalisation) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(17);
  auto x = b.input("x", {-1, 4, 6, 6});
  auto y = b.node("Conv", {x, b.random_normal_init("w", {16, 4, 3, 3})}, {{"pads", {1, 1, 1, 1}}});
  auto pooled = b.node("Flatten", {b.node("GlobalAveragePool", {y})});
  auto emb = b.node("Gemm", {pooled, b.random_normal_init("fc", {16, 64})});
  b.output(b.node("LpNormalization", {emb}, {{"axis", 1}, {"p", 2}}));
  b.output(b.node("LpNormalization", {emb}, {{"axis", -1}, {"p", 1}}));
  b.output(b.node("Div", {emb, b.node("ReduceL2", {emb}, {{"axes", {1}}, {"keepdims", 1}})}));
  b.output(b.node("LpNormalization", {y}, {{"axis", 1}, {"p", 2}}));  // per pixel over channels
  check_model(b, "embedding_normalisation");
}

TEST_F(ParityTest, MappedReductionsOverAChannelsLastMap) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t opset : {17, 18}) {
    OnnxBuilder b(opset);
    auto x = b.input("x", {-1, 4, 7, 9});
    auto y = b.node("Conv", {x, b.random_normal_init("w", {12, 4, 3, 3})}, {{"pads", {1, 1, 1, 1}}});
    auto pos = b.node("Sigmoid", {y});
    int k = 0;
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd"}) {
      const std::string in = std::string(op) == "ReduceLogSum" || std::string(op) == "ReduceProd" ? pos : y;
      for (std::vector<int64_t> axes : {std::vector<int64_t>{1}, std::vector<int64_t>{2, 3}, std::vector<int64_t>{-1}}) {
        if (std::string(op) == "ReduceProd" && axes.size() == 2) continue;  // 63 factors below 1: underflow noise
        const std::string name = "axes" + std::to_string(k++);
        if (opset >= 18)
          b.output(b.node(op, {in, b.initializer_i64(name, {int64_t(axes.size())}, axes)}, {{"keepdims", 0}}));
        else
          b.output(b.node(op, {in}, {{"axes", axes}, {"keepdims", 1}}));
      }
    }
    check_model(b, "mapped_reductions_opset" + std::to_string(opset));
  }
}

// CumSum along each axis of a conv output (exclusive, reverse) and Hardmax at opsets 11 and 13.
TEST_F(ParityTest, CumSumAndHardmax) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t opset : {11, 14}) {
    OnnxBuilder b(opset);
    auto x = b.input("x", {-1, 4, 5, 6});
    auto y = b.node("Conv", {x, b.random_normal_init("w", {8, 4, 3, 3})}, {{"pads", {1, 1, 1, 1}}});
    for (int64_t axis : {1, 3}) {
      b.output(b.node("CumSum", {y, b.initializer_i64("a" + std::to_string(axis), {}, {axis})},
                      {{"exclusive", int64_t(axis == 3)}, {"reverse", int64_t(axis == 1)}}));
      b.output(b.node("Hardmax", {y}, {{"axis", axis}}));
    }
    if (opset >= 13) {
      b.output(b.node("MeanVarianceNormalization", {y}));
      b.output(b.node("MeanVarianceNormalization", {y}, {{"axes", {1, 2}}}));
    }
    check_model(b, "cumsum_hardmax_opset" + std::to_string(opset));
  }
}

}  // namespace
}  // namespace octet::parity
