// The loader's verdict on which BatchNormalization nodes ONNX Runtime's NCHWc pass rewrites into
// a 1x1 depthwise conv (loader/ort_nchwc.cc, ir::kOrtNchwcBlocksAttr), rule by rule, without
// ORT: BatchNormParity.AfterWhatOrtHoldsBlocked... and ...WhereOrtKeepsThePlainLayout... pin
// the rules against ORT's output on this CPU's block.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;
using Blocks = std::vector<std::vector<int64_t>>;

// The hint on each BatchNormalization, in node order ({}: none).
Blocks bn_verdicts(const OnnxBuilder& b) {
  Blocks out;
  for (const auto& n : loader::load_onnx_bytes(b.serialize(), "t.onnx").nodes)
    if (n.op == "BatchNormalization")
      out.push_back(n.attrs.has(ir::kOrtNchwcBlocksAttr) ? n.attrs.ints(ir::kOrtNchwcBlocksAttr) : std::vector<int64_t>{});
  return out;
}

void bn_after(OnnxBuilder& b, const std::string& x, int64_t c) {
  b.output(b.node("BatchNormalization", {x, b.random_uniform_init("", {c}, 0.5f, 2.0f), b.random_normal_init("", {c}),
                                         b.random_normal_init("", {c}), b.random_uniform_init("", {c}, 0.1f, 2.0f)},
                  {{"epsilon", 1e-3f}}));
}

std::string pool1x1(OnnxBuilder& b, const std::string& x) { return b.node("MaxPool", {x}, {{"kernel_shape", {1, 1}}}); }

const std::vector<int64_t> kBoth{8, 16}, kEight{8}, kSixteen{16}, kNone{};

TEST(OrtNchwc, APoolBlocksWhenItsChannelsAreAMultipleOfTheBlock) {
  OnnxBuilder b(13);
  bn_after(b, pool1x1(b, b.input("a", {-1, 32, 5, 5})), 32);
  bn_after(b, pool1x1(b, b.input("b", {-1, 24, 5, 5})), 24);
  bn_after(b, pool1x1(b, b.input("c", {-1, 12, 5, 5})), 12);
  bn_after(b, b.input("d", {-1, 32, 5, 5}), 32);  // a graph input stays plain
  EXPECT_EQ(bn_verdicts(b), (Blocks{kBoth, kEight, kNone, kNone}));
}

TEST(OrtNchwc, ConvRules) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 12, 5, 5});
  auto conv = [&](int64_t out_c, int64_t in_c, int64_t group) {
    return b.node("Relu", {b.node("Conv", {x, b.random_normal_init("", {out_c, in_c, 1, 1})}, {{"group", group}})});
  };
  bn_after(b, conv(6, 4, 3), 6);    // grouped: 6 output channels, not a multiple of 4
  bn_after(b, conv(12, 1, 12), 12);  // depthwise
  bn_after(b, conv(16, 6, 2), 16);  // grouped, 6 input channels a group: not a multiple of a block
  bn_after(b, conv(20, 12, 1), 20);  // 12 input channels, a multiple of 4
  auto y = b.input("y", {-1, 10, 5, 5});
  // 10 input channels: not a multiple of 4, which only a block above 10 lets pass.
  bn_after(b, b.node("Relu", {b.node("Conv", {y, b.random_normal_init("", {8, 10, 1, 1})})}), 8);
  // A weight fed as a graph input: not constant to ORT.
  auto w = b.input("w", {8, 12, 1, 1});
  bn_after(b, b.node("Relu", {b.node("Conv", {x, w})}), 8);
  EXPECT_EQ(bn_verdicts(b), (Blocks{kNone, kBoth, kNone, kBoth, kSixteen, kNone}));
}

TEST(OrtNchwc, WhatKeepsTheLayoutAndWhatEndsIt) {
  OnnxBuilder b(13);
  auto p = pool1x1(b, b.input("x", {-1, 16, 5, 5}));
  auto q = pool1x1(b, b.input("y", {-1, 8, 5, 5}));
  bn_after(b, b.node("Identity", {b.node("Sigmoid", {p})}), 16);  // ORT drops the Identity
  bn_after(b, b.node("Concat", {p, q}, {{"axis", int64_t{1}}}), 24);  // 8 channels: of block 8 only
  bn_after(b, b.node("Add", {p, b.random_normal_init("", {16, 1, 1})}), 16);  // a constant operand
  bn_after(b, b.node("Mul", {p, p}), 16);
  bn_after(b, b.node("Resize", {p, "", b.initializer("", {4}, {1, 1, 2, 2})}), 16);  // not followed: plain
  bn_after(b, b.node("GlobalAveragePool", {p}), 16);
  EXPECT_EQ(bn_verdicts(b), (Blocks{kBoth, kEight, kNone, kBoth, kNone, kBoth}));
}

TEST(OrtNchwc, TheWriterLeavesTheHintOut) {
  OnnxBuilder b(13);
  bn_after(b, pool1x1(b, b.input("x", {1, 8, 9, 9})), 8);
  const ir::Graph g = loader::load_onnx_bytes(b.serialize(), "t.onnx");
  ASSERT_TRUE(g.nodes[1].attrs.has(ir::kOrtNchwcBlocksAttr));
  EXPECT_EQ(loader::save_onnx_bytes(g).find(ir::kOrtNchwcBlocksAttr), std::string::npos);
}

}  // namespace
}  // namespace octet
