// The INT8 ops inside the planner, where ONNX Runtime cannot serve as the oracle: parameters
// computed at run time against the same parameters as constants, unequal per-channel weight
// zero points (which ORT rejects) and a fused Relu / Clip against a direct evaluation of the
// ONNX formula written here, the constant-folding path (row-major input), the MACs the plan
// reports, and the errors a user gets for what octet does not run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using ir::DType;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

ir::Graph graph_of(const OnnxBuilder& b) { return loader::load_onnx_bytes(b.serialize(), "test model"); }

std::vector<int64_t> random_ints(std::mt19937& rng, size_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(n);
  for (auto& x : v) x = lo + int64_t(rng() % uint32_t(hi - lo + 1));
  return v;
}

ir::TensorData u8_tensor(const ir::Dims& dims, const std::vector<int64_t>& v) {
  ir::TensorData t = ir::TensorData::make(DType::u8, dims);
  for (size_t i = 0; i < v.size(); ++i) t.as<uint8_t>()[i] = uint8_t(v[i]);
  return t;
}

template <class T>
std::vector<int64_t> values_of(const ir::TensorData& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.count(); ++i) v.push_back(t.as<T>()[i]);
  return v;
}

// ---- A QLinearConv evaluated straight from the ONNX definition (NCHW, no padding tricks)

struct ConvProblem {
  int64_t n = 2, c = 4, h = 5, w = 6, m = 6, k = 3, pad = 1, stride = 1;
  std::vector<int64_t> x, weights, w_zp, bias;
  std::vector<float> w_scale;
  float x_scale = 0.05f, y_scale = 0.125f;
  int64_t x_zp = 135, y_zp = 100;
  int64_t out_h() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t out_w() const { return (w + 2 * pad - k) / stride + 1; }
};

ConvProblem conv_problem(uint32_t seed) {
  ConvProblem p;
  std::mt19937 rng(seed);
  p.x = random_ints(rng, size_t(p.n * p.c * p.h * p.w), 0, 255);
  p.weights = random_ints(rng, size_t(p.m * p.c * p.k * p.k), -127, 127);
  p.w_zp = random_ints(rng, size_t(p.m), -10, 10);  // unequal per channel: ORT refuses these
  p.bias = random_ints(rng, size_t(p.m), -5000, 5000);
  for (int64_t i = 0; i < p.m; ++i) p.w_scale.push_back(0.004f + 0.002f * float(i));
  return p;
}

// y[n][m][i][j] = clamp(round_half_even(float(acc) * ((x_scale * w_scale[m]) / y_scale)) + y_zp, lo, hi)
// with acc = B[m] + sum over the window inside the input of (x - x_zp)(w - w_zp[m]).
std::vector<int64_t> expected_conv(const ConvProblem& p, int64_t lo, int64_t hi) {
  std::vector<int64_t> y;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t i = 0; i < p.out_h(); ++i)
        for (int64_t j = 0; j < p.out_w(); ++j) {
          int64_t acc = p.bias[size_t(m)];
          for (int64_t c = 0; c < p.c; ++c)
            for (int64_t ky = 0; ky < p.k; ++ky)
              for (int64_t kx = 0; kx < p.k; ++kx) {
                const int64_t iy = i * p.stride - p.pad + ky, ix = j * p.stride - p.pad + kx;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                const int64_t xv = p.x[size_t(((n * p.c + c) * p.h + iy) * p.w + ix)];
                const int64_t wv = p.weights[size_t(((m * p.c + c) * p.k + ky) * p.k + kx)];
                acc += (xv - p.x_zp) * (wv - p.w_zp[size_t(m)]);
              }
          const float multiplier = (p.x_scale * p.w_scale[size_t(m)]) / p.y_scale;
          const int64_t q = int64_t(std::nearbyint(float(acc) * multiplier)) + p.y_zp;
          y.push_back(std::clamp(q, lo, hi));
        }
  return y;
}

