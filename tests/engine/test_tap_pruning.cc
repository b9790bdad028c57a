// passes::prune_dead_taps: a conv whose outer taps read only padding at every output (a
// dilated conv on a map smaller than its dilation, DeepLabV3's ASPP) is cropped to the taps
// that meet the image, with its pads adjusted. The rule on its edge cases (stride 2,
// asymmetric pads, partly live rows, 1-D, depthwise, shared weights), the cases where it must
// not apply, and the cropped conv computing what the whole one computed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/passes.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::tap_pruning {
namespace {

using testing::OnnxBuilder;

constexpr const char* kPass = "crop conv taps that read only padding";

struct ConvCase {
  std::vector<int64_t> in;  // spatial extents: 1 (1-D) or 2
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t in_c = 4, out_c = 6, group = 1;
  std::string auto_pad;  // "" leaves the attribute out
};

ConvCase conv_case(std::vector<int64_t> in, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                   std::vector<int64_t> dilations, std::vector<int64_t> pads, int64_t in_c = 4, int64_t out_c = 6,
                   int64_t group = 1, std::string auto_pad = "") {
  return {std::move(in), std::move(kernel), std::move(strides), std::move(dilations), std::move(pads), in_c, out_c,
          group, std::move(auto_pad)};
}

// x [-1, in_c, in...] -> Conv "conv" (weights "w", bias "b") -> Relu.
ir::Graph conv_graph(const ConvCase& c) {
  OnnxBuilder b(13, "taps", 3);
  std::vector<int64_t> x_dims = {-1, c.in_c}, w_dims = {c.out_c, c.in_c / c.group};
  x_dims.insert(x_dims.end(), c.in.begin(), c.in.end());
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  testing::Attrs attrs = {{"strides", c.strides}, {"dilations", c.dilations}, {"group", c.group}};
  if (c.auto_pad.empty()) attrs.push_back({"pads", c.pads});
  else attrs.push_back({"auto_pad", c.auto_pad});
  const auto x = b.input("x", x_dims);
  b.output(b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w", w_dims, 0.0f, 0.3f),
                                           b.random_normal_init("b", {c.out_c})}, attrs, "conv")}));
  return loader::load_onnx_bytes(b.serialize(), "taps");
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

// The pass alone, with x's dims at batch 1 given.
int prune(ir::Graph& g, const ConvCase& c) {
  ir::Dims x = {1, c.in_c};
  x.insert(x.end(), c.in.begin(), c.in.end());
  return passes::prune_dead_taps(g, [&](const std::string& name) -> std::optional<ir::Dims> {
    if (name == g.inputs[0]) return x;
    return std::nullopt;
  });
}

int pass_count(const Session& s) {
  for (const auto& p : s.pass_report())
    if (p.pass == kPass) return p.changed;
  return -1;
}

// Loads the case with and without the pass; both run on the same input at batch 1 and 3,
// within float rounding of each other (the cropped conv sums the same products, fewer zeros).
void expect_same_outputs(const ConvCase& c, int pruned) {
  const ir::Graph g = conv_graph(c);
  Session with(g);
  SessionOptions off;
  off.passes.prune_dead_taps = false;
  Session without(g, off);
  EXPECT_EQ(pass_count(with), pruned);
  EXPECT_EQ(pass_count(without), -1);
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const ir::Dims dims = with.input_dims_at(batch)[0];
    const ir::TensorData x =
        ir::TensorData::f32(dims, testing::random_normal(size_t(ir::element_count(dims)), uint32_t(5 + batch)));
    const auto a = with.run({x});
    const auto b = without.run({x});
    ASSERT_EQ(a[0].dims, b[0].dims);
    size_t nonzero = 0;
    for (int64_t i = 0; i < a[0].count(); ++i) {
      const float want = b[0].as<float>()[i];
      nonzero += want != 0.0f;
      ASSERT_NEAR(a[0].as<float>()[i], want, 1e-5f * std::fabs(want) + 1e-6f) << "at " << i;
    }
    EXPECT_GT(nonzero, size_t(a[0].count()) / 4) << "the output is nearly all zero: the test proves little";
  }
}

