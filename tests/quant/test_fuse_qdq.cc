// fuse_qdq on hand-built QDQ graphs: which node units become INT8 ops, which Relu/Clip the
// output clamp absorbs, and which units must stay in float.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/int8_ops.h"
#include "engine/passes.h"

namespace octet {
namespace {

using ir::DType;
using ir::TensorData;

TensorData scalar_f32(float v) { return TensorData::f32({}, std::vector<float>{v}); }
TensorData scalar_q(DType t, int v) {
  TensorData d = TensorData::make(t, {});
  if (t == DType::u8) d.as<uint8_t>()[0] = uint8_t(v);
  else d.as<int8_t>()[0] = int8_t(v);
  return d;
}

// A small QDQ graph builder: x -> Q -> DQ -> op ... with constants added by name.
struct QdqGraph {
  ir::Graph g;
  QdqGraph() {
    g.source = "test";
    g.opset = 13;
    g.inputs = {"x"};
    g.values["x"] = ir::Value{"x", DType::f32, ir::Dims{1, 4, 5, 5}, std::nullopt};
  }
  std::string constant(const std::string& name, TensorData t) {
    ir::Value v{name, t.dtype, t.dims, std::move(t)};
    g.values[name] = std::move(v);
    return name;
  }
  std::string node(const std::string& op, std::vector<std::string> in, const std::string& out, ir::Attrs a = {}) {
    ir::Node n;
    n.name = out + "_node";
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.attrs = std::move(a);
    g.nodes.push_back(std::move(n));
    g.values[out].name = out;
    return out;
  }
  // Q then DQ of `t` with per-tensor parameters; returns the DQ output.
  std::string qdq(const std::string& t, float scale, DType type, int zp) {
    auto s = constant(t + "_s", scalar_f32(scale));
    auto z = constant(t + "_z", scalar_q(type, zp));
    auto q = node("QuantizeLinear", {t, s, z}, t + "_q");
    return node("DequantizeLinear", {q, s, z}, t + "_dq");
  }
  // DQ of an int8 weight constant [4, 4/group, 3, 3], per channel along axis 0.
  std::string weights(int64_t in_per_group) {
    TensorData w = TensorData::make(DType::s8, {4, in_per_group, 3, 3});
    for (int64_t i = 0; i < w.count(); ++i) w.as<int8_t>()[i] = int8_t((i * 37) % 255 - 127);
    auto wq = constant("w", std::move(w));
    auto ws = constant("w_s", TensorData::f32({4}, std::vector<float>{0.01f, 0.02f, 0.03f, 0.04f}));
    auto wz = constant("w_z", TensorData::make(DType::s8, {4}));
    ir::Attrs a;
    a.set("axis", int64_t{0});
    return node("DequantizeLinear", {wq, ws, wz}, "w_dq", a);
  }
  std::string bias() {
    TensorData b = TensorData::make(DType::s32, {4});
    for (int i = 0; i < 4; ++i) b.as<int32_t>()[i] = 100 * i - 150;
    auto bq = constant("b", std::move(b));
    auto bs = constant("b_s", TensorData::f32({4}, std::vector<float>{1e-4f, 2e-4f, 3e-4f, 4e-4f}));
    auto bz = constant("b_z", TensorData::make(DType::s32, {4}));
    ir::Attrs a;
    a.set("axis", int64_t{0});
    return node("DequantizeLinear", {bq, bs, bz}, "b_dq", a);
  }
  static ir::Attrs conv_attrs() {
    ir::Attrs a;
    a.set("auto_pad", std::string("NOTSET"));
    a.set("dilations", std::vector<int64_t>{});
    a.set("kernel_shape", std::vector<int64_t>{});
    a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    a.set("strides", std::vector<int64_t>{});
    a.set("group", int64_t{1});
    return a;
  }
};

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> o;
  for (const auto& n : g.nodes) o.push_back(n.op);
  return o;
}
bool has_op(const ir::Graph& g, const std::string& op) {
  auto o = ops(g);
  return std::find(o.begin(), o.end(), op) != o.end();
}
const ir::Node& only(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op == op) return n;
  throw std::runtime_error("no " + op);
}