// The model; with params_as_inputs every scale, zero point, weight and bias is a graph input.
OnnxBuilder conv_model(const ConvProblem& p, bool params_as_inputs, bool x_constant = false) {
  OnnxBuilder b(13);
  std::vector<std::string> in;
  auto add = [&](const std::string& name, const TensorValue& t, ElemType type) {
    if (params_as_inputs) {
      in.push_back(b.input(name, t.dims, type));
    } else {
      in.push_back(b.initializer(name, t));
    }
  };
  if (x_constant) in.push_back(b.initializer("x", TensorValue::u8({p.n, p.c, p.h, p.w}, p.x)));
  else in.push_back(b.input("x", {-1, p.c, p.h, p.w}, ElemType::u8));
  add("x_scale", TensorValue::scalar_f32(p.x_scale), ElemType::f32);
  add("x_zero_point", TensorValue::u8({}, {p.x_zp}), ElemType::u8);
  add("w", TensorValue::s8({p.m, p.c, p.k, p.k}, p.weights), ElemType::s8);
  add("w_scale", TensorValue::f32({p.m}, p.w_scale), ElemType::f32);
  add("w_zero_point", TensorValue::s8({p.m}, p.w_zp), ElemType::s8);
  add("y_scale", TensorValue::scalar_f32(p.y_scale), ElemType::f32);
  add("y_zero_point", TensorValue::u8({}, {p.y_zp}), ElemType::u8);
  add("bias", TensorValue::s32({p.m}, p.bias), ElemType::s32);
  b.output(b.node("QLinearConv", in,
                  {{"pads", {p.pad, p.pad, p.pad, p.pad}}, {"strides", {p.stride, p.stride}}}, "qconv"),
           ElemType::u8);
  return b;
}

// Feeds for the params_as_inputs model, in its input order.
std::vector<ir::TensorData> conv_feeds(const ConvProblem& p) {
  auto f32 = [](ir::Dims d, std::vector<float> v) { return ir::TensorData::f32(std::move(d), v); };
  auto ints = [](DType t, ir::Dims d, const std::vector<int64_t>& v) {
    ir::TensorData out = ir::TensorData::make(t, std::move(d));
    for (size_t i = 0; i < v.size(); ++i) {
      if (t == DType::u8) out.as<uint8_t>()[i] = uint8_t(v[i]);
      else if (t == DType::s8) out.as<int8_t>()[i] = int8_t(v[i]);
      else out.as<int32_t>()[i] = int32_t(v[i]);
    }
    return out;
  };
  return {u8_tensor({p.n, p.c, p.h, p.w}, p.x), f32({}, {p.x_scale}), ints(DType::u8, {}, {p.x_zp}),
          ints(DType::s8, {p.m, p.c, p.k, p.k}, p.weights), f32({p.m}, p.w_scale),
          ints(DType::s8, {p.m}, p.w_zp), f32({}, {p.y_scale}), ints(DType::u8, {}, {p.y_zp}),
          ints(DType::s32, {p.m}, p.bias)};
}

TEST(QOpsEngine, QLinearConvUnequalPerChannelZeroPointsMatchTheOnnxFormula) {
  const ConvProblem p = conv_problem(1);
  Session s(graph_of(conv_model(p, false)));
  const auto y = s.run({u8_tensor({p.n, p.c, p.h, p.w}, p.x)});
  ASSERT_EQ(y[0].dims, (ir::Dims{p.n, p.m, p.out_h(), p.out_w()}));
  const auto want = expected_conv(p, 0, 255);
  EXPECT_EQ(values_of<uint8_t>(y[0]), want);
  // Not vacuous: the outputs spread and some saturate.
  EXPECT_GT(std::count(want.begin(), want.end(), 0) + std::count(want.begin(), want.end(), 255), 0);
  EXPECT_GT(std::set<int64_t>(want.begin(), want.end()).size(), 50u);
}

