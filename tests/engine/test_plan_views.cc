// Views (engine/plan_views.cc): a Reshape's output is its input's memory, and a Concat's inputs
// are written by their producers where the Concat's output holds them. Each plan here runs
// against the same plan with every value in its own memory (SessionOptions::views false): the
// bytes must be identical, the steps that became views must say so ("view", "in_place"), and an
// observer must see every value densely, as it would without views.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/qdq_patterns.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

std::string conv(OnnxBuilder& b, const std::string& x, int64_t in_c, int64_t out_c, int64_t k, int64_t group,
                 const std::string& name, const std::string& residual = "") {
  auto y = b.node("Conv", {x, b.random_normal_init(name + "_w", {out_c, in_c / group, k, k}, 0, 0.3f),
                           b.random_normal_init(name + "_b", {out_c})},
                  {{"pads", {k / 2, k / 2, k / 2, k / 2}}, {"group", group}});
  if (!residual.empty()) y = b.node("Add", {y, residual});
  return b.node("Relu", {y});
}

// A fire module whose branches are every conv driver: a 1x1 GEMM, a 3x3 Winograd (16 channels),
// a 5x5 IGEMM, a depthwise conv (a driver that writes densely: through a buffer), a 3x3 and a
// 1x1 conv with a fused residual, and one branch read twice (copied); then a Reshape and a join
// of blocks.
ir::Graph branches() {
  OnnxBuilder b(17, "views", 7);
  auto x = b.input("x", {-1, 16, 9, 11});
  auto squeeze = conv(b, x, 16, 16, 1, 1, "sq");
  auto gemm = conv(b, squeeze, 16, 24, 1, 1, "e1");
  auto wino = conv(b, squeeze, 16, 32, 3, 1, "e3");
  auto igemm = conv(b, squeeze, 16, 8, 5, 1, "e5");
  auto dw = conv(b, squeeze, 16, 16, 3, 16, "dw");
  auto res = conv(b, squeeze, 16, 16, 3, 1, "res", squeeze);
  auto res1 = conv(b, squeeze, 16, 16, 1, 1, "res1", squeeze);
  auto twice = conv(b, squeeze, 16, 8, 1, 1, "tw");
  auto cat = b.node("Concat", {gemm, wino, igemm, dw, res, res1, twice}, {{"axis", int64_t(1)}});
  auto head = conv(b, cat, 120, 8, 1, 1, "head");
  auto other = b.node("Sigmoid", {twice});
  auto flat = b.node("Flatten", {head}, {{"axis", int64_t(1)}});
  auto flat_other = b.node("Flatten", {other}, {{"axis", int64_t(1)}});
  auto joined = b.node("Concat", {flat, flat_other}, {{"axis", int64_t(0)}});
  b.output(joined);
  b.output(cat);
  return loader::load_onnx_bytes(b.serialize(), "views");
}

std::map<std::string, std::vector<std::byte>> observed(Session& s, const ir::TensorData& in,
                                                       std::vector<ir::TensorData>* out) {
  std::map<std::string, std::vector<std::byte>> seen;
  const ValueObserver observer = [&](const std::string& name, const TensorInfo& info, const void* data) {
    const auto* p = static_cast<const std::byte*>(data);
    seen[name].assign(p, p + info.bytes());
  };
  *out = s.run({in}, nullptr, &observer);
  return seen;
}

// `g` planned with views and without (every value in its own memory, SessionOptions::views
// false) at `isa`, run on one random input of `dims`: every output must have the same bytes.
// Returns the session with views, for the test to look at its plan.
Session expect_the_bytes_of_copies(const ir::Graph& g, const ir::Dims& dims, uint32_t seed, float stddev = 1.0f,
                                   kernels::Isa isa = kernels::active_isa()) {
  SessionOptions with, without;
  with.isa = without.isa = isa;
  without.views = false;
  Session viewed(g, with), copied(g, without);
  const auto in = ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), seed, 0, stddev));
  const auto a = viewed.run({in});
  const auto c = copied.run({in});
  EXPECT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size() && i < c.size(); ++i) {
    EXPECT_EQ(a[i].dims, c[i].dims) << "output " << i;
    EXPECT_TRUE(a[i].bytes == c[i].bytes) << "output " << i << " differs with views";
  }
  return viewed;
}

