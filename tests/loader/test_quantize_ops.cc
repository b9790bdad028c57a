// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, Cast and the data-movement ops on
// 8-bit tensors, run through the loader and a Session. Expected values are computed here from
// the ONNX formulas (std::nearbyint, integer subtraction) or by ONNX Runtime on the same file;
// tests that need ONNX Runtime skip when it is missing.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"
#include "io/tensor_io.h"

namespace octet {
namespace {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

Session session_of(const OnnxBuilder& b) { return Session(loader::load_onnx_bytes(b.serialize(), "q.onnx")); }

template <class T>
ir::TensorData tensor(ir::DType t, ir::Dims dims, const std::vector<T>& v) {
  ir::TensorData d = ir::TensorData::make(t, std::move(dims));
  EXPECT_EQ(int64_t(v.size()), d.count());
  std::memcpy(d.bytes.data(), v.data(), d.bytes.size());
  return d;
}

template <class T>
std::vector<T> values(const ir::TensorData& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.count());
}

// ONNX's QuantizeLinear for one value, written from the spec: divide, round half to even,
// add the zero point, saturate.
int32_t quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float r = std::nearbyint(x / scale);
  if (std::isnan(r)) return lo;
  return int32_t(std::clamp(double(r) + zp, double(lo), double(hi)));
}

// A 1x1 convolution with identity weights: its output is the input, laid out channels-last
// inside the plan, so the op after it sees an NHWC activation.
std::string identity_conv(OnnxBuilder& b, const std::string& x, int channels) {
  std::vector<float> w(size_t(channels * channels), 0.0f);
  for (int c = 0; c < channels; ++c) w[size_t(c * channels + c)] = 1.0f;
  auto wname = b.initializer(x + "_identity_w", {channels, channels, 1, 1}, w);
  return b.node("Conv", {x, wname});
}

std::vector<float> ramp_values(size_t n, float step, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

// ---- QuantizeLinear / DequantizeLinear, per tensor ----

TEST(QuantizeOps, QuantizeLinearPerTensorHandValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, 1.0f, 1.25f, 2.5f, -2.5f, 300.0f, -300.0f, nan, 0.75f};
  // x / 0.5 = 0, 2, 2.5 (tie -> 2), 5, -5, 600, -600, NaN, 1.5 (tie -> 2)
  OnnxBuilder b(13);
  auto in = b.input("x", {9});
  auto s = b.initializer("s", {}, {0.5f});
  b.output(b.node("QuantizeLinear", {in, s, b.initializer("zu", TensorValue::u8({}, {10}))}, {}, "qu"), ElemType::u8);
  b.output(b.node("QuantizeLinear", {in, s, b.initializer("zs", TensorValue::s8({}, {-3}))}, {}, "qs"), ElemType::s8);
  b.output(b.node("QuantizeLinear", {in, s}, {}, "qnozp"), ElemType::u8);
  auto out = session_of(b).run({tensor(ir::DType::f32, {9}, x)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].dtype, ir::DType::u8);
  EXPECT_EQ(values<uint8_t>(out[0]), (std::vector<uint8_t>{10, 12, 12, 15, 5, 255, 0, 0, 12}));
  EXPECT_EQ(out[1].dtype, ir::DType::s8);
  EXPECT_EQ(values<int8_t>(out[1]), (std::vector<int8_t>{-3, -1, -1, 2, -8, 127, -128, -128, -1}));
  EXPECT_EQ(out[2].dtype, ir::DType::u8);  // no zero point: uint8, zero point 0
  EXPECT_EQ(values<uint8_t>(out[2]), (std::vector<uint8_t>{0, 2, 2, 5, 0, 255, 0, 0, 2}));
}

TEST(QuantizeOps, QuantizeLinearOutputDtypeWithoutZeroPoint) {
  OnnxBuilder b(21);
  auto in = b.input("x", {3});
  auto s = b.initializer("s", {}, {1.0f});
  b.output(b.node("QuantizeLinear", {in, s}, {{"output_dtype", 3}}), ElemType::s8);  // INT8
  auto out = session_of(b).run({tensor(ir::DType::f32, {3}, std::vector<float>{-200.0f, -1.5f, 200.0f})});
  EXPECT_EQ(out[0].dtype, ir::DType::s8);
  EXPECT_EQ(values<int8_t>(out[0]), (std::vector<int8_t>{-128, -2, 127}));
}