TEST(QOpsEngine, ParametersAtRunTimeGiveWhatConstantsGive) {
  ConvProblem p = conv_problem(2);
  p.stride = 2;
  Session constants(graph_of(conv_model(p, false)));
  Session inputs(graph_of(conv_model(p, true)));
  const auto a = constants.run({u8_tensor({p.n, p.c, p.h, p.w}, p.x)});
  const auto b = inputs.run(conv_feeds(p));
  EXPECT_EQ(values_of<uint8_t>(a[0]), expected_conv(p, 0, 255));
  EXPECT_EQ(values_of<uint8_t>(b[0]), expected_conv(p, 0, 255));
  // A second run with other parameter values: the run-time path must not keep the first ones.
  ConvProblem q = p;
  q.x_zp = 7;
  q.y_scale = 0.2f;
  q.w_zp[0] = 5;
  EXPECT_EQ(values_of<uint8_t>(inputs.run(conv_feeds(q))[0]), expected_conv(q, 0, 255));
}

// The plan keeps why a step runs its reference kernel (octet info --kernels shows it).
TEST(QOpsEngine, APlanRecordsWhyAConvFallsBackToTheReference) {
  auto qconv_step = [](const Plan& plan) {
    for (const PlanStep& s : plan.steps())
      if (s.op == "QLinearConv") return s;
    ADD_FAILURE() << "no QLinearConv step";
    return PlanStep{};
  };
  ConvProblem p = conv_problem(3);
  const ir::Dims x_dims{p.n, p.c, p.h, p.w};
  Session asymmetric(graph_of(conv_model(p, false)));
  PlanStep step = qconv_step(asymmetric.plan_for(std::vector<ir::Dims>{x_dims}));
  EXPECT_TRUE(step.scalar()) << step.kernel;
  EXPECT_NE(step.fallback.find("weight zero point"), std::string::npos) << step.fallback;

  Session at_run_time(graph_of(conv_model(p, true)));
  std::vector<ir::Dims> dims;
  for (const auto& f : conv_feeds(p)) dims.push_back(f.dims);
  step = qconv_step(at_run_time.plan_for(dims));
  EXPECT_NE(step.fallback.find("not constant"), std::string::npos) << step.fallback;

  std::fill(p.w_zp.begin(), p.w_zp.end(), 0);
  SessionOptions scalar;
  scalar.isa = kernels::Isa::scalar;
  Session capped(graph_of(conv_model(p, false)), scalar);
  step = qconv_step(capped.plan_for(std::vector<ir::Dims>{x_dims}));
  EXPECT_EQ(step.fallback, "--isa scalar");
  if (kernels::detected_isa() != kernels::Isa::scalar) {
    Session fast(graph_of(conv_model(p, false)));
    step = qconv_step(fast.plan_for(std::vector<ir::Dims>{x_dims}));
    EXPECT_FALSE(step.scalar()) << step.kernel;
    EXPECT_EQ(step.fallback, "");
  }
}

// Constant folding evaluates the op on row-major data: the channels-last copy path.
TEST(QOpsEngine, AConstantQLinearConvIsFoldedCorrectly) {
  const ConvProblem p = conv_problem(3);
  OnnxBuilder b = conv_model(p, false, true);
  b.input("unused", {1}, ElemType::f32);  // a session needs an input
  Session s(graph_of(b));
  EXPECT_EQ(s.plan_for(std::vector<ir::Dims>{{1}}).steps().size(), 0u) << "the conv should have been folded";
  const auto y = s.run({ir::TensorData::f32({1}, std::vector<float>{0})});
  EXPECT_EQ(values_of<uint8_t>(y[0]), expected_conv(p, 0, 255));
}

TEST(QOpsEngine, FusedReluAndClipNarrowTheOutputClamp) {
  const ConvProblem p = conv_problem(4);
  for (const char* act : {"Relu", "Clip"}) {
    ir::Graph g = graph_of(conv_model(p, false));
    for (auto& n : g.nodes) {
      if (n.op != "QLinearConv") continue;
      n.attrs.set("fused_act", std::string(act));
      if (std::string(act) == "Clip") n.attrs.set("fused_act_params", std::vector<float>{-3.0f, 10.0f});
    }
    Session s(std::move(g));
    const auto y = s.run({u8_tensor({p.n, p.c, p.h, p.w}, p.x)});
    // Relu: real 0 is y_zp = 100; Clip [-3, 10] with scale 0.125: [100 - 24, 100 + 80].
    const auto want = std::string(act) == "Relu" ? expected_conv(p, 100, 255) : expected_conv(p, 76, 180);
    EXPECT_EQ(values_of<uint8_t>(y[0]), want) << act;
  }
}