TEST(PlanViews, ConcatInputsWrittenInPlaceAndReshapesAsViewsGiveTheBytesOfCopies) {
  for (const kernels::Isa isa : {kernels::active_isa(), kernels::Isa::scalar}) {
    for (const int64_t batch : {int64_t(1), int64_t(2)}) {
      SCOPED_TRACE(std::string(kernels::isa_name(isa)) + " batch " + std::to_string(batch));
      SessionOptions with, without;
      with.isa = without.isa = isa;
      without.views = false;
      Session viewed(branches(), with), copied(branches(), without);
      const ir::Dims dims = {batch, 16, 9, 11};
      const auto in = ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), 3, 0, 1.0f));
      std::vector<ir::TensorData> a, b;
      const auto seen_a = observed(viewed, in, &a);
      const auto seen_b = observed(copied, in, &b);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].dims, b[i].dims);
        EXPECT_EQ(std::memcmp(a[i].bytes.data(), b[i].bytes.data(), a[i].bytes.size()), 0) << "output " << i;
      }
      ASSERT_EQ(seen_a.size(), seen_b.size());
      for (const auto& [name, bytes] : seen_a) EXPECT_TRUE(bytes == seen_b.at(name)) << name << " observed differently";

      int in_place = 0, views = 0, copies = 0;
      for (const PlanStep& s : viewed.plan_for({dims}).steps()) {
        in_place += s.kernel == "in_place";
        views += s.kernel == "view";
        copies += s.op == "Concat" && s.kernel != "in_place";
      }
      for (const PlanStep& s : copied.plan_for({dims}).steps())
        EXPECT_TRUE(s.kernel != "in_place" && s.kernel != "view") << s.node << " without views ran " << s.kernel;
      // The fire module's Concat still copies the branch read twice; the Flattens are views; the
      // join along axis 0 is of whole blocks at any batch, in place.
      EXPECT_EQ(views, 2);
      EXPECT_EQ(in_place, 1);
      EXPECT_EQ(copies, 1);
    }
  }
}

// Every conv driver writes a slice of a wider map's channels: the fire module's Concat copies
// nothing when no branch has another reader.
TEST(PlanViews, EveryConvDriverWritesItsSliceOfTheConcat) {
  OnnxBuilder b(17, "fire", 7);
  auto x = b.input("x", {1, 16, 9, 11});
  auto squeeze = conv(b, x, 16, 16, 1, 1, "sq");
  b.output(b.node("Concat",
                  {conv(b, squeeze, 16, 24, 1, 1, "e1"), conv(b, squeeze, 16, 32, 3, 1, "e3"),
                   conv(b, squeeze, 16, 8, 5, 1, "e5"), conv(b, squeeze, 16, 16, 3, 16, "dw"),
                   conv(b, squeeze, 16, 16, 3, 1, "res", squeeze), conv(b, squeeze, 16, 16, 1, 1, "res1", squeeze),
                   conv(b, squeeze, 16, 12, 3, 4, "grouped")},
                  {{"axis", int64_t(1)}}));
  const ir::Dims dims = {1, 16, 9, 11};
  Session viewed = expect_the_bytes_of_copies(loader::load_onnx_bytes(b.serialize(), "fire"), dims, 5);
  std::string kernels;
  for (const PlanStep& s : viewed.plan_for({dims}).steps()) {
    kernels += s.node + ": " + s.kernel + "\n";
    if (s.op == "Concat") {
      EXPECT_EQ(s.kernel, "in_place");
    }
  }
  SCOPED_TRACE(kernels);
  EXPECT_NE(kernels.find("winograd"), std::string::npos);
  EXPECT_NE(kernels.find("dwconv"), std::string::npos);
}