TEST(QuantizeOps, DequantizeLinearPerTensorAllInputTypes) {
  OnnxBuilder b(13);
  auto u = b.input("u", {3}, ElemType::u8);
  auto s8 = b.input("s8", {3}, ElemType::s8);
  auto s32 = b.input("s32", {3}, ElemType::s32);
  b.output(b.node("DequantizeLinear", {u, b.initializer("su", {}, {0.5f}), b.initializer("zu", TensorValue::u8({}, {128}))}));
  b.output(b.node("DequantizeLinear", {s8, b.initializer("ss", {}, {0.5f}), b.initializer("zs", TensorValue::s8({}, {-1}))}));
  b.output(b.node("DequantizeLinear", {s32, b.initializer("sb", {}, {0.25f})}));
  auto out = session_of(b).run({tensor(ir::DType::u8, {3}, std::vector<uint8_t>{0, 128, 255}),
                                tensor(ir::DType::s8, {3}, std::vector<int8_t>{-128, 0, 127}),
                                tensor(ir::DType::s32, {3}, std::vector<int32_t>{-100000, 0, 7})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{-64.0f, 0.0f, 63.5f}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{-63.5f, 0.5f, 64.0f}));  // -128 - (-1) = -127: no wrap
  EXPECT_EQ(values<float>(out[2]), (std::vector<float>{-25000.0f, 0.0f, 1.75f}));
}

TEST(QuantizeOps, Int32DequantizeNeedsZeroPointZero) {
  OnnxBuilder b(13);
  auto x = b.input("x", {3}, ElemType::s32);
  auto s = b.initializer("s", {}, {0.25f});
  b.output(b.node("DequantizeLinear", {x, s, b.initializer("z", TensorValue::s32({}, {5}))}, {}, "dq_bias"));
  try {
    session_of(b).run({tensor(ir::DType::s32, {3}, std::vector<int32_t>{1, 2, 3})});
    FAIL() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'dq_bias' (DequantizeLinear)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zero point 0"), std::string::npos) << e.what();
  }
}

TEST(QuantizeOps, MismatchedScaleIsAClearError) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 2, 2});
  auto s = b.initializer("s", {4}, {1.0f, 1.0f, 1.0f, 1.0f});
  b.output(b.node("QuantizeLinear", {x, s}, {}, "q"), ElemType::u8);
  try {
    session_of(b).run({ir::TensorData::make(ir::DType::f32, {1, 3, 2, 2})});
    FAIL() << "expected an error";
  } catch (const ir::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("node 'q' (QuantizeLinear)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("y_scale has 4 values for axis 1 of extent 3"), std::string::npos) << msg;
  }
}

// ---- per axis, on a channels-last activation ----

TEST(QuantizeOps, PerAxisOnChannelsLastActivations) {
  const std::vector<float> scales = {0.5f, 0.25f, 0.125f};
  const std::vector<int64_t> zps = {-128, 0, 127};
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 3, 2, 3});
  auto act = identity_conv(b, x, 3);
  auto s = b.initializer("s", {3}, scales);
  auto z = b.initializer("z", TensorValue::s8({3}, zps));
  auto q = b.node("QuantizeLinear", {act, s, z}, {}, "q");                      // axis 1 by default
  auto q_neg = b.node("QuantizeLinear", {act, s, z}, {{"axis", -3}}, "q_neg");  // the same axis
  auto dq = b.node("DequantizeLinear", {q, s, z}, {}, "dq");
  b.output(q, ElemType::s8);
  b.output(q_neg, ElemType::s8);
  b.output(dq);

  Session session = session_of(b);
  const auto& plan = session.plan_for(std::vector<ir::Dims>{{2, 3, 2, 3}});
  ASSERT_EQ(plan.value(act).info.layout, Layout::channels_last) << "the test needs an NHWC activation";
  EXPECT_EQ(plan.value(q).info.layout, Layout::channels_last);

  const auto xv = ramp_values(36, 0.37f, -6.0f);
  auto out = session.run({tensor(ir::DType::f32, {2, 3, 2, 3}, xv)});
  std::vector<int8_t> want_q;
  std::vector<float> want_dq;
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = (i / 6) % 3;  // NCHW index -> channel
    const int32_t v = quantize(xv[i], scales[c], int32_t(zps[c]), -128, 127);
    want_q.push_back(int8_t(v));
    want_dq.push_back(float(v - zps[c]) * scales[c]);
  }
  EXPECT_EQ(values<int8_t>(out[0]), want_q);
  EXPECT_EQ(values<int8_t>(out[1]), want_q);
  EXPECT_EQ(values<float>(out[2]), want_dq);
}