TEST(QOpsEngine, PlanReportsMultiplyAccumulates) {
  const ConvProblem p = conv_problem(5);
  Session conv(graph_of(conv_model(p, false)));
  const auto& steps = conv.plan_for(std::vector<ir::Dims>{{p.n, p.c, p.h, p.w}}).steps();
  int64_t macs = 0;
  for (const auto& st : steps) macs += st.macs;
  EXPECT_EQ(macs, p.n * p.m * p.out_h() * p.out_w() * p.c * p.k * p.k);

  OnnxBuilder b(13);
  const auto a = b.input("a", {-1, 3, 8, 12}, ElemType::u8);
  const auto w = b.initializer("w", TensorValue::s8({12, 5}, std::vector<int64_t>(60, 1)));
  b.output(b.node("MatMulInteger", {a, w}), ElemType::s32);
  Session mm(graph_of(b));
  macs = 0;
  for (const auto& st : mm.plan_for(std::vector<ir::Dims>{{2, 3, 8, 12}}).steps()) macs += st.macs;
  EXPECT_EQ(macs, 2 * 3 * 8 * 5 * 12);
}

// ---- Errors a user can act on

void expect_load_error(const OnnxBuilder& b, const std::string& fragment) {
  try {
    Session s(graph_of(b));
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(QOpsEngine, UnsupportedTypeCombinationIsNamed) {
  OnnxBuilder b(13);
  const auto x = b.input("x", {1, 2, 3, 3}, ElemType::u8);
  b.output(b.node("QLinearConv",
                  {x, b.initializer("xs", TensorValue::scalar_f32(0.1f)), b.initializer("xz", TensorValue::u8({}, {0})),
                   b.initializer("w", TensorValue::u8({1, 2, 1, 1}, {1, 2})),
                   b.initializer("ws", TensorValue::scalar_f32(0.1f)), b.initializer("wz", TensorValue::u8({}, {0})),
                   b.initializer("ys", TensorValue::scalar_f32(0.1f)), b.initializer("yz", TensorValue::s8({}, {0}))}),
           ElemType::s8);
  expect_load_error(b, "x uint8, w uint8, y int8 is not supported; octet runs uint8 x int8 -> uint8");
}

TEST(QOpsEngine, BadParameterShapesAreNamed) {
  OnnxBuilder b(13);
  auto init = [&](OnnxBuilder& m, const TensorValue& t) {
    static int count = 0;
    return m.initializer("k" + std::to_string(++count), t);
  };
  const auto x = b.input("x", {1, 2, 3, 3}, ElemType::u8);
  b.output(b.node("QLinearConv",
                  {x, init(b, TensorValue::scalar_f32(0.1f)), init(b, TensorValue::u8({}, {0})),
                   init(b, TensorValue::s8({3, 2, 1, 1}, {1, 2, 3, 4, 5, 6})),
                   init(b, TensorValue::f32({2}, {0.1f, 0.2f})), init(b, TensorValue::s8({}, {0})),
                   init(b, TensorValue::scalar_f32(0.1f)), init(b, TensorValue::u8({}, {0}))}),
           ElemType::u8);
  expect_load_error(b, "w_scale [2] must be a scalar or a 1-D tensor of 3 values");

  OnnxBuilder g(13);
  const auto a = g.input("a", {2, 4}, ElemType::u8);
  const auto y = g.node("QGemm", {a, init(g, TensorValue::scalar_f32(0.1f)), init(g, TensorValue::u8({}, {0})),
                                  init(g, TensorValue::s8({4, 3}, std::vector<int64_t>(12, 1))),
                                  init(g, TensorValue::scalar_f32(0.1f)), init(g, TensorValue::s8({}, {0})), "",
                                  init(g, TensorValue::scalar_f32(0.1f))});
  g.set_domain(y, "com.microsoft");
  g.output(y, ElemType::f32);
  expect_load_error(g, "y_scale and y_zero_point must be given together");
}

}  // namespace
}  // namespace octet