// A Concat of one input (DenseNet's first dense layer of each block) is that input's memory, even
// when other steps read the input too.
TEST(PlanViews, AConcatOfOneInputIsThatInput) {
  OnnxBuilder b(17, "one", 7);
  auto x = b.input("x", {-1, 16, 9, 11});
  auto pooled = b.node("MaxPool", {b.node("Relu", {x})}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  auto joined = b.node("Concat", {pooled}, {{"axis", int64_t(1)}});
  b.output(b.node("Sigmoid", {joined}));
  b.output(b.node("Tanh", {pooled}));
  const ir::Dims dims = {2, 16, 9, 11};
  Session viewed = expect_the_bytes_of_copies(loader::load_onnx_bytes(b.serialize(), "one"), dims, 7);
  for (const PlanStep& s : viewed.plan_for({dims}).steps())
    if (s.op == "Concat") {
      EXPECT_EQ(s.kernel, "in_place");
    }
}

// ConvNeXt's block: a channels-last map permuted to [N, H, W, C] for a LayerNormalization and a
// MatMul, then back for the residual Add. Both Transposes keep the memory order of their input
// and are views; one that swaps H and W (a real reordering) is a copy.
TEST(PlanViews, TransposesThatKeepTheMemoryOrderAreViews) {
  OnnxBuilder b(17, "permute", 7);
  auto x = b.input("x", {-1, 16, 6, 5});
  auto map = conv(b, x, 16, 16, 3, 16, "dw");
  auto nhwc = b.node("Transpose", {map}, {{"perm", {0, 2, 3, 1}}});
  auto normed = b.node("LayerNormalization", {nhwc, b.random_normal_init("ln_s", {16}, 1, 0.1f),
                                              b.random_normal_init("ln_b", {16})},
                       {{"axis", int64_t(-1)}});
  auto mlp = b.node("MatMul", {normed, b.random_normal_init("fc", {16, 16}, 0, 0.3f)});
  auto nchw = b.node("Transpose", {mlp}, {{"perm", {0, 3, 1, 2}}});
  b.output(b.node("Add", {nchw, map}));
  b.output(b.node("Sigmoid", {b.node("Transpose", {map}, {{"perm", {0, 1, 3, 2}}})}));
  for (const int64_t batch : {int64_t(1), int64_t(2)}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const ir::Dims dims = {batch, 16, 6, 5};
    Session viewed = expect_the_bytes_of_copies(loader::load_onnx_bytes(b.serialize(), "permute"), dims, 11);
    std::vector<std::string> kernels;
    for (const PlanStep& s : viewed.plan_for({dims}).steps())
      if (s.op == "Transpose") kernels.push_back(s.kernel);
    ASSERT_EQ(kernels.size(), 3u);
    EXPECT_EQ(kernels[0], "view");
    EXPECT_EQ(kernels[1], "view");
    EXPECT_NE(kernels[2], "view");
  }
}

// A DenseNet block: each layer normalizes the Concat of every map before it, and the block's
// last Concat joins them all. The layers' Concats are the first channels of the last one, read
// there by their BatchNormalization (pixels the last one's C apart), and each layer's conv writes
// its map once, in its place in the last Concat.
ir::Graph dense_block() {
  OnnxBuilder b(17, "dense", 7);
  auto x = b.input("x", {-1, 8, 10, 12});
  auto bn = [&](const std::string& t, int64_t c, const std::string& name) {
    return b.node("Relu", {b.node("BatchNormalization",
                                  {t, b.random_uniform_init(name + "_s", {c}, 0.5f, 1.5f), b.random_normal_init(name + "_b", {c}),
                                   b.random_normal_init(name + "_m", {c}), b.random_uniform_init(name + "_v", {c}, 0.5f, 2.0f)})});
  };
  std::vector<std::string> maps = {b.node("MaxPool", {x}, {{"kernel_shape", {1, 1}}})};
  for (int layer = 0; layer < 3; ++layer) {
    const int64_t c = 8 + 4 * layer;
    const std::string name = "l" + std::to_string(layer);
    auto joined = b.node("Concat", maps, {{"axis", int64_t(1)}});
    auto h = conv(b, bn(joined, c, name), c, 16, 1, 1, name + "a");
    maps.push_back(b.node("Conv", {h, b.random_normal_init(name + "_w", {4, 16, 3, 3}, 0, 0.2f)},
                          {{"pads", {1, 1, 1, 1}}}));
  }
  b.output(bn(b.node("Concat", maps, {{"axis", int64_t(1)}}), 20, "last"));
  return loader::load_onnx_bytes(b.serialize(), "dense");
}

TEST(PlanViews, DenseNetConcatsAreTheFirstChannelsOfTheBlocksLast) {
  const ir::Dims dims = {2, 8, 10, 12};
  Session viewed = expect_the_bytes_of_copies(dense_block(), dims, 21);
  const Plan& plan = viewed.plan_for({dims});
  int prefixes = 0, maps_in_place = 0;
  for (const PlanStep& s : plan.steps()) {
    const PlanValue& v = plan.value(s.output_names[0]);
    if (s.op == "Concat" && v.row_stride == 20) ++prefixes;
    if (s.op == "Conv" && v.row_stride == 20) ++maps_in_place;
  }
  EXPECT_EQ(prefixes, 3) << "the layers' Concats as views of the last";
  EXPECT_EQ(maps_in_place, 3) << "each layer's map written in its place";
}

// YOLOv5's head: Sigmoid -> Split into x y, w h and the class scores -> the boxes recomputed ->
// Concat back. The scores stay where the Sigmoid wrote them: the Split's input is the Concat's
// output, and neither copies them. With `early_piece` the Concat's first piece is a conv that
// runs before the Split: written in place it would overwrite the x y the Split has yet to read,
// so it must be copied after.
ir::Graph head(bool early_piece) {
  OnnxBuilder b(17, "head", 7);
  auto x = b.input("x", {-1, 8, 5, 6});
  std::string early;
  if (early_piece) early = conv(b, x, 8, 2, 1, 1, "early");
  auto sig = b.node("Sigmoid", {conv(b, x, 8, 9, 1, 1, "det")});
  const auto parts = b.node_multi("Split", {sig, b.initializer_i64("sizes", {3}, {2, 2, 5})}, 3, {{"axis", int64_t(1)}});
  auto xy = b.node("Mul", {parts[0], parts[0]});
  auto wh = b.node("Add", {parts[1], parts[1]});
  auto joined = b.node("Concat", {early_piece ? early : xy, wh, parts[2]}, {{"axis", int64_t(1)}});
  b.output(b.node("Tanh", {joined}));
  if (early_piece) b.output(xy);
  return loader::load_onnx_bytes(b.serialize(), "head");
}

TEST(PlanViews, SplitPiecesJoinedBackStayWhereTheSplitTookThem) {
  for (const bool early : {false, true}) {
    SCOPED_TRACE(early ? "a piece computed before the Split" : "YOLOv5's head");
    const ir::Dims dims = {2, 8, 5, 6};
    Session viewed = expect_the_bytes_of_copies(head(early), dims, 9, 2.0f);
    std::string strided;
    for (const auto& [name, v] : viewed.plan_for({dims}).values())
      if (v.row_stride != 0) strided += name + " ";
    EXPECT_EQ(strided, "/Split_output_2 ") << "only the scores as a view into the Split's input";
  }
}

// INT8: a QDQ fire module (QLinearConv branches into a QLinearConcat) and a dynamically
// quantized one (ConvIntegerToFloat branches into a float Concat). A static branch quantized with
// the Concat's own scale and zero point is copied as it is, so its conv writes it in place; one
// with a scale of its own too, once its conv has taken the Concat's requantization
// (passes::fuse_concat_requantization, tests/parity/test_parity_concat_views.cc).
ir::Graph int8_fire(bool dynamic) {
  using testing::QParams;
  OnnxBuilder b(17, dynamic ? "dynamic_fire" : "qdq_fire", 11);
  auto x = b.input("x", {-1, 16, 9, 11});
  std::vector<std::string> branches;
  if (dynamic) {
    const testing::Attrs pad1 = {{"pads", {1, 1, 1, 1}}};
    branches.push_back(b.node("Relu", {testing::dynamic_conv(b, x, {24, 16, 1, 1}, {}, true)}));
    branches.push_back(testing::dynamic_conv(b, x, {32, 16, 3, 3}, pad1, true));
    branches.push_back(testing::dynamic_conv(b, x, {16, 1, 3, 3}, {{"pads", {1, 1, 1, 1}}, {"group", int64_t(16)}}, true));
    b.output(b.node("Concat", branches, {{"axis", int64_t(1)}}));
    return loader::load_onnx_bytes(b.serialize(), "dynamic_fire");
  }
  const QParams xq{1.0f / 32, 128}, yq{1.0f / 16, 0}, own{1.0f / 8, 0};
  auto xd = testing::qdq(b, x, xq);
  auto branch = [&](int64_t out_c, int64_t k, int64_t group, const QParams& q) {
    auto w = testing::qdq_weights(b, {out_c, 16 / group, k, k}, true);
    auto y = b.node("Conv", {xd, w.dq, testing::qdq_bias(b, out_c, xq.scale, w.scales)},
                    {{"pads", {k / 2, k / 2, k / 2, k / 2}}, {"group", group}});
    return testing::qdq(b, b.node("Relu", {y}), q);
  };
  branches = {branch(24, 1, 1, yq), branch(32, 3, 1, yq), branch(16, 3, 16, yq), branch(8, 3, 1, own)};
  b.output(testing::qdq(b, b.node("Concat", branches, {{"axis", int64_t(1)}}), yq));
  return loader::load_onnx_bytes(b.serialize(), "qdq_fire");
}

TEST(PlanViews, Int8ConvBranchesWriteTheirSliceOfTheConcat) {
  for (const bool dynamic : {false, true}) {
    for (const kernels::Isa isa : {kernels::active_isa(), kernels::Isa::scalar}) {
      SCOPED_TRACE(std::string(dynamic ? "dynamic" : "static QDQ") + " at " + kernels::isa_name(isa));
      const ir::Dims dims = {2, 16, 9, 11};
      Session viewed = expect_the_bytes_of_copies(int8_fire(dynamic), dims, 13, 1.0f, isa);
      int strided = 0;
      std::string concat;
      const Plan& plan = viewed.plan_for({dims});
      for (const auto& [name, v] : plan.values()) strided += v.row_stride != 0;
      for (const PlanStep& s : plan.steps())
        if (s.op == "Concat" || s.op == "QLinearConcat") concat = s.op + " " + s.kernel;
      EXPECT_EQ(strided, dynamic ? 3 : 4) << concat;
      EXPECT_EQ(concat, dynamic ? "Concat in_place" : "QLinearConcat in_place");
    }
  }
}

}  // namespace
}  // namespace octet