TEST(QuantizeOps, PerAxisOnAnotherAxis) {
  // Axis 2 of a row-major rank-3 tensor: the scale varies along the middle dimension.
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 2, 3}, ElemType::u8);
  auto s = b.initializer("s", {2}, {1.0f, 0.5f});
  auto z = b.initializer("z", TensorValue::u8({2}, {0, 255}));
  b.output(b.node("DequantizeLinear", {x, s, z}, {{"axis", 1}}));
  std::vector<uint8_t> xv = {0, 1, 2, 253, 254, 255, 10, 20, 30, 0, 128, 255};
  auto out = session_of(b).run({tensor(ir::DType::u8, {2, 2, 3}, xv)});
  std::vector<float> want;
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t a = (i / 3) % 2;
    want.push_back(float(int(xv[i]) - (a == 0 ? 0 : 255)) * (a == 0 ? 1.0f : 0.5f));
  }
  EXPECT_EQ(values<float>(out[0]), want);
}

// ---- scales and zero points computed at run time ----

struct DynamicQuant {
  float scale;
  int32_t zp;
  std::vector<uint8_t> y;
};

// DynamicQuantizeLinear from its ONNX definition.
DynamicQuant dynamic_quantize(const std::vector<float>& x) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  DynamicQuant d;
  d.scale = (hi - lo) / 255.0f;
  d.zp = int32_t(std::nearbyint(std::clamp(0.0f - lo / d.scale, 0.0f, 255.0f)));
  for (float v : x) d.y.push_back(uint8_t(quantize(v, d.scale, d.zp, 0, 255)));
  return d;
}

TEST(QuantizeOps, ScalesAndZeroPointsComputedAtRunTime) {
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 3});
  auto dq = b.node_multi("DynamicQuantizeLinear", {x}, 3, {}, "dql");
  auto twice = b.node("Mul", {dq[1], b.initializer("two", {}, {2.0f})});
  b.output(b.node("DequantizeLinear", {dq[0], dq[1], dq[2]}, {}, "dq"));
  b.output(b.node("QuantizeLinear", {x, twice, dq[2]}, {}, "q"), ElemType::u8);
  Session session = session_of(b);
  // Two runs with different ranges: the second must not reuse the first run's scale.
  for (const auto& xv : {std::vector<float>{-1.0f, 0.5f, 2.0f, 3.0f, -0.25f, 1.0f},
                         std::vector<float>{-40.0f, 7.5f, 100.0f, 0.0f, -3.0f, 12.25f}}) {
    const DynamicQuant d = dynamic_quantize(xv);
    auto out = session.run({tensor(ir::DType::f32, {2, 3}, xv)});
    std::vector<float> want_dq;
    std::vector<uint8_t> want_q;
    for (size_t i = 0; i < xv.size(); ++i) {
      want_dq.push_back(float(int32_t(d.y[i]) - d.zp) * d.scale);
      want_q.push_back(uint8_t(quantize(xv[i], d.scale * 2.0f, d.zp, 0, 255)));
    }
    EXPECT_EQ(values<float>(out[0]), want_dq);
    EXPECT_EQ(values<uint8_t>(out[1]), want_q);
  }
}