// x -> Q/DQ -> Conv(DQ w, DQ b) -> [act] -> Q/DQ -> y
QdqGraph conv_unit(const std::string& act, DType out_type, int out_zp) {
  QdqGraph q;
  auto x = q.qdq("x", 0.05f, DType::u8, 128);
  auto y = q.node("Conv", {x, q.weights(4), q.bias()}, "conv", QdqGraph::conv_attrs());
  if (act == "Relu") y = q.node("Relu", {y}, "relu");
  if (act == "Clip6") {
    auto lo = q.constant("lo", scalar_f32(0));
    auto hi = q.constant("hi", scalar_f32(6));
    y = q.node("Clip", {y, lo, hi}, "clip");
  }
  auto out = q.qdq(y, 0.02f, out_type, out_zp);
  q.g.outputs = {out};
  return q;
}

TEST(FuseQdq, ConvUnitBecomesQLinearConvWithInt32Bias) {
  auto q = conv_unit("", DType::u8, 10);
  passes::optimize(q.g);
  EXPECT_EQ(ops(q.g), (std::vector<std::string>{"QuantizeLinear", "QLinearConv", "DequantizeLinear"}));
  const ir::Node& c = only(q.g, "QLinearConv");
  ASSERT_EQ(c.inputs.size(), 9u);
  EXPECT_EQ(c.inputs[0], "x_q");
  EXPECT_EQ(c.inputs[3], "w");   // the int8 weights, not their float version
  EXPECT_EQ(c.inputs[4], "w_s");
  EXPECT_EQ(c.inputs[8], "b");   // the int32 bias as written
  EXPECT_EQ(c.attrs.ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(c.outputs[0], "conv_q");
}

TEST(FuseQdq, ReluAbsorbedOnlyWhenZeroPointIsTheTypeMinimum) {
  auto absorbed = conv_unit("Relu", DType::u8, 0);
  passes::optimize(absorbed.g);
  EXPECT_TRUE(has_op(absorbed.g, "QLinearConv"));
  EXPECT_FALSE(has_op(absorbed.g, "Relu"));

  auto signed_min = conv_unit("Relu", DType::s8, -128);
  passes::optimize(signed_min.g);
  EXPECT_TRUE(has_op(signed_min.g, "QLinearConv"));

  // zp 10: codes 0..9 stand for negative values the Relu would have zeroed.
  auto kept = conv_unit("Relu", DType::u8, 10);
  passes::optimize(kept.g);
  EXPECT_FALSE(has_op(kept.g, "QLinearConv"));
  EXPECT_TRUE(has_op(kept.g, "Conv"));
}

TEST(FuseQdq, ClipAbsorbedOnlyWhenQRangeLiesInside) {
  // scale 0.02, zp 0: Q covers [0, 5.1] inside [0, 6].
  auto inside = conv_unit("Clip6", DType::u8, 0);
  passes::optimize(inside.g);
  EXPECT_TRUE(has_op(inside.g, "QLinearConv"));
  EXPECT_FALSE(has_op(inside.g, "Clip"));
  // zp 100: Q reaches -2.0, below the clip's 0.
  auto outside = conv_unit("Clip6", DType::u8, 100);
  passes::optimize(outside.g);
  EXPECT_FALSE(has_op(outside.g, "QLinearConv"));
}

TEST(FuseQdq, FloatWeightsWithoutDequantizeStayFloat) {
  QdqGraph q;
  auto x = q.qdq("x", 0.05f, DType::u8, 128);
  auto w = q.constant("wf", TensorData::make(DType::f32, {4, 4, 3, 3}));
  auto y = q.node("Conv", {x, w}, "conv", QdqGraph::conv_attrs());
  q.g.outputs = {q.qdq(y, 0.02f, DType::u8, 0)};
  passes::optimize(q.g);
  EXPECT_TRUE(has_op(q.g, "Conv"));
  EXPECT_FALSE(has_op(q.g, "QLinearConv"));
}

TEST(FuseQdq, UnmatchedWeightDequantizeFoldsToFloat) {
  // No Q after the conv: the unit cannot be fused, and its weights end up as a float constant.
  QdqGraph q;
  auto x = q.qdq("x", 0.05f, DType::u8, 128);
  q.g.outputs = {q.node("Conv", {x, q.weights(4)}, "conv", QdqGraph::conv_attrs())};
  passes::optimize(q.g);
  const ir::Node& c = only(q.g, "Conv");
  ASSERT_TRUE(q.g.is_constant(c.inputs[1]));
  const TensorData& w = *q.g.value(c.inputs[1]).constant;
  EXPECT_EQ(w.dtype, DType::f32);
  EXPECT_FLOAT_EQ(w.as<float>()[0], -127 * 0.01f);  // (i*37 % 255 - 127) * scale[0] at i = 0
}

TEST(FuseQdq, AddMulPoolSigmoidBecomeContribOps) {
  QdqGraph q;
  auto a = q.qdq("x", 0.05f, DType::u8, 128);
  auto gap = q.qdq(q.node("GlobalAveragePool", {a}, "gap"), 0.01f, DType::u8, 128);
  auto sig = q.qdq(q.node("Sigmoid", {gap}, "sig"), 1.0f / 255, DType::u8, 0);
  auto mul = q.qdq(q.node("Mul", {a, sig}, "mul"), 0.05f, DType::u8, 128);
  auto add = q.qdq(q.node("Add", {mul, a}, "add"), 0.1f, DType::u8, 128);
  q.g.outputs = {add};
  passes::optimize(q.g);
  for (const char* op : {"QLinearGlobalAveragePool", "QLinearSigmoid", "QLinearMul", "QLinearAdd"}) {
    ASSERT_TRUE(has_op(q.g, op)) << op;
    EXPECT_EQ(only(q.g, op).domain, "com.microsoft") << op;
  }
  for (const char* op : {"GlobalAveragePool", "Sigmoid", "Mul", "Add"}) EXPECT_FALSE(has_op(q.g, op)) << op;
}

TEST(FuseQdq, AddWithMixedOperandTypesStaysFloat) {
  QdqGraph q;
  auto a = q.qdq("x", 0.05f, DType::u8, 128);
  auto b = q.qdq(q.node("Relu", {a}, "r"), 0.05f, DType::s8, 0);
  q.g.outputs = {q.qdq(q.node("Add", {a, b}, "add"), 0.1f, DType::u8, 128)};
  passes::optimize(q.g);
  EXPECT_TRUE(has_op(q.g, "Add"));
  EXPECT_FALSE(has_op(q.g, "QLinearAdd"));
}

TEST(FuseQdq, ReshapeRunsOnIntegersOnlyWithEqualParameters) {
  for (float out_scale : {0.05f, 0.06f}) {
    QdqGraph q;
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    auto shape = q.constant("shape", TensorData::s64({2}, std::vector<int64_t>{1, -1}));
    q.g.outputs = {q.qdq(q.node("Reshape", {a, shape}, "flat"), out_scale, DType::u8, 128)};
    passes::optimize(q.g);
    const ir::Node& r = only(q.g, "Reshape");
    if (out_scale == 0.05f) EXPECT_EQ(r.inputs[0], "x_q");
    else EXPECT_EQ(r.inputs[0], "x_dq");
  }
}

TEST(FuseQdq, SplitRunsOnIntegersOnlyWhenEveryOutputKeepsTheParameters) {
  for (float second_scale : {0.05f, 0.06f}) {
    QdqGraph q;
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    ir::Node split;
    split.name = "split";
    split.op = "Split";
    split.inputs = {a};
    split.outputs = {"half0", "half1"};
    split.attrs.set("axis", int64_t{1});
    q.g.nodes.push_back(split);
    for (const char* h : {"half0", "half1"}) q.g.values[h].name = h;
    q.g.outputs = {q.qdq("half0", 0.05f, DType::u8, 128), q.qdq("half1", second_scale, DType::u8, 128)};
    passes::optimize(q.g);
    const ir::Node& s = only(q.g, "Split");
    if (second_scale == 0.05f) {
      EXPECT_EQ(s.inputs[0], "x_q");
      EXPECT_EQ(s.outputs, (std::vector<std::string>{"half0_q", "half1_q"}));
    } else {
      EXPECT_EQ(s.inputs[0], "x_dq");  // one output requantizes: the whole Split stays in float
    }
  }
}

TEST(FuseQdq, DepthToSpaceSpaceToDepthExpandGatherRunOnIntegers) {
  for (const char* op : {"DepthToSpace", "SpaceToDepth", "Expand", "Gather"}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 4, 6, 6};
    auto a = q.qdq("x", 0.05f, DType::s8, -3);
    std::vector<std::string> in = {a};
    ir::Attrs attrs;
    if (std::string(op) == "DepthToSpace" || std::string(op) == "SpaceToDepth") attrs.set("blocksize", int64_t{2});
    if (std::string(op) == "Expand") in.push_back(q.constant("shape", TensorData::s64({4}, std::vector<int64_t>{2, 1, 1, 1})));
    if (std::string(op) == "Gather") in.push_back(q.constant("idx", TensorData::s64({2}, std::vector<int64_t>{3, 0})));
    q.g.outputs = {q.qdq(q.node(op, in, "moved", attrs), 0.05f, DType::s8, -3)};
    passes::optimize(q.g);
    const auto o = ops(q.g);
    EXPECT_EQ(std::count(o.begin(), o.end(), "DequantizeLinear"), 1) << op;  // the graph output's
    EXPECT_EQ(only(q.g, op).inputs[0], "x_q") << op;
  }
}