// The cropped weights are the live window of the original ones.
void expect_window(const ir::Graph& before, const ir::Graph& after, const std::vector<int64_t>& first) {
  const ir::TensorData& w = *before.value("w").constant;
  const ir::Node& conv = node_named(after, "conv");
  const ir::TensorData& c = *after.value(conv.inputs[1]).constant;
  ASSERT_EQ(c.dims.size(), w.dims.size());
  const int64_t kh = c.dims.size() == 4 ? c.dims[2] : 1, kw = c.dims.back();
  const int64_t wh = w.dims.size() == 4 ? w.dims[2] : 1, ww = w.dims.back();
  const int64_t y0 = first.size() == 2 ? first[0] : 0, x0 = first.back();
  for (int64_t m = 0; m < c.dims[0] * c.dims[1]; ++m)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        ASSERT_EQ(c.as<float>()[(m * kh + y) * kw + x], w.as<float>()[(m * wh + y + y0) * ww + x + x0])
            << "channel pair " << m << " tap " << y << "," << x;
}

TEST(TapPruning, DilatedConvOnASmallMapBecomesPointwise) {
  // ASPP: 3x3, dilation 12, pads 12 on 6x6: tap 0 reads rows -12..-7, tap 2 rows 12..17.
  const ConvCase c = conv_case({6, 6}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12});
  ir::Graph g = conv_graph(c);
  const ir::Graph original = g;
  ASSERT_EQ(prune(g, c), 1);
  const ir::Node& conv = node_named(g, "conv");
  EXPECT_EQ(conv.attrs.ints("kernel_shape"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(conv.attrs.ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(conv.attrs.ints(passes::kPrunedTapsAttr), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(passes::pruned_taps_note(conv), "taps 3x3 -> 1x1: the others read only padding");
  EXPECT_FALSE(g.values.count("w")) << "the uncropped weights, read by nobody, stay in the graph";
  expect_window(original, g, {1, 1});
  EXPECT_EQ(prune(g, c), 0) << "a second run crops nothing more";
  expect_same_outputs(c, 1);
}

TEST(TapPruning, StrideTwo) {
  // 3 rows, stride 2, dilation 4, pads 4: outputs 0 and 1 read rows {-4,-2}, {0,2}, {4,6}.
  const ConvCase c = conv_case({3, 3}, {3, 3}, {2, 2}, {4, 4}, {4, 4, 4, 4});
  ir::Graph g = conv_graph(c);
  ASSERT_EQ(prune(g, c), 1);
  EXPECT_EQ(node_named(g, "conv").attrs.ints("kernel_shape"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(node_named(g, "conv").attrs.ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  expect_same_outputs(c, 1);
}

TEST(TapPruning, AsymmetricPadsKeepPartlyLiveRows) {
  // Rows: 4 high, dilation 3, pad top 6, bottom 0: tap 0 reads -6..-3 (dead), tap 1 -3..0 (only
  // the last output meets row 0), tap 2 0..3. Columns: 7 wide, pads 1, dilation 1: all live.
  const ConvCase c = conv_case({4, 7}, {3, 3}, {1, 1}, {3, 1}, {6, 1, 0, 1});
  ir::Graph g = conv_graph(c);
  const ir::Graph original = g;
  ASSERT_EQ(prune(g, c), 1);
  const ir::Node& conv = node_named(g, "conv");
  EXPECT_EQ(conv.attrs.ints("kernel_shape"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(conv.attrs.ints("pads"), (std::vector<int64_t>{3, 1, 0, 1}));
  expect_window(original, g, {1, 0});
  expect_same_outputs(c, 1);
}

TEST(TapPruning, OneDimensional) {
  // Length 3, kernel 5, dilation 4, pads 8: only tap 2 (rows 0..2) meets the signal.
  const ConvCase c = conv_case({3}, {5}, {1}, {4}, {8, 8});
  ir::Graph g = conv_graph(c);
  const ir::Graph original = g;
  ASSERT_EQ(prune(g, c), 1);
  EXPECT_EQ(node_named(g, "conv").attrs.ints("kernel_shape"), (std::vector<int64_t>{1}));
  EXPECT_EQ(node_named(g, "conv").attrs.ints("pads"), (std::vector<int64_t>{0, 0}));
  expect_window(original, g, {2});
  expect_same_outputs(c, 1);
}

TEST(TapPruning, DepthwiseAndAutoPad) {
  ConvCase c = conv_case({4, 4}, {3, 3}, {1, 1}, {6, 6}, {6, 6, 6, 6}, 8, 8, 8);
  expect_same_outputs(c, 1);
  // SAME_UPPER on 5x5 with dilation 6: pads 6 each side, resolved and written out.
  c = conv_case({5, 5}, {3, 3}, {1, 1}, {6, 6}, {}, 8, 16, 8, "SAME_UPPER");
  ir::Graph g = conv_graph(c);
  ASSERT_EQ(prune(g, c), 1);
  EXPECT_EQ(node_named(g, "conv").attrs.s("auto_pad"), "NOTSET");
  EXPECT_EQ(node_named(g, "conv").attrs.ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  expect_same_outputs(c, 1);
}

TEST(TapPruning, DoesNotApply) {
  // Every tap live: a 3x3 conv with pads 1.
  ConvCase c = conv_case({6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1});
  ir::Graph g = conv_graph(c);
  EXPECT_EQ(prune(g, c), 0);
  // Only tap 1 live on 2 rows, but cropping to it would need a pad of 2 - 3 = -1 on top.
  c = conv_case({2, 2}, {3, 3}, {1, 1}, {3, 3}, {2, 2, 4, 4});
  g = conv_graph(c);
  EXPECT_EQ(prune(g, c), 0);
  EXPECT_EQ(node_named(g, "conv").attrs.ints("pads"), (std::vector<int64_t>{2, 2, 4, 4}));
  // No tap live at all on 1 row (the output is the bias): left alone.
  c = conv_case({1, 1}, {3, 3}, {1, 1}, {3, 3}, {2, 2, 4, 4});
  g = conv_graph(c);
  EXPECT_EQ(prune(g, c), 0);
  // The input's dims unknown (the plans disagree beyond the batch): nothing is cropped.
  c = conv_case({6, 6}, {3, 3}, {1, 1}, {12, 12}, {12, 12, 12, 12});
  g = conv_graph(c);
  EXPECT_EQ(passes::prune_dead_taps(g, [](const std::string&) { return std::nullopt; }), 0);
  expect_same_outputs(conv_case({6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}), 0);
}

TEST(TapPruning, SharedWeightsStayForTheOtherConv) {
  // Two convs read "w": the dilated one is cropped to a weight of its own, the other keeps "w".
  OnnxBuilder b(13, "shared", 3);
  const auto x = b.input("x", {-1, 4, 6, 6});
  const auto w = b.random_normal_init("w", {4, 4, 3, 3}, 0.0f, 0.3f);
  const auto y1 = b.node("Conv", {x, w}, {{"dilations", {12, 12}}, {"pads", {12, 12, 12, 12}}}, "dilated");
  const auto y2 = b.node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "plain");
  b.output(b.node("Add", {y1, y2}));
  ir::Graph g = loader::load_onnx_bytes(b.serialize(), "shared");
  const ir::Dims dims = {1, 4, 6, 6};
  ASSERT_EQ(passes::prune_dead_taps(g, [&](const std::string& n) -> std::optional<ir::Dims> {
              if (n == "x") return dims;
              return std::nullopt;
            }),
            1);
  EXPECT_NE(node_named(g, "dilated").inputs[1], "w");
  EXPECT_EQ(node_named(g, "plain").inputs[1], "w");
  ASSERT_TRUE(g.values.count("w"));
  EXPECT_EQ(g.value("w").constant->dims, (ir::Dims{4, 4, 3, 3}));
}

}  // namespace
}  // namespace octet::tap_pruning