TEST(QuantizeOps, DynamicQuantizeLinearOutputs) {
  OnnxBuilder b(11);
  auto x = b.input("x", {1, 2, 2, 2});
  auto outs = b.node_multi("DynamicQuantizeLinear", {identity_conv(b, x, 2)}, 3, {}, "dql");
  b.output(outs[0], ElemType::u8);
  b.output(outs[1]);
  b.output(outs[2], ElemType::u8);
  const std::vector<float> xv = {-2.0f, 0.1f, 3.3f, 1.0f, -0.7f, 0.0f, 5.0f, 2.2f};
  auto out = session_of(b).run({tensor(ir::DType::f32, {1, 2, 2, 2}, xv)});
  const DynamicQuant d = dynamic_quantize(xv);
  EXPECT_EQ(values<uint8_t>(out[0]), d.y);  // back in NCHW order
  ASSERT_EQ(out[1].dims, ir::Dims{});
  EXPECT_EQ(out[1].as<float>()[0], d.scale);
  EXPECT_EQ(int32_t(out[2].as<uint8_t>()[0]), d.zp);

  // All zeros: scale 1 and zero point 0 (ONNX Runtime's choice for the empty range).
  out = session_of(b).run({ir::TensorData::make(ir::DType::f32, {1, 2, 2, 2})});
  EXPECT_EQ(out[1].as<float>()[0], 1.0f);
  EXPECT_EQ(out[2].as<uint8_t>()[0], 0);
}

// ---- Cast ----

TEST(QuantizeOps, CastTruncatesTowardZeroAndKeepsLayout) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 2, 2, 2});
  auto act = identity_conv(b, x, 2);
  auto as_int = b.node("Cast", {act}, {{"to", 6}}, "to_int32");  // INT32
  b.output(as_int, ElemType::s32);
  b.output(b.node("Cast", {as_int}, {{"to", 1}}, "back"));  // FLOAT
  b.output(b.node("Cast", {act}, {{"to", 3}}, "to_int8"), ElemType::s8);
  b.output(b.node("Cast", {act}, {{"to", 9}}, "to_bool"), ElemType::b8);
  const std::vector<float> xv = {-2.5f, -0.5f, 0.0f, 0.9f, 1.5f, 127.9f, -128.9f, 300.0f};
  auto out = session_of(b).run({tensor(ir::DType::f32, {1, 2, 2, 2}, xv)});
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{-2, 0, 0, 0, 1, 127, -128, 300}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<float>{-2, 0, 0, 0, 1, 127, -128, 300}));
  EXPECT_EQ(values<int8_t>(out[2]), (std::vector<int8_t>{-2, 0, 0, 0, 1, 127, -128, 44}));  // 300 mod 256
  EXPECT_EQ(values<uint8_t>(out[3]), (std::vector<uint8_t>{1, 1, 0, 1, 1, 1, 1, 1}));
}

TEST(QuantizeOps, CastLikeTakesTheTypeOfItsSecondInput) {
  OnnxBuilder b(15);
  auto x = b.input("x", {4});
  auto like = b.initializer("like", TensorValue::s8({1}, {0}));
  b.output(b.node("CastLike", {x, like}), ElemType::s8);
  auto out = session_of(b).run({tensor(ir::DType::f32, {4}, std::vector<float>{-1.9f, 0.5f, 127.5f, 128.0f})});
  EXPECT_EQ(out[0].dtype, ir::DType::s8);
  EXPECT_EQ(values<int8_t>(out[0]), (std::vector<int8_t>{-1, 0, 127, -128}));
}

// ---- against ONNX Runtime ----