// GatherElements, GatherND and Tile copy codes: between equal parameters they run on them.
TEST(FuseQdq, GatherElementsGatherNdTileRunOnIntegers) {
  for (const char* op : {"GatherElements", "GatherND", "Tile"}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 4, 6, 6};
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    std::vector<std::string> in = {a};
    const std::string o(op);
    if (o == "GatherElements") in.push_back(q.constant("idx", TensorData::s64({1, 2, 6, 6}, std::vector<int64_t>(72, -1))));
    if (o == "GatherND") in.push_back(q.constant("idx", TensorData::s64({2, 2}, std::vector<int64_t>{0, 3, 0, -1})));
    if (o == "Tile") in.push_back(q.constant("reps", TensorData::s64({4}, std::vector<int64_t>{1, 1, 2, 3})));
    q.g.outputs = {q.qdq(q.node(op, in, "moved"), 0.05f, DType::u8, 128)};
    passes::optimize(q.g);
    const auto ops_left = ops(q.g);
    EXPECT_EQ(std::count(ops_left.begin(), ops_left.end(), "DequantizeLinear"), 1) << op;
    EXPECT_EQ(only(q.g, op).inputs[0], "x_q") << op;
  }
}

// Trilu copies codes and writes zeros: between equal parameters it runs on the codes, its zeros
// the zero point's code.
TEST(FuseQdq, TriluRunsOnIntegersWithTheZeroPointForZeros) {
  for (float out_scale : {0.05f, 0.06f}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 4, 6, 6};
    auto a = q.qdq("x", 0.05f, DType::s8, -3);
    q.g.outputs = {q.qdq(q.node("Trilu", {a}, "tri"), out_scale, DType::s8, -3)};
    passes::optimize(q.g);
    const ir::Node& t = only(q.g, "Trilu");
    EXPECT_EQ(t.inputs[0], out_scale == 0.05f ? "x_q" : "x_dq");
    if (out_scale == 0.05f) EXPECT_EQ(t.attrs.i(int8::kZeroCodeAttr), -3);
    else EXPECT_FALSE(t.attrs.has(int8::kZeroCodeAttr));
  }
}

// ScatterND and ScatterElements move codes (replace) or pick them (max, min) when data, updates
// and output share their parameters; add and mul compute, and updates at other parameters would
// need requantizing: those stay in float.
TEST(FuseQdq, ScattersRunOnIntegersOnlyWhenTheyMoveCodesAtEqualParameters) {
  struct Case {
    const char* op;
    const char* reduction;
    float updates_scale;
    bool on_codes;
  };
  for (const Case& c : {Case{"ScatterND", "none", 0.05f, true}, Case{"ScatterND", "max", 0.05f, true},
                        Case{"ScatterND", "min", 0.05f, true}, Case{"ScatterND", "add", 0.05f, false},
                        Case{"ScatterND", "mul", 0.05f, false}, Case{"ScatterND", "none", 0.1f, false},
                        Case{"ScatterElements", "none", 0.05f, true}, Case{"ScatterElements", "add", 0.05f, false}}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 4, 6, 6};
    q.g.inputs.push_back("u");
    const bool nd = std::string(c.op) == "ScatterND";
    q.g.values["u"] = ir::Value{"u", DType::f32, nd ? ir::Dims{2, 4, 6, 6} : ir::Dims{1, 2, 6, 6}, std::nullopt};
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    auto u = q.qdq("u", c.updates_scale, DType::u8, 128);
    auto idx = nd ? q.constant("idx", TensorData::s64({2, 1}, std::vector<int64_t>{0, 0}))
                  : q.constant("idx", TensorData::s64({1, 2, 6, 6}, std::vector<int64_t>(72, 1)));
    ir::Attrs attrs;
    attrs.set("reduction", std::string(c.reduction));
    if (!nd) attrs.set("axis", int64_t{1});
    q.g.outputs = {q.qdq(q.node(c.op, {a, idx, u}, "scattered", attrs), 0.05f, DType::u8, 128)};
    passes::optimize(q.g);
    const ir::Node& s = only(q.g, c.op);
    EXPECT_EQ(s.inputs[0], c.on_codes ? "x_q" : "x_dq") << c.op << " " << c.reduction << " " << c.updates_scale;
    EXPECT_EQ(s.inputs[2], c.on_codes ? "u_q" : "u_dq") << c.op << " " << c.reduction << " " << c.updates_scale;
  }
}