#define SKIP_WITHOUT_ORT()                                                                        \
  if (std::string why = ::octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

// Runs the model in octet and ONNX Runtime on the same inputs; every output must be identical.
void expect_same_as_ort(const OnnxBuilder& b, const std::string& name, const std::vector<ir::TensorData>& inputs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("octet-quantize-ops-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / (name + ".onnx")).string();
  b.save(path);
  Session session = Session::load(path);
  auto ours = session.run(inputs);
  std::map<std::string, npy::Array> ort_in;
  for (size_t i = 0; i < inputs.size(); ++i) ort_in[session.inputs()[i].name] = to_npy(inputs[i]);
  auto theirs = testing::run_ort(path, ort_in);
  fs::remove_all(dir);
  ASSERT_EQ(ours.size(), session.outputs().size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const std::string& out = session.outputs()[i].name;
    ASSERT_TRUE(theirs.count(out)) << out;
    const ir::TensorData ref = from_npy(theirs.at(out));
    EXPECT_EQ(ours[i].dtype, ref.dtype) << name << " " << out;
    EXPECT_EQ(ours[i].dims, ref.dims) << name << " " << out;
    EXPECT_TRUE(ours[i].bytes == ref.bytes) << name << " " << out << ": not bit-identical to ONNX Runtime";
  }
}

ir::TensorData random_floats(ir::Dims dims, uint32_t seed, float lo, float hi) {
  auto t = ir::TensorData::make(ir::DType::f32, std::move(dims));
  auto v = testing::random_uniform(size_t(t.count()), seed, lo, hi);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

template <class T>
ir::TensorData random_ints(ir::DType type, ir::Dims dims, uint32_t seed) {
  auto t = ir::TensorData::make(type, std::move(dims));
  auto v = testing::random_uniform(size_t(t.count()), seed, -128.0f, 256.0f);
  for (int64_t i = 0; i < t.count(); ++i)
    t.as<T>()[i] = T(std::clamp<float>(std::floor(v[size_t(i)]), std::numeric_limits<T>::min(),
                                       std::numeric_limits<T>::max()));
  return t;
}

TEST(QuantizeOpsOrt, QdqChainOnNhwcActivationsMatchesOnnxRuntime) {
  SKIP_WITHOUT_ORT();
  for (int per_channel = 0; per_channel < 2; ++per_channel) {
    for (ElemType type : {ElemType::u8, ElemType::s8}) {
      OnnxBuilder b(13);
      auto x = b.input("x", {2, 4, 5, 5});
      auto act = b.node("Conv", {x, b.random_normal_init("", {4, 4, 3, 3}, 0.0f, 0.3f)}, {{"pads", {1, 1, 1, 1}}});
      std::string s, z;
      if (per_channel) {
        s = b.initializer("s", {4}, {0.011f, 0.023f, 0.0071f, 0.05f});
        z = b.initializer("z", type == ElemType::u8 ? TensorValue::u8({4}, {0, 100, 128, 255})
                                                    : TensorValue::s8({4}, {-128, -5, 0, 127}));
      } else {
        s = b.initializer("s", {}, {0.0173f});
        z = b.initializer("z", type == ElemType::u8 ? TensorValue::u8({}, {131}) : TensorValue::s8({}, {-7}));
      }
      auto q = b.node("QuantizeLinear", {act, s, z});
      b.output(q, type);
      b.output(b.node("DequantizeLinear", {q, s, z}));
      expect_same_as_ort(b, "qdq", {random_floats({2, 4, 5, 5}, 3, -3.0f, 3.0f)});
    }
  }
}

TEST(QuantizeOpsOrt, DynamicQuantizeLinearMatchesOnnxRuntime) {
  SKIP_WITHOUT_ORT();
  OnnxBuilder b(11);
  auto x = b.input("x", {3, 4, 6, 6});
  auto outs = b.node_multi("DynamicQuantizeLinear", {identity_conv(b, x, 4)}, 3);
  b.output(outs[0], ElemType::u8);
  b.output(outs[1]);
  b.output(outs[2], ElemType::u8);
  for (uint32_t seed : {1u, 2u, 3u})
    expect_same_as_ort(b, "dql", {random_floats({3, 4, 6, 6}, seed, -1.7f + float(seed), 2.9f)});
}

TEST(QuantizeOpsOrt, CastMatchesOnnxRuntime) {
  SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {64});
  for (int to : {2, 3, 6, 7, 9, 11}) {  // UINT8, INT8, INT32, INT64, BOOL, DOUBLE
    const ElemType t = to == 2 ? ElemType::u8 : to == 3 ? ElemType::s8 : to == 6 ? ElemType::s32
                     : to == 7 ? ElemType::s64 : to == 9 ? ElemType::b8 : ElemType::f64;
    b.output(b.node("Cast", {x}, {{"to", to}}), t);
  }
  expect_same_as_ort(b, "cast", {random_floats({64}, 9, -700.0f, 700.0f)});
}

TEST(QuantizeOpsOrt, DataMovementOn8BitTensorsMatchesOnnxRuntime) {
  SKIP_WITHOUT_ORT();
  for (ElemType type : {ElemType::u8, ElemType::s8}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {2, 3, 6, 6}, type);
    auto pooled = b.node("MaxPool", {x}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}});
    auto same = b.node("Identity", {pooled});
    auto joined = b.node("Concat", {same, pooled}, {{"axis", 1}});  // [2, 6, 3, 3]
    auto shape = b.initializer_i64("shape", {3}, {2, 6, 9});
    auto reshaped = b.node("Reshape", {joined, shape});
    auto axes = b.initializer_i64("axes", {1}, {1});
    auto unsq = b.node("Unsqueeze", {reshaped, axes});  // [2, 1, 6, 9]
    auto sq = b.node("Squeeze", {unsq, axes});
    b.output(b.node("Flatten", {sq}, {{"axis", 1}}), type);
    b.output(pooled, type);
    const ir::DType dt = type == ElemType::u8 ? ir::DType::u8 : ir::DType::s8;
    auto input = type == ElemType::u8 ? random_ints<uint8_t>(dt, {2, 3, 6, 6}, 5) : random_ints<int8_t>(dt, {2, 3, 6, 6}, 5);
    expect_same_as_ort(b, "movement", {input});
  }
}