// A max is order-preserving on the codes: between equal parameters GlobalMaxPool runs on them
// (ORT runs the unit in float, with the same codes); with other parameters it stays float.
TEST(FuseQdq, GlobalMaxPoolRunsOnIntegersOnlyWithEqualParameters) {
  for (float out_scale : {0.05f, 0.06f}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 4, 6, 6};
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    q.g.outputs = {q.qdq(q.node("GlobalMaxPool", {a}, "gmp"), out_scale, DType::u8, 128)};
    passes::optimize(q.g);
    EXPECT_EQ(only(q.g, "GlobalMaxPool").inputs[0], out_scale == 0.05f ? "x_q" : "x_dq");
  }
}

// As ONNX Runtime: a nearest Resize copies codes; linear and cubic interpolate in float, and a
// nearest one that extrapolates (tf_crop_and_resize) quantizes extrapolation_value in float.
TEST(FuseQdq, ResizeRunsOnIntegersOnlyWhenItCopiesCodes) {
  struct Case {
    const char* mode;
    const char* transform;
    bool on_codes;
  };
  for (const Case& c : {Case{"nearest", "half_pixel", true}, Case{"linear", "half_pixel", false},
                        Case{"cubic", "half_pixel", false}, Case{"nearest", "tf_crop_and_resize", false}}) {
    QdqGraph q;
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    auto scales = q.constant("scales", TensorData::f32({4}, std::vector<float>{1, 1, 2, 2}));
    ir::Attrs attrs;
    attrs.set("mode", std::string(c.mode));
    attrs.set("coordinate_transformation_mode", std::string(c.transform));
    q.g.outputs = {q.qdq(q.node("Resize", {a, "", scales}, "resize", attrs), 0.05f, DType::u8, 128)};
    passes::optimize(q.g);
    EXPECT_EQ(only(q.g, "Resize").inputs[0], c.on_codes ? "x_q" : "x_dq") << c.mode << " " << c.transform;
  }
}