TEST(QuantizeOpsOrt, QuantizedMaxPoolAndConcatOnNhwcMatchOnnxRuntime) {
  // Q -> MaxPool -> Concat -> DQ, the shape ORT's QDQ fusion leaves: the 8-bit tensors between
  // stay channels-last inside the plan.
  SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 7, 7});
  auto act = b.node("Conv", {x, b.random_normal_init("", {3, 3, 1, 1}, 0.0f, 0.5f)});
  auto s = b.initializer("s", {}, {0.02f});
  auto z = b.initializer("z", TensorValue::s8({}, {3}));
  auto q = b.node("QuantizeLinear", {act, s, z});
  auto pooled = b.node("MaxPool", {q}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}, {"ceil_mode", 1}});
  auto joined = b.node("Concat", {pooled, pooled}, {{"axis", 1}});
  b.output(joined, ElemType::s8);
  b.output(b.node("DequantizeLinear", {joined, s, z}));
  Session session = session_of(b);
  EXPECT_EQ(session.plan_for(std::vector<ir::Dims>{{1, 3, 7, 7}}).value(pooled).info.layout, Layout::channels_last);
  expect_same_as_ort(b, "qmaxpool", {random_floats({1, 3, 7, 7}, 11, -2.0f, 2.0f)});
}

TEST(QuantizeOpsOrt, DynamicQuantizationGraphMatchesOnnxRuntime) {
  // What onnxruntime.quantization.quantize_dynamic writes for a Conv and a MatMul: the input is
  // quantized per call, the integer op runs, and the scale product is computed at run time.
  SKIP_WITHOUT_ORT();
  OnnxBuilder b(13, "dynamic", 3);
  // Weights in [-64, 64]: without VNNI, ORT's unoptimized uint8 x int8 kernels add pairs of
  // products in int16 with saturation, exact only while 255 * 64 * 2 <= 32767 (the optimized
  // graphs of the other parity tests run ORT's exact kernels: tools/ort/session.mjs).
  auto int8_init = [&](const std::string& name, std::vector<int64_t> dims) {
    std::vector<int64_t> v;
    for (float f : b.uniform(testing::count_of(dims), -64.0f, 65.0f)) v.push_back(int64_t(std::floor(f)));
    return b.initializer(name, TensorValue::s8(dims, v));
  };
  auto x = b.input("x", {2, 3, 6, 6});
  auto xq = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  auto conv = b.node("ConvInteger", {xq[0], int8_init("w", {4, 3, 3, 3}), xq[2],
                                     b.initializer("w_zp", TensorValue::s8({}, {0}))},
                     {{"pads", {1, 1, 1, 1}}});
  auto conv_scale = b.node("Mul", {xq[1], b.initializer("w_scale", {}, {0.0123f})});
  auto conv_out = b.node("Add", {b.node("Mul", {b.node("Cast", {conv}, {{"to", 1}}), conv_scale}),
                                 b.initializer("conv_bias", {4, 1, 1}, {0.5f, -0.25f, 0.0f, 1.0f})});
  auto flat = b.node("Flatten", {b.node("Relu", {conv_out})});  // [2, 144]
  auto fq = b.node_multi("DynamicQuantizeLinear", {flat}, 3);
  auto mm = b.node("MatMulInteger", {fq[0], int8_init("m", {144, 5}), fq[2],
                                     b.initializer("m_zp", TensorValue::s8({}, {0}))});
  auto mm_scale = b.node("Mul", {fq[1], b.initializer("m_scale", {}, {0.0071f})});
  b.output(b.node("Mul", {b.node("Cast", {mm}, {{"to", 1}}), mm_scale}), {2, 5});
  // Unoptimized ORT runs these exact ops; its fused DynamicQuantizeMatMul may round differently.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("octet-dynamic-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "dynamic.onnx").string();
  b.save(path);
  Session session = Session::load(path);
  for (uint32_t seed : {4u, 5u}) {
    const ir::TensorData input = random_floats({2, 3, 6, 6}, seed, -1.0f, 3.0f);
    const auto ours = session.run({input});
    testing::OrtOptions opt;
    opt.graph_opt = "disabled";
    const auto theirs = testing::run_ort(path, {{"x", to_npy(input)}}, opt);
    const ir::TensorData ref = from_npy(theirs.at(session.outputs()[0].name));
    EXPECT_TRUE(ours[0].bytes == ref.bytes) << "seed " << seed << ": not bit-identical to ONNX Runtime";
  }
  fs::remove_all(dir);
}

// ---- a model written by ONNX Runtime itself ----

// Runs tools/ort/ort_fuse.mjs (no shell): ORT writes the graph it runs for `model`.
bool ort_fuse(const std::string& model, const std::string& out, std::string& why) {
  const char* env = std::getenv("OCTET_NODE");
  const std::string node = env && *env ? env : "node";
  const std::string script = std::string(OCTET_SOURCE_DIR) + "/tools/ort/ort_fuse.mjs";
  std::vector<std::string> args = {node, script, "--model", model, "--out", out, "--graph-opt", "extended"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, node.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    why = "cannot start " + node;
    return false;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  why = "ort_fuse.mjs exited with status " + std::to_string(status);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A QDQ model of every op ORT fuses into a com.microsoft contrib op, plus QLinearConv:
// Conv+Relu -> Add -> GlobalAveragePool -> Sigmoid -> Mul (an SE-style gate) -> AveragePool
// -> LeakyRelu -> Flatten -> Gemm, every tensor between with its own Q/DQ pair.
OnnxBuilder qdq_network() {
  OnnxBuilder b(13, "qdq_network", 5);
  int k = 0;
  auto scalar = [&](float v) { return b.initializer("s" + std::to_string(k++), {}, {v}); };
  auto zero_point = [&](int v) { return b.initializer("z" + std::to_string(k++), TensorValue::u8({}, {v})); };
  auto qdq = [&](const std::string& x, float scale, int zp) {
    auto s = scalar(scale);
    auto z = zero_point(zp);
    return b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, s, z}), s, z});
  };
  auto int8_weights = [&](const std::string& name, std::vector<int64_t> dims) {
    std::vector<int64_t> v;
    for (float f : b.uniform(testing::count_of(dims), -127.0f, 128.0f)) v.push_back(int64_t(std::floor(f)));
    return b.initializer(name, TensorValue::s8(dims, v));
  };
  const int c = 8;
  auto x = qdq(b.input("x", {1, 3, 8, 8}), 0.02f, 128);
  std::vector<float> w_scales;
  for (int i = 0; i < c; ++i) w_scales.push_back(0.002f + 0.001f * float(i));
  std::vector<float> bias_scales;
  for (float s : w_scales) bias_scales.push_back(0.02f * s);
  auto w = b.node("DequantizeLinear", {int8_weights("w", {c, 3, 3, 3}), b.initializer("w_s", {c}, w_scales),
                                       b.initializer("w_z", TensorValue::s8({c}, std::vector<int64_t>(c, 0)))},
                  {{"axis", 0}});
  auto bias = b.node("DequantizeLinear", {b.initializer("b", TensorValue::s32({c}, {-900, -50, 0, 7, 300, 512, -1000, 999})),
                                          b.initializer("b_s", {c}, bias_scales),
                                          b.initializer("b_z", TensorValue::s32({c}, std::vector<int64_t>(c, 0)))},
                     {{"axis", 0}});
  auto conv = qdq(b.node("Relu", {b.node("Conv", {x, w, bias}, {{"pads", {1, 1, 1, 1}}})}), 0.05f, 0);
  auto sum = qdq(b.node("Add", {conv, conv}), 0.09f, 3);
  auto pooled = qdq(b.node("GlobalAveragePool", {sum}), 0.03f, 1);
  auto gate = qdq(b.node("Sigmoid", {pooled}), 1.0f / 255.0f, 0);
  auto scaled = qdq(b.node("Mul", {sum, gate}), 0.08f, 2);
  auto avg = qdq(b.node("AveragePool", {scaled}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}), 0.08f, 2);
  auto leaky = qdq(b.node("LeakyRelu", {avg}, {{"alpha", 0.1f}}), 0.08f, 2);
  auto flat = qdq(b.node("Flatten", {leaky}), 0.08f, 2);
  auto fc_w = b.node("DequantizeLinear", {int8_weights("fc_w", {10, c * 16}), scalar(0.004f),
                                          b.initializer("fc_z", TensorValue::s8({}, {0}))});
  auto fc_b = b.node("DequantizeLinear", {b.initializer("fc_b", TensorValue::s32({10}, {-500, -3, 0, 1, 2, 40, 77, 123, 256, 499})),
                                          scalar(0.08f * 0.004f)});
  b.output(qdq(b.node("Gemm", {flat, fc_w, fc_b}, {{"transB", 1}}), 0.2f, 128), {1, 10});
  return b;
}