TEST(FuseQdq, GemmWithoutQuantizeGivesFloatOutputQGemm) {
  QdqGraph q;
  q.g.values["x"].dims = ir::Dims{1, 8};
  auto a = q.qdq("x", 0.05f, DType::u8, 128);
  TensorData b = TensorData::make(DType::s8, {3, 8});
  auto bq = q.constant("b", std::move(b));
  auto bs = q.constant("b_s", scalar_f32(0.01f));
  auto bz = q.constant("b_z", scalar_q(DType::s8, 0));
  auto bdq = q.node("DequantizeLinear", {bq, bs, bz}, "b_dq");
  auto c = q.constant("c", TensorData::f32({3}, std::vector<float>{0.5f, -0.25f, 1.0f}));
  ir::Attrs at;
  at.set("transB", int64_t{1});
  q.g.outputs = {q.node("Gemm", {a, bdq, c}, "fc", at)};
  passes::optimize(q.g);
  const ir::Node& g = only(q.g, "QGemm");
  ASSERT_EQ(g.inputs.size(), 7u);  // no y_scale / y_zero_point: float output
  const TensorData& bias = *q.g.value(g.inputs[6]).constant;
  ASSERT_EQ(bias.dtype, DType::s32);
  // round_half_even(c / (0.05 * 0.01)): 0.5 / 5e-4 = 1000, -0.25 / 5e-4 = -500, 1 / 5e-4 = 2000
  EXPECT_EQ(bias.as<int32_t>()[0], 1000);
  EXPECT_EQ(bias.as<int32_t>()[1], -500);
  EXPECT_EQ(bias.as<int32_t>()[2], 2000);
}

// MatMul with B [K, N] dequantized per column (axis 1, N values): QLinearMatMul, as ORT fuses it.
// Per row of B (axis 0) stays in float, also when K = N makes the scale's length fit a column.
TEST(FuseQdq, MatMulFusesPerColumnWeightsOnly) {
  for (int64_t axis : {1, 0, -1}) {
    QdqGraph q;
    q.g.values["x"].dims = ir::Dims{1, 3, 4};
    auto a = q.qdq("x", 0.05f, DType::u8, 128);
    auto bq = q.constant("b", TensorData::make(DType::s8, {4, 4}));
    auto bs = q.constant("b_s", TensorData::f32({4}, std::vector<float>{0.01f, 0.02f, 0.03f, 0.04f}));
    auto bz = q.constant("b_z", TensorData::make(DType::s8, {4}));
    ir::Attrs at;
    at.set("axis", axis);
    auto bdq = q.node("DequantizeLinear", {bq, bs, bz}, "b_dq", at);
    q.g.outputs = {q.qdq(q.node("MatMul", {a, bdq}, "mm"), 0.02f, DType::u8, 100)};
    passes::optimize(q.g);
    EXPECT_EQ(has_op(q.g, "QLinearMatMul"), axis != 0) << axis;
    EXPECT_EQ(has_op(q.g, "MatMul"), axis == 0) << axis;
    if (axis != 0) {
      EXPECT_EQ(only(q.g, "QLinearMatMul").inputs[4], "b_s");
    }
  }
}

}  // namespace
}  // namespace octet