TEST(QuantizeOpsOrt, ModelFusedAndWrittenByOnnxRuntimeLoadsAndRuns) {
  SKIP_WITHOUT_ORT();
  namespace fs = std::filesystem;
  struct TempDir {
    fs::path path = fs::temp_directory_path() / ("octet-ort-fused-" + std::to_string(getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
  } temp;
  const fs::path& dir = temp.path;
  const std::string qdq_path = (dir / "qdq.onnx").string(), fused_path = (dir / "fused.onnx").string();
  qdq_network().save(qdq_path);
  std::string why;
  ASSERT_TRUE(ort_fuse(qdq_path, fused_path, why)) << why;

  // The file holds ORT's own spelling of the contrib ops (domains, attribute sets).
  const ir::Graph g = loader::load_onnx(fused_path);
  std::set<std::string> contrib, standard;
  for (const auto& n : g.nodes) (n.domain.empty() ? standard : contrib).insert(n.op);
  EXPECT_EQ(contrib, (std::set<std::string>{"QGemm", "QLinearAdd", "QLinearAveragePool", "QLinearGlobalAveragePool",
                                            "QLinearLeakyRelu", "QLinearMul", "QLinearSigmoid"}));
  EXPECT_TRUE(standard.count("QLinearConv")) << "ORT did not fuse the Conv unit";

  // octet runs ORT's file and agrees with ORT on it. The final output is a DequantizeLinear
  // of uint8 with scale 0.2: compare in output steps.
  Session session = Session::load(fused_path);
  for (uint32_t seed : {1u, 2u, 3u}) {
    const ir::TensorData input = random_floats({1, 3, 8, 8}, seed, -2.5f, 2.5f);
    const auto ours = session.run({input});
    const auto theirs = testing::run_ort(fused_path, {{"x", to_npy(input)}});
    const ir::TensorData ref = from_npy(theirs.at(session.outputs()[0].name));
    ASSERT_EQ(ours[0].dims, ref.dims);
    int differ = 0;
    for (int64_t i = 0; i < ref.count(); ++i) {
      const float steps = std::fabs(ours[0].as<float>()[i] - ref.as<float>()[i]) / 0.2f;
      EXPECT_LE(steps, 1.001f) << "output " << i << " (seed " << seed << ")";
      differ += steps > 0.5f;
    }
    // A difference could only come from a near-tie that one of ORT's fused kernels rounds its
    // own way (docs/requantization.md, sections 9 to 11); none shows up for these inputs.
    EXPECT_EQ(differ, 0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace octet
