// octet's INT8 ops against ONNX Runtime on the same model and the same random integer inputs.
// Each model is one quantized op (or a short chain, to see an op read channels-last data)
// whose raw uint8 / int8 / int32 output is a graph output, compared element by element.
// Every op must agree bit for bit, QLinearAdd, QLinearMul and QLinearSigmoid included (octet
// follows the recipes of ORT's x86 kernels, docs/requantization.md sections 9 and 10, and
// docs/kernels.md claims them bit-exact), even on scale ratios that put many inputs on exact
// ties. The one exception is the QDQ ReduceMean unit, which ORT runs in float and octet as an
// integer mean (section 11): it may differ by 1 on a bounded share of elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/passes.h"
#include "engine/session.h"
#include "kernels/isa.h"
#include "kernels/ref/qreduce.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace {

using ir::DType;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

constexpr const char* kMicrosoft = "com.microsoft";

// ---- Running both and comparing

// How one octet output agrees with ORT's.
struct Agreement {
  std::string output;
  int64_t elements = 0, differ = 0;
  double max_diff = 0;
  size_t distinct = 0;  // distinct values in ORT's output: a constant output proves little
  double share() const { return elements ? double(differ) / double(elements) : 0.0; }
};

double element(const ir::TensorData& t, int64_t i) {
  switch (t.dtype) {
    case DType::u8: return t.as<uint8_t>()[i];
    case DType::s8: return t.as<int8_t>()[i];
    case DType::s32: return t.as<int32_t>()[i];
    case DType::f32: return t.as<float>()[i];
    default: throw std::logic_error("unexpected output type");
  }
}

// Uniform over the whole type range for integers, normal for floats; deterministic per seed.
ir::TensorData random_tensor(DType t, const ir::Dims& d, std::mt19937& rng) {
  ir::TensorData out = ir::TensorData::make(t, d);
  for (int64_t i = 0; i < out.count(); ++i) {
    const uint32_t r = rng();
    switch (t) {
      case DType::u8: out.as<uint8_t>()[i] = uint8_t(r & 0xff); break;
      case DType::s8: out.as<int8_t>()[i] = int8_t(int(r & 0xff) - 128); break;
      case DType::f32: out.as<float>()[i] = float(int(r % 2001) - 1000) / 250.0f; break;
      default: throw std::logic_error("unexpected input type");
    }
  }
  return out;
}

std::vector<Agreement> run_both(const OnnxBuilder& model, const std::string& name, int64_t batch, uint32_t seed) {
  ScratchDir dir("octet-qparity");
  const std::string path = (dir.path() / (name + ".onnx")).string();
  model.save(path);
  Session session = Session::load(path);

  std::mt19937 rng(seed + uint32_t(batch) * 101u);
  std::vector<ir::TensorData> inputs;
  std::map<std::string, npy::Array> ort_inputs;
  for (const auto& spec : session.inputs()) {
    ir::Dims d = spec.dims;
    for (auto& e : d) if (e < 0) e = batch;
    inputs.push_back(random_tensor(spec.dtype, d, rng));
    ort_inputs[spec.name] = to_npy(inputs.back());
  }
  const auto ours = session.run(inputs);
  const auto theirs = testing::run_ort(path, ort_inputs);

  std::vector<Agreement> result;
  for (size_t o = 0; o < ours.size(); ++o) {
    const std::string& out_name = session.outputs()[o].name;
    const ir::TensorData ref = from_npy(theirs.at(out_name));
    EXPECT_EQ(ours[o].dtype, ref.dtype) << name << ": " << out_name;
    EXPECT_EQ(ours[o].dims, ref.dims) << name << ": " << out_name;
    Agreement a;
    a.output = out_name;
    if (ours[o].dtype != ref.dtype || ours[o].dims != ref.dims) {
      a.differ = a.elements = 1;
      a.max_diff = INFINITY;
      result.push_back(a);
      continue;
    }
    std::set<double> values;
    a.elements = ref.count();
    for (int64_t i = 0; i < ref.count(); ++i) {
      const double x = element(ours[o], i), r = element(ref, i);
      values.insert(r);
      if (x != r) {
        ++a.differ;
        a.max_diff = std::max(a.max_diff, std::fabs(x - r));
      }
    }
    a.distinct = values.size();
    std::cout << "[ QPARITY  ] " << name << " batch " << batch << " " << out_name << ": " << a.differ << " of "
              << a.elements << " differ (" << 100.0 * a.share() << "%), max |diff| " << a.max_diff << ", "
              << a.distinct << " distinct values" << std::endl;
    result.push_back(a);
  }
  return result;
}

// Every output bit-exact, at each batch size.
void expect_exact(const OnnxBuilder& model, const std::string& name, const std::vector<int64_t>& batches = {1, 3},
                  size_t min_distinct = 16, uint32_t seed = 7) {
  for (int64_t batch : batches) {
    for (const Agreement& a : run_both(model, name, batch, seed)) {
      EXPECT_EQ(a.differ, 0) << name << " batch " << batch << " " << a.output << ": max |diff| " << a.max_diff;
      EXPECT_GE(a.distinct, std::min<size_t>(min_distinct, size_t(a.elements) / 2))
          << name << " " << a.output << ": the output is nearly constant";
    }
  }
}

// At most 1 apart, on at most `max_share` of the elements: only for a unit ORT computes in float
// where octet computes in integers (the QDQ ReduceMean).
void expect_within_one(const OnnxBuilder& model, const std::string& name, double max_share,
                       const std::vector<int64_t>& batches = {1, 3}, size_t min_distinct = 16) {
  for (int64_t batch : batches) {
    for (const Agreement& a : run_both(model, name, batch, 11)) {
      EXPECT_LE(a.max_diff, 1.0) << name << " batch " << batch << " " << a.output;
      EXPECT_LE(a.share(), max_share) << name << " batch " << batch << " " << a.output;
      EXPECT_GE(a.distinct, std::min<size_t>(min_distinct, size_t(a.elements) / 2))
          << name << " " << a.output << ": the output is nearly constant";
    }
  }
}

// How many `op` nodes octet's graph has once it loads `model` (after its fusions).
int nodes_after_load(const OnnxBuilder& model, const std::string& op) {
  ScratchDir dir("octet-qops-load");
  const std::string path = (dir.path() / "m.onnx").string();
  model.save(path);
  const Session session = Session::load(path);
  int count = 0;
  for (const auto& n : session.graph().nodes) count += n.op == op;
  return count;
}

// Every step of `model`'s plan at batch 2 runs a SIMD kernel at this CPU's best level (a model
// whose op has microkernels: QLinearSoftmax along rows and along columns).
void expect_no_scalar_step(const OnnxBuilder& model, const std::string& name) {
  if (kernels::active_isa() == kernels::Isa::scalar) return;
  ScratchDir dir("octet-qops-plan");
  const std::string path = (dir.path() / "m.onnx").string();
  model.save(path);
  Session session = Session::load(path);
  for (const PlanStep& step : session.plan_for(session.input_dims_at(2)).steps())
    EXPECT_FALSE(step.scalar()) << name << ": " << step.node << " runs " << step.kernel << " at "
                                << kernels::isa_name(kernels::active_isa());
}

// ---- Model pieces

ElemType elem(DType t) { return t == DType::u8 ? ElemType::u8 : ElemType::s8; }

// An initializer with a fresh name.
std::string constant(OnnxBuilder& b, const TensorValue& t) {
  static int count = 0;
  return b.initializer("k" + std::to_string(++count), t);
}
std::string scalar_f(OnnxBuilder& b, float v) { return constant(b, TensorValue::scalar_f32(v)); }
std::string zero_point(OnnxBuilder& b, DType t, int64_t v) { return constant(b, TensorValue::ints(elem(t), {}, {v})); }

std::vector<int64_t> random_ints(std::mt19937& rng, size_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(n);
  for (auto& x : v) x = lo + int64_t(rng() % uint32_t(hi - lo + 1));
  return v;
}

std::vector<float> random_scales(std::mt19937& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = lo + (hi - lo) * float(rng() % 1000) / 1000.0f;
  return v;
}

// Weights of type t: s8 symmetric in [-127, 127]; u8 spread around zero point w_zp.
std::vector<int64_t> random_weights(std::mt19937& rng, DType t, size_t n) {
  return t == DType::s8 ? random_ints(rng, n, -127, 127) : random_ints(rng, n, 0, 255);
}

// An output scale that spreads sum_k (x - zx)(w - zw) over ~ +-64 output steps for random
// full-range operands (each factor has a standard deviation of about 74).
float spread_scale(float in_scale, float w_scale, int64_t k) {
  return in_scale * w_scale * 74.0f * 74.0f * std::sqrt(float(k)) / 40.0f;
}

struct QConvCase {
  DType x = DType::u8, w = DType::s8, y = DType::u8;
  int64_t in_c = 4, out_c = 6, h = 7, width = 6, kernel = 3, group = 1;
  std::vector<int64_t> strides = {1, 1}, pads = {1, 1, 1, 1}, dilations = {1, 1};
  bool per_channel = false, bias = true, one_d = false;
  int64_t x_zp = 131, w_zp = 0, y_zp = 120;
};

OnnxBuilder qlinearconv_model(const QConvCase& q) {
  OnnxBuilder b(13);
  std::mt19937 rng(1234);
  std::vector<int64_t> x_dims = {-1, q.in_c, q.h, q.width}, w_dims = {q.out_c, q.in_c / q.group, q.kernel, q.kernel};
  if (q.one_d) {
    x_dims = {-1, q.in_c, q.width};
    w_dims = {q.out_c, q.in_c / q.group, q.kernel};
  }
  const auto x = b.input("x", x_dims, elem(q.x));
  const size_t w_count = testing::count_of(w_dims);
  const int64_t k = w_dims[1] * q.kernel * (q.one_d ? 1 : q.kernel);
  const size_t scales = q.per_channel ? size_t(q.out_c) : 1;
  const auto w_scale = random_scales(rng, scales, 0.004f, 0.02f);
  std::vector<int64_t> scale_dims = q.per_channel ? std::vector<int64_t>{q.out_c} : std::vector<int64_t>{};
  const float x_scale = 0.05f;
  std::vector<std::string> in = {
      x,
      scalar_f(b, x_scale),
      zero_point(b, q.x, q.x_zp),
      b.initializer("w", TensorValue::ints(elem(q.w), w_dims, random_weights(rng, q.w, w_count))),
      b.initializer("w_scale", TensorValue::f32(scale_dims, w_scale)),
      b.initializer("w_zero_point", TensorValue::ints(elem(q.w), scale_dims, std::vector<int64_t>(scales, q.w_zp))),
      scalar_f(b, spread_scale(x_scale, w_scale[0], k)),
      zero_point(b, q.y, q.y_zp)};
  if (q.bias)
    in.push_back(b.initializer("bias", TensorValue::s32({q.out_c}, random_ints(rng, size_t(q.out_c), -3000, 3000))));
  std::vector<int64_t> strides = q.strides, pads = q.pads, dilations = q.dilations;
  if (q.one_d) {
    strides.resize(1);
    dilations.resize(1);
    pads = {q.pads[0], q.pads[2]};
  }
  b.output(b.node("QLinearConv", in,
                  {{"group", q.group}, {"strides", strides}, {"pads", pads}, {"dilations", dilations}}),
           elem(q.y));
  return b;
}

// ---- QLinearConv

TEST(QOpsParity, QLinearConvU8S8PerTensor) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qlinearconv_model({}), "qconv_u8s8_per_tensor");
}

TEST(QOpsParity, QLinearConvU8S8PerChannelStride2AsymmetricPadsNoBias) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase q;
  q.per_channel = true;
  q.bias = false;
  q.strides = {2, 2};
  q.pads = {0, 1, 2, 0};
  q.h = 9;
  q.width = 8;
  expect_exact(qlinearconv_model(q), "qconv_u8s8_per_channel_stride2");
}

TEST(QOpsParity, QLinearConvS8DepthwisePerChannel) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase q;
  q.x = q.w = q.y = DType::s8;
  q.in_c = q.out_c = q.group = 8;
  q.per_channel = true;
  q.x_zp = -5;
  q.y_zp = 3;
  expect_exact(qlinearconv_model(q), "qconv_s8_depthwise");
}

TEST(QOpsParity, QLinearConvS8GroupedDilated) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase q;
  q.x = q.w = q.y = DType::s8;
  q.in_c = 6;
  q.out_c = 4;
  q.group = 2;
  q.dilations = {2, 1};
  q.pads = {2, 1, 2, 1};
  q.x_zp = 0;
  q.y_zp = 0;
  expect_exact(qlinearconv_model(q), "qconv_s8_grouped_dilated");
}

// The kernel octet's plan runs for the single QLinearConv of `model` (batch 1).
std::string qlinearconv_kernel(const OnnxBuilder& model) {
  ScratchDir dir("octet-qops-kernel");
  const std::string path = (dir.path() / "m.onnx").string();
  model.save(path);
  Session session = Session::load(path);
  for (const PlanStep& step : session.plan_for(session.input_dims_at(1)).steps())
    if (step.op == "QLinearConv") return step.kernel;
  return "";
}

// Groups of 4, 8 and 32 channels (ResNeXt's, RegNet's) on the narrow-group kernels
// (kernels/conv/q8_gconv_list.h): channel tails of a 16-channel block, stride 2 with asymmetric
// pads, a grouped 1x1, u8 and s8.
TEST(QOpsParity, QLinearConvNarrowGroups) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase g4;
  g4.in_c = g4.out_c = 36;  // 9 groups of 4: a block and a 4-channel tail
  g4.group = 9;
  g4.per_channel = true;
  QConvCase g8;
  g8.x = g8.y = DType::s8;
  g8.x_zp = -7;
  g8.y_zp = 5;
  g8.in_c = g8.out_c = 24;  // 3 groups of 8
  g8.group = 3;
  g8.strides = {2, 2};
  g8.pads = {0, 1, 1, 0};
  g8.h = 9;
  g8.width = 11;
  QConvCase g32;
  g32.in_c = g32.out_c = 64;  // 2 groups of 32: the g16 rows, quads read in place
  g32.group = 2;
  g32.kernel = 1;
  g32.pads = {0, 0, 0, 0};
  for (const auto& [q, name] : {std::pair{g4, "qconv_u8_groups_of_4"}, std::pair{g8, "qconv_s8_groups_of_8"},
                                std::pair{g32, "qconv_u8_groups_of_32_pointwise"}}) {
    const OnnxBuilder model = qlinearconv_model(q);
    expect_exact(model, name);
    if (kernels::active_isa() != kernels::Isa::scalar) {
      EXPECT_NE(qlinearconv_kernel(model).find("_gconv_g"), std::string::npos)
          << name << " runs " << qlinearconv_kernel(model);
    }
  }
}

// Depthwise convs with a channel multiplier (FastViT's 7x7 stride-2 downsampling at 2, and 3):
// the depthwise kernel over the input's channels repeated.
TEST(QOpsParity, QLinearConvDepthwiseWithChannelMultiplier) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase m2;
  m2.in_c = 24;
  m2.out_c = 48;
  m2.group = 24;
  m2.kernel = 7;
  m2.pads = {3, 3, 3, 3};
  m2.strides = {2, 2};
  m2.h = 13;
  m2.width = 12;
  m2.per_channel = true;
  QConvCase m3;
  m3.x = m3.y = DType::s8;
  m3.x_zp = 3;
  m3.y_zp = -2;
  m3.in_c = 5;
  m3.out_c = 15;
  m3.group = 5;
  for (const auto& [q, name] : {std::pair{m2, "qconv_u8_multiplier_2"}, std::pair{m3, "qconv_s8_multiplier_3"}}) {
    const OnnxBuilder model = qlinearconv_model(q);
    expect_exact(model, name);
    if (kernels::active_isa() != kernels::Isa::scalar) {
      EXPECT_NE(qlinearconv_kernel(model).find("repeat_channels + q8_dwconv"), std::string::npos)
          << name << " runs " << qlinearconv_kernel(model);
    }
  }
}

TEST(QOpsParity, QLinearConvU8U8Pointwise) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase q;
  q.w = DType::u8;
  q.w_zp = 128;
  q.kernel = 1;
  q.pads = {0, 0, 0, 0};
  q.in_c = 16;
  q.out_c = 8;
  q.per_channel = true;
  expect_exact(qlinearconv_model(q), "qconv_u8u8_1x1");
}

TEST(QOpsParity, QLinearConv1d) {
  OCTET_SKIP_WITHOUT_ORT();
  QConvCase q;
  q.one_d = true;
  q.width = 11;
  q.per_channel = true;
  expect_exact(qlinearconv_model(q), "qconv_1d");
}

// Zero points at the ends of the range: the padding must read x_zero_point.
TEST(QOpsParity, QLinearConvExtremeZeroPoints) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t x_zp : {0, 255}) {
    QConvCase q;
    q.x_zp = x_zp;
    q.y_zp = 255 - x_zp;
    q.per_channel = true;
    expect_exact(qlinearconv_model(q), "qconv_u8_x_zp_" + std::to_string(x_zp), {2}, 4);
  }
  for (int64_t x_zp : {-128, 127}) {
    QConvCase q;
    q.x = q.w = q.y = DType::s8;
    q.x_zp = x_zp;
    q.y_zp = x_zp;
    expect_exact(qlinearconv_model(q), "qconv_s8_x_zp_" + std::to_string(x_zp), {2}, 4);
  }
}

// Dilated convs on maps smaller than their dilation (DeepLabV3's ASPP): passes::prune_dead_taps
// crops the taps that read only padding. QLinearConv pads with x_zero_point, so a dropped tap
// contributed (x_zp - x_zp) * w = 0: bit-exact with ORT's whole conv, zero points at the ends of
// the range, depthwise, stride 2 with partly live rows and 1-D included.
int cropped_convs(const OnnxBuilder& model) {
  ScratchDir dir("octet-qops-taps");
  const std::string path = (dir.path() / "m.onnx").string();
  model.save(path);
  const Session session = Session::load(path);
  int count = 0;
  for (const auto& n : session.graph().nodes) count += n.attrs.has(passes::kPrunedTapsAttr);
  return count;
}

TEST(QOpsParity, QLinearConvDeadTapsCropped) {
  OCTET_SKIP_WITHOUT_ORT();
  auto aspp = [] {
    QConvCase q;
    q.in_c = 16;
    q.out_c = 8;
    q.h = q.width = 6;
    q.dilations = {12, 12};
    q.pads = {12, 12, 12, 12};
    q.per_channel = true;
    return q;
  };
  for (int64_t x_zp : {0, 131, 255}) {
    QConvCase q = aspp();
    q.x_zp = x_zp;
    const std::string name = "qconv_aspp_x_zp_" + std::to_string(x_zp);
    EXPECT_EQ(cropped_convs(qlinearconv_model(q)), 1) << name;
    expect_exact(qlinearconv_model(q), name, {1, 3}, 8);
  }
  QConvCase q = aspp();  // s8 depthwise, dilation 6 on 4x4
  q.x = q.w = q.y = DType::s8;
  q.in_c = q.out_c = q.group = 8;
  q.h = q.width = 4;
  q.dilations = {6, 6};
  q.pads = {6, 6, 6, 6};
  q.x_zp = -128;
  q.y_zp = 0;
  EXPECT_EQ(cropped_convs(qlinearconv_model(q)), 1);
  expect_exact(qlinearconv_model(q), "qconv_dw_dead_taps", {1, 3}, 8);
  q = aspp();  // rows: 4, dilation 3, stride 2, pad top 6: tap 0 dead, tap 1 live at the last output
  q.h = 4;
  q.width = 7;
  q.strides = {2, 1};
  q.dilations = {3, 1};
  q.pads = {6, 1, 0, 1};
  EXPECT_EQ(cropped_convs(qlinearconv_model(q)), 1);
  expect_exact(qlinearconv_model(q), "qconv_stride2_dead_rows", {1, 3}, 8);
  q = aspp();  // 1-D: length 3, dilation 4, pads 4: only the centre tap meets the signal
  q.one_d = true;
  q.width = 3;
  q.dilations = {4, 4};
  q.pads = {4, 4, 4, 4};
  EXPECT_EQ(cropped_convs(qlinearconv_model(q)), 1);
  expect_exact(qlinearconv_model(q), "qconv_1d_dead_taps", {1, 3}, 8);
}

// ---- ConvInteger

TEST(QOpsParity, ConvIntegerU8U8WithZeroPoints) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  std::mt19937 rng(5);
  const auto x = b.input("x", {-1, 3, 6, 5}, ElemType::u8);
  const auto w = b.initializer("w", TensorValue::u8({4, 3, 3, 3}, random_ints(rng, 108, 0, 255)));
  b.output(b.node("ConvInteger", {x, w, zero_point(b, DType::u8, 140), zero_point(b, DType::u8, 120)},
                  {{"pads", {1, 0, 1, 2}}, {"strides", {1, 2}}}),
           ElemType::s32);
  expect_exact(b, "convinteger_u8u8");
}

// The dynamic-quantization pattern: the activation's zero point only exists at run time.
TEST(QOpsParity, ConvIntegerU8S8AfterDynamicQuantizeLinear) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  std::mt19937 rng(6);
  const auto x = b.input("x", {-1, 4, 5, 5});
  const auto q = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  const auto w = b.initializer("w", TensorValue::s8({6, 4, 3, 3}, random_ints(rng, 216, -127, 127)));
  b.output(b.node("ConvInteger", {q[0], w, q[2]}, {{"pads", {1, 1, 1, 1}}}), ElemType::s32);
  b.output(q[2], ElemType::u8);
  expect_exact(b, "convinteger_u8s8_dynamic", {1, 3}, 1);
}

// ---- QLinearMatMul, MatMulInteger

struct QMatMulCase {
  std::vector<int64_t> a_dims, b_dims;
  DType ta = DType::u8, tb = DType::s8, ty = DType::u8;
  bool per_column = false;
  bool b_input = false;           // B a graph input (packed per run), not an initializer
  bool b_zero_points = false;     // random weight zero points (the row-sum correction), not 0 / 128
  int64_t a_zp = 118, y_zp = 125;  // in their types
};

OnnxBuilder qlinearmatmul_model(const QMatMulCase& q) {
  OnnxBuilder b(13);
  std::mt19937 rng(9);
  const auto a = b.input("a", q.a_dims, elem(q.ta));
  const int64_t k = q.b_dims[q.b_dims.size() - 2], n = q.b_dims.back();
  const auto bw = q.b_input ? b.input("b", q.b_dims, elem(q.tb))
                            : b.initializer("b", TensorValue::ints(elem(q.tb), q.b_dims,
                                                                   random_weights(rng, q.tb, testing::count_of(q.b_dims))));
  const size_t count = q.per_column ? size_t(n) : 1;
  std::vector<int64_t> sd = q.per_column ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  const auto b_scale = random_scales(rng, count, 0.005f, 0.02f);
  const std::vector<int64_t> b_zp = q.b_zero_points ? (q.tb == DType::u8 ? random_ints(rng, count, 0, 255)
                                                                         : random_ints(rng, count, -128, 127))
                                                    : std::vector<int64_t>(count, q.tb == DType::u8 ? 128 : 0);
  b.output(b.node("QLinearMatMul",
                  {a, scalar_f(b, 0.04f), zero_point(b, q.ta, q.a_zp), bw, constant(b, TensorValue::f32(sd, b_scale)),
                   constant(b, TensorValue::ints(elem(q.tb), sd, b_zp)),
                   scalar_f(b, spread_scale(0.04f, b_scale[0], k)), zero_point(b, q.ty, q.y_zp)}),
           elem(q.ty));
  return b;
}

OnnxBuilder qlinearmatmul_model(std::vector<int64_t> a_dims, std::vector<int64_t> b_dims, DType tb, bool per_column) {
  QMatMulCase q;
  q.a_dims = std::move(a_dims);
  q.b_dims = std::move(b_dims);
  q.tb = tb;
  q.per_column = per_column;
  return qlinearmatmul_model(q);
}

TEST(QOpsParity, QLinearMatMul2d) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qlinearmatmul_model({-1, 24}, {24, 10}, DType::s8, false), "qmatmul_2d_u8s8");
  expect_exact(qlinearmatmul_model({-1, 24}, {24, 10}, DType::u8, false), "qmatmul_2d_u8u8");
}

TEST(QOpsParity, QLinearMatMulBatched) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qlinearmatmul_model({-1, 3, 5, 16}, {16, 7}, DType::s8, false), "qmatmul_batched_b_broadcast");
  expect_exact(qlinearmatmul_model({-1, 5, 16}, {2, 1, 16, 7}, DType::u8, false), "qmatmul_batched_both");
}

TEST(QOpsParity, QLinearMatMulPerColumn) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qlinearmatmul_model({-1, 24}, {24, 10}, DType::s8, true), "qmatmul_per_column");
}

// The SIMD path (kernels::Q8MatMul) for every combination of types ORT runs (not s8 A x u8 B), weight zero points
// that are not 0 / 128 (the row-sum correction), B as an input with broadcast batches, odd K:
// bit-exact, and no step on a scalar reference.
TEST(QOpsParity, QLinearMatMulOnSimdKernels) {
  OCTET_SKIP_WITHOUT_ORT();
  std::vector<std::pair<std::string, QMatMulCase>> cases;
  for (DType ta : {DType::u8, DType::s8})
    for (DType tb : {DType::u8, DType::s8})
      for (bool zps : {false, true}) {
        if (ta == DType::s8 && tb == DType::u8) continue;  // ORT has no int8 x uint8 QLinearMatMul
        QMatMulCase q;
        q.a_dims = {-1, 33};
        q.b_dims = {33, 19};
        q.ta = ta;
        q.tb = tb;
        q.ty = ta;
        q.a_zp = ta == DType::u8 ? 118 : -10;
        q.y_zp = ta == DType::u8 ? 125 : 3;
        q.per_column = zps;
        q.b_zero_points = zps;
        cases.push_back({std::string("qmatmul_simd_") + (ta == DType::u8 ? "u8" : "s8") + (tb == DType::u8 ? "u8" : "s8") +
                             (zps ? "_zero_points" : ""),
                         q});
      }
  QMatMulCase in;
  in.a_dims = {-1, 3, 4, 7};
  in.b_dims = {1, 3, 7, 5};
  in.tb = DType::u8;
  in.b_input = true;
  in.b_zero_points = true;
  cases.push_back({"qmatmul_simd_b_input_broadcast", in});
  in.b_zero_points = false;
  in.a_dims = {-1, 1, 1, 70};
  in.b_dims = {2, 70, 9};
  cases.push_back({"qmatmul_simd_b_input_k70", in});
  for (const auto& [name, q] : cases) {
    const OnnxBuilder model = qlinearmatmul_model(q);
    expect_exact(model, name);
    expect_no_scalar_step(model, name);
  }
}

TEST(QOpsParity, MatMulInteger) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType tb : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    std::mt19937 rng(10);
    const auto a = b.input("a", {-1, 4, 20}, ElemType::u8);
    const auto bw = b.initializer("b", TensorValue::ints(elem(tb), {20, 9}, random_weights(rng, tb, 180)));
    const auto b_zp = constant(b, TensorValue::ints(elem(tb), {9}, random_ints(rng, 9, 0, tb == DType::u8 ? 255 : 20)));
    b.output(b.node("MatMulInteger", {a, bw, zero_point(b, DType::u8, 100), b_zp}), ElemType::s32);
    expect_exact(b, std::string("matmulinteger_u8") + (tb == DType::u8 ? "u8" : "s8"));
    expect_no_scalar_step(b, std::string("matmulinteger_u8") + (tb == DType::u8 ? "u8" : "s8"));
  }
}

// ---- QGemm

struct QGemmCase {
  DType tb = DType::s8;
  bool trans_b = false, bias = true, quantized = true, per_column = true;
  float alpha = 1.0f;
  bool trans_a = false;
};

OnnxBuilder qgemm_model(const QGemmCase& q) {
  OnnxBuilder b(13);
  std::mt19937 rng(12);
  const int64_t k = 32, n = 10;
  const auto a = b.input("a", q.trans_a ? std::vector<int64_t>{k, -1} : std::vector<int64_t>{-1, k}, ElemType::u8);
  std::vector<int64_t> bd = q.trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  const size_t count = q.per_column ? size_t(n) : 1;
  std::vector<int64_t> sd = q.per_column ? std::vector<int64_t>{n} : std::vector<int64_t>{};
  const auto b_scale = random_scales(rng, count, 0.005f, 0.02f);
  std::vector<std::string> in = {
      a, scalar_f(b, 0.03f), zero_point(b, DType::u8, 127),
      b.initializer("b", TensorValue::ints(elem(q.tb), bd, random_weights(rng, q.tb, size_t(k * n)))),
      constant(b, TensorValue::f32(sd, b_scale)),
      constant(b, TensorValue::ints(elem(q.tb), sd, std::vector<int64_t>(count, q.tb == DType::u8 ? 128 : 0))),
      q.bias ? b.initializer("c", TensorValue::s32({n}, random_ints(rng, size_t(n), -20000, 20000))) : ""};
  if (q.quantized) {
    in.push_back(scalar_f(b, spread_scale(0.03f * q.alpha, b_scale[0], k)));
    in.push_back(zero_point(b, DType::u8, 131));
  }
  const auto y =
      b.node("QGemm", in, {{"alpha", q.alpha}, {"transA", int64_t(q.trans_a)}, {"transB", int64_t(q.trans_b)}});
  b.set_domain(y, kMicrosoft);
  b.output(y, q.quantized ? ElemType::u8 : ElemType::f32);
  return b;
}

TEST(QOpsParity, QGemmQuantizedOutput) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qgemm_model({}), "qgemm_bias");
  expect_exact(qgemm_model({.bias = false}), "qgemm_no_bias");
  expect_exact(qgemm_model({.trans_b = true, .per_column = false}), "qgemm_transb_per_tensor");
  expect_exact(qgemm_model({.tb = DType::u8, .trans_b = true, .alpha = 0.75f}), "qgemm_u8u8_transb_alpha");
  expect_exact(qgemm_model({.trans_a = true}), "qgemm_transa");
}

TEST(QOpsParity, QGemmFloatOutput) {
  OCTET_SKIP_WITHOUT_ORT();
  expect_exact(qgemm_model({.quantized = false}), "qgemm_float");
  expect_exact(qgemm_model({.trans_b = true, .quantized = false, .alpha = 0.5f}), "qgemm_float_transb_alpha");
}

// ---- Element-wise and pooling contrib ops

std::string ms_node(OnnxBuilder& b, const std::string& op, const std::vector<std::string>& in,
                    const testing::Attrs& attrs = {}) {
  const auto y = b.node(op, in, attrs);
  b.set_domain(y, kMicrosoft);
  return y;
}

struct Q {
  float scale;
  int64_t zp;
};

std::string qbinary(OnnxBuilder& b, const std::string& op, DType t, const std::string& a, Q qa, const std::string& bb,
                    Q qb, Q qy) {
  return ms_node(b, op,
                 {a, scalar_f(b, qa.scale), zero_point(b, t, qa.zp), bb, scalar_f(b, qb.scale), zero_point(b, t, qb.zp),
                  scalar_f(b, qy.scale), zero_point(b, t, qy.zp)});
}

std::string qunary(OnnxBuilder& b, const std::string& op, DType t, const std::string& x, Q qx, Q qy,
                   const testing::Attrs& attrs = {}) {
  return ms_node(b, op,
                 {x, scalar_f(b, qx.scale), zero_point(b, t, qx.zp), scalar_f(b, qy.scale), zero_point(b, t, qy.zp)},
                 attrs);
}

// Calibrated-looking scales with no simple ratio between them, and scales in exact ratios
// (every other input pair lands on a tie): the worst case for agreeing with ORT.
TEST(QOpsParity, QLinearAddBroadcast) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    const int64_t z = t == DType::u8 ? 128 : 0;
    OnnxBuilder b(13);
    const auto x = b.input("x", {-1, 6, 5, 4}, elem(t));
    const auto full = b.input("full", {-1, 6, 5, 4}, elem(t));
    const auto per_channel = b.input("per_channel", {1, 6, 1, 1}, elem(t));
    b.output(qbinary(b, "QLinearAdd", t, x, {0.0213f, z + 3}, full, {0.0178f, z - 9}, {0.0301f, z + 1}), elem(t));
    b.output(qbinary(b, "QLinearAdd", t, x, {0.0213f, z + 3}, per_channel, {0.0178f, z - 9}, {0.0301f, z + 1}),
             elem(t));
    expect_exact(b, std::string("qadd_calibrated_") + ir::dtype_name(t), {1, 3}, 16, 11);

    OnnxBuilder ties(13);
    const auto tx = ties.input("x", {-1, 6, 5, 4}, elem(t));
    const auto tf = ties.input("full", {-1, 6, 5, 4}, elem(t));
    const auto tc = ties.input("per_channel", {1, 6, 1, 1}, elem(t));
    const auto ts = ties.input("scalar", {1}, elem(t));
    ties.output(qbinary(ties, "QLinearAdd", t, tx, {0.05f, z}, tf, {0.05f, z + 1}, {0.1f, z - 1}), elem(t));
    ties.output(qbinary(ties, "QLinearAdd", t, tx, {0.05f, z}, tc, {0.05f, z + 1}, {0.1f, z - 1}), elem(t));
    ties.output(qbinary(ties, "QLinearAdd", t, ts, {0.5f, z + 1}, tx, {0.25f, z}, {1.0f, z - 1}), elem(t));
    expect_exact(ties, std::string("qadd_exact_ratios_") + ir::dtype_name(t), {1, 3}, 16, 11);
  }
}

TEST(QOpsParity, QLinearMulSeGate) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    const int64_t z = t == DType::u8 ? 0 : -128;
    OnnxBuilder b(13);
    const auto x = b.input("x", {-1, 6, 5, 4}, elem(t));
    const auto gate = b.input("gate", {-1, 6, 1, 1}, elem(t));
    b.output(qbinary(b, "QLinearMul", t, x, {0.0371f, z + 20}, gate, {1.0f / 255.0f, z}, {0.0287f, z + 5}), elem(t));
    // Exact ratios and an odd zero point: many ties, where the zero point's place matters.
    b.output(qbinary(b, "QLinearMul", t, x, {0.5f, z + 128}, gate, {0.25f, z + 127}, {1.0f, z + 131}), elem(t));
    expect_exact(b, std::string("qmul_se_gate_") + ir::dtype_name(t), {1, 3}, 16, 11);
  }
}

// Split attention's gate (ResNeSt, SKNet): [N,2,C,H,W] x [N,2,C,1,1], and the NCHW SE gate
// [N,C,1,1] over a row-major map, each operand order, on the microkernels a run at a time. The
// map's 7x9 runs leave a tail after every 16-byte step.
TEST(QOpsParity, QLinearMulGateConstantPerRun) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    const int64_t z = t == DType::u8 ? 0 : -128;
    OnnxBuilder b(13);
    const auto x = b.input("x", {-1, 2, 12, 7, 9}, elem(t));
    const auto gate = b.input("gate", {-1, 2, 12, 1, 1}, elem(t));
    const auto map = b.input("map", {-1, 12, 7, 9}, elem(t));
    const auto se = b.input("se", {-1, 12, 1, 1}, elem(t));
    b.output(qbinary(b, "QLinearMul", t, x, {0.0371f, z + 20}, gate, {1.0f / 255.0f, z}, {0.0287f, z + 5}), elem(t));
    b.output(qbinary(b, "QLinearMul", t, gate, {0.5f, z + 127}, x, {0.25f, z + 128}, {1.0f, z + 131}), elem(t));
    b.output(qbinary(b, "QLinearMul", t, map, {0.0371f, z + 255}, se, {1.0f / 255.0f, z}, {0.0287f, z + 200}), elem(t));
    b.output(qbinary(b, "QLinearAdd", t, se, {0.05f, z + 3}, map, {0.0213f, z + 250}, {0.04f, z + 100}), elem(t));
    const std::string name = std::string("qmul_gate_per_run_") + ir::dtype_name(t);
    expect_exact(b, name, {1, 3}, 16, 13);
    expect_no_scalar_step(b, name);
  }
}

// QLinearReduceMean over the trailing axes of a row-major map (rows of H*W bytes) and over the
// middle axis ([outer][reduced][inner]: the global pool's kernel), against the ref kernel.
TEST(QOpsParity, QLinearReduceMeanOfRowMajorDataOnSimdKernels) {
  for (DType t : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    const int64_t z = t == DType::u8 ? 128 : 0;
    const Q xq{0.0437f, z + 127}, yq{0.0113f, z - 128};
    const auto x = b.input("x", {-1, 2, 12, 7, 9}, elem(t));
    b.output(qunary(b, "QLinearReduceMean", t, x, xq, yq, {{"axes", {3, 4}}, {"keepdims", 1}}), elem(t));
    b.output(qunary(b, "QLinearReduceMean", t, x, xq, yq, {{"axes", {1}}, {"keepdims", 0}}), elem(t));
    expect_no_scalar_step(b, "qreduce_mean_row_major");
    ScratchDir dir("octet-qreduce-rows");
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    Session session = Session::load(path);
    std::mt19937 rng(19);
    const ir::TensorData in = random_tensor(t, {3, 2, 12, 7, 9}, rng);
    const auto ours = session.run({in});
    ASSERT_EQ(ours.size(), 2u);
    const std::vector<int64_t> dims = {3, 2, 12, 7, 9}, strides = {1512, 756, 63, 9, 1};
    const bool hw[5] = {false, false, false, true, true}, pair[5] = {false, true, false, false, false};
    const kernels::QuantParams kx{xq.scale, int32_t(xq.zp)}, ky{yq.scale, int32_t(yq.zp)};
    auto check = [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> want0(72), want1(2268);
      kernels::q8_reduce_mean_strided__ref<T>(5, dims.data(), hw, in.as<T>(), strides.data(), kx, ky, want0.data());
      kernels::q8_reduce_mean_strided__ref<T>(5, dims.data(), pair, in.as<T>(), strides.data(), kx, ky, want1.data());
      EXPECT_EQ(std::vector<T>(ours[0].as<T>(), ours[0].as<T>() + 72), want0);
      EXPECT_EQ(std::vector<T>(ours[1].as<T>(), ours[1].as<T>() + 2268), want1);
    };
    if (t == DType::u8) check(uint8_t{});
    else check(int8_t{});
  }
}

TEST(QOpsParity, QLinearSigmoid) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto xu = b.input("xu", {-1, 4, 8, 8}, ElemType::u8);
  const auto xs = b.input("xs", {-1, 4, 8, 8}, ElemType::s8);
  b.output(qunary(b, "QLinearSigmoid", DType::u8, xu, {0.05f, 128}, {1.0f / 256.0f, 0}), ElemType::u8);
  b.output(qunary(b, "QLinearSigmoid", DType::s8, xs, {0.04f, 3}, {1.0f / 256.0f, -128}), ElemType::s8);
  expect_exact(b, "qsigmoid", {1, 3}, 16, 11);
}

// Every table entry: 4096 random bytes hit all 256 values (with near certainty), for several
// parameter sets. ORT evaluates the logistic function with MLAS's approximation, octet with
// 1 / (1 + exp(-x)); an entry moves only when that lands within an ulp of a rounding tie.
TEST(QOpsParity, QLinearSigmoidWholeTables) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto xu = b.input("xu", {1, 4096}, ElemType::u8);
  const auto xs = b.input("xs", {1, 4096}, ElemType::s8);
  for (Q qx : {Q{0.1f, 128}, Q{0.0625f, 100}, Q{0.0213f, 131}, Q{0.25f, 0}})
    for (Q qy : {Q{1.0f / 256.0f, 0}, Q{1.0f / 255.0f, 0}, Q{0.0041f, 3}})
      b.output(qunary(b, "QLinearSigmoid", DType::u8, xu, qx, qy), ElemType::u8);
  for (Q qx : {Q{0.1f, 0}, Q{0.05f, -20}, Q{0.0371f, 7}})
    for (Q qy : {Q{1.0f / 256.0f, -128}, Q{1.0f / 255.0f, -128}, Q{0.0043f, -120}})
      b.output(qunary(b, "QLinearSigmoid", DType::s8, xs, qx, qy), ElemType::s8);
  expect_exact(b, "qsigmoid_tables", {1}, 16, 11);
}

// HardSwish and HardSigmoid as ONNX Runtime computes them, x * (1/6) + 0.5 and alpha * x + beta
// each with two roundings: octet's float outputs equal ORT's bit for bit (x / 6, the spec's
// formula, differs in the last bit for ~15% of inputs). Dequantize -> HardSwish -> Quantize,
// which ORT runs in float and octet as a 256-entry table (QLinearHardSwish), then gives the
// same code for every byte.
TEST(QOpsParity, HardSwishAndHardSigmoidAreBitExact) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder f(14);
  const auto x = f.input("x", {-1, 8, 16, 16});  // k / 250 for k in [-1000, 1000]: both clamp edges
  f.output(f.node("HardSwish", {x}));
  f.output(f.node("HardSigmoid", {x}, {{"alpha", 0.2f}, {"beta", 0.5f}}));
  f.output(f.node("HardSigmoid", {x}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}));
  expect_exact(f, "hard_activations_f32", {1, 3}, 16);

  OnnxBuilder q(14);
  for (DType t : {DType::u8, DType::s8}) {
    const auto xq = q.input(std::string("x") + ir::dtype_name(t), {1, 4096}, elem(t));
    const int64_t z = t == DType::u8 ? 0 : -128;
    for (auto [qx, qy] : {std::pair{Q{0.05f, z + 128}, Q{0.03f, z + 10}}, std::pair{Q{0.0213f, z + 131}, Q{0.0117f, z + 26}},
                          std::pair{Q{1.0f / 32.0f, z + 96}, Q{1.0f / 64.0f, z + 8}}}) {
      const auto dq = q.node("DequantizeLinear", {xq, scalar_f(q, qx.scale), zero_point(q, t, qx.zp)});
      const auto hs = q.node("HardSwish", {dq});
      q.output(q.node("QuantizeLinear", {hs, scalar_f(q, qy.scale), zero_point(q, t, qy.zp)}), elem(t));
    }
  }
  expect_exact(q, "qdq_hardswish_tables", {1}, 16);
  EXPECT_EQ(nodes_after_load(q, "QLinearHardSwish"), 6);
}

// ONNX Runtime's lookup-table softmax: rows of 256 random bytes (every code, with near
// certainty, and every row maximum from the top down), several input scales, the output
// scales its quantizer writes (1/256, zero point 0 or -128) and an odd one (ORT multiplies by
// floor(1 / y_scale)); the last axis, a middle axis (opset 13) and opset 12's flattening.
TEST(QOpsParity, QLinearSoftmaxEveryCode) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto xu = b.input("xu", {-1, 16, 256}, ElemType::u8);
  const auto xs = b.input("xs", {-1, 16, 256}, ElemType::s8);
  // Rows of 10 and 1000 (classifier heads): reduction lengths that are not powers of two, so
  // FLT_MAX / D rounds before the logarithm of the table's shift.
  const auto xc = b.input("xc", {-1, 400, 10}, ElemType::u8);
  const auto xk = b.input("xk", {-1, 4, 1000}, ElemType::s8);
  const testing::Attrs last = {{"opset", int64_t{13}}, {"axis", int64_t{-1}}};
  for (float sx : {0.045f, 0.2f}) {
    b.output(qunary(b, "QLinearSoftmax", DType::u8, xc, {sx, 128}, {1.0f / 256.0f, 0}, last), ElemType::u8);
    b.output(qunary(b, "QLinearSoftmax", DType::s8, xk, {sx, 0}, {1.0f / 256.0f, -128}, last), ElemType::s8);
  }
  for (float sx : {0.02f, 0.1f, 0.37f, 1.5f}) {
    b.output(qunary(b, "QLinearSoftmax", DType::u8, xu, {sx, 128}, {1.0f / 256.0f, 0}, last), ElemType::u8);
    b.output(qunary(b, "QLinearSoftmax", DType::s8, xs, {sx, 0}, {1.0f / 256.0f, -128}, last), ElemType::s8);
  }
  b.output(qunary(b, "QLinearSoftmax", DType::u8, xu, {0.1f, 128}, {0.0031f, 3}, last), ElemType::u8);
  b.output(qunary(b, "QLinearSoftmax", DType::s8, xs, {0.1f, 0}, {0.0043f, -100}, last), ElemType::s8);
  // axis 1 of [N, 16, 256] (opset 13: 16 values per row, strided), opset 12 from axis 1 (all
  // 4096 values of an image in one row) and opset 12 without axis (-1 whatever the opset: the
  // last dimension, not the old Softmax's default 1).
  b.output(qunary(b, "QLinearSoftmax", DType::u8, xu, {0.2f, 128}, {1.0f / 256.0f, 0},
                  {{"opset", int64_t{13}}, {"axis", int64_t{1}}}),
           ElemType::u8);
  b.output(qunary(b, "QLinearSoftmax", DType::s8, xs, {0.6f, 0}, {1.0f / 256.0f, -128},
                  {{"opset", int64_t{12}}, {"axis", int64_t{1}}}),
           ElemType::s8);
  b.output(qunary(b, "QLinearSoftmax", DType::u8, xu, {0.05f, 0}, {1.0f / 256.0f, 0}, {{"opset", int64_t{12}}}),
           ElemType::u8);
  expect_exact(b, "qsoftmax", {1, 2}, 4);
  expect_no_scalar_step(b, "qsoftmax");
}

// The QDQ unit ORT's quantizer writes at a classifier's end, DequantizeLinear -> Softmax ->
// QuantizeLinear (1/256): octet fuses it into QLinearSoftmax like ORT does, so the int8
// probabilities agree bit for bit where octet used to run Softmax in float (89.9% identical).
TEST(QOpsParity, QdqSoftmaxTailIsFused) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    const auto x = b.input("x", {-1, 10});
    const int64_t z = t == DType::u8 ? 0 : -128;
    const auto xq = b.node("QuantizeLinear", {x, scalar_f(b, 0.045f), zero_point(b, t, t == DType::u8 ? 140 : 12)});
    const auto xd = b.node("DequantizeLinear", {xq, scalar_f(b, 0.045f), zero_point(b, t, t == DType::u8 ? 140 : 12)});
    const auto sm = b.node("Softmax", {xd}, {{"axis", int64_t{-1}}});
    const auto yq = b.node("QuantizeLinear", {sm, scalar_f(b, 1.0f / 256.0f), zero_point(b, t, z)});
    b.output(yq, elem(t));
    const std::string name = std::string("qdq_softmax_") + ir::dtype_name(t);
    expect_exact(b, name, {1, 64}, 16);
    expect_no_scalar_step(b, name);
    ScratchDir dir("octet-qsoftmax");
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    int fused = 0;
    const Session session = Session::load(path);
    for (const auto& n : session.graph().nodes) fused += n.op == "QLinearSoftmax";
    EXPECT_EQ(fused, 1) << name;
  }
}

// QLinearConcat: inputs with the output's parameters are copied, others requantized through a
// table; channel concat of NCHW maps (octet concatenates channels-last there) and a last-axis
// concat, uint8 and int8.
TEST(QOpsParity, QLinearConcat) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    const int64_t z = t == DType::u8 ? 128 : 0;
    const auto a = b.input("a", {-1, 3, 5, 4}, elem(t));
    const auto c = b.input("c", {-1, 6, 5, 4}, elem(t));
    const Q y{0.05f, z + 3};
    auto concat = [&](const std::vector<std::pair<std::string, Q>>& xs, int64_t axis) {
      std::vector<std::string> in = {scalar_f(b, y.scale), zero_point(b, t, y.zp)};
      for (const auto& [x, q] : xs) in.insert(in.end(), {x, scalar_f(b, q.scale), zero_point(b, t, q.zp)});
      return ms_node(b, "QLinearConcat", in, {{"axis", axis}});
    };
    b.output(concat({{a, y}, {c, y}}, 1), elem(t));                                   // copies only
    b.output(concat({{a, {0.031f, z - 7}}, {c, y}, {a, {0.5f, z}}}, 1), elem(t));      // tables
    b.output(concat({{a, {0.07f, z + 1}}, {a, {0.02f, z - 2}}}, -1), elem(t));         // last axis
    expect_exact(b, std::string("qconcat_") + ir::dtype_name(t), {1, 3}, 16);
  }
}

// A Concat between QDQ pairs (SqueezeNet's fire modules as ORT's quantizer writes them):
// fused into QLinearConcat, identical to ORT.
TEST(QOpsParity, QdqConcatIsFused) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto x = b.input("x", {-1, 4, 3, 3});
  const auto u = b.input("u", {-1, 2, 3, 3});
  auto qdq = [&](const std::string& v, float s, int64_t zp) {
    const auto q = b.node("QuantizeLinear", {v, scalar_f(b, s), zero_point(b, DType::u8, zp)});
    return b.node("DequantizeLinear", {q, scalar_f(b, s), zero_point(b, DType::u8, zp)});
  };
  const auto cat = b.node("Concat", {qdq(x, 0.02f, 120), qdq(u, 0.035f, 100)}, {{"axis", int64_t{1}}});
  b.output(b.node("QuantizeLinear", {cat, scalar_f(b, 0.03f), zero_point(b, DType::u8, 110)}), ElemType::u8);
  expect_exact(b, "qdq_concat", {1, 4}, 16);
  EXPECT_EQ(nodes_after_load(b, "QLinearConcat"), 1);
}

// DequantizeLinear -> ReduceMean -> QuantizeLinear, which ORT runs in float (its CPU provider
// has no QLinearReduceMean kernel): octet fuses it into QLinearReduceMean, an integer sum and
// one requantization (the global pool's formula). The two can differ by 1 where the exact mean
// lies within float rounding of a tie. Axes: spatial on channels-last data (a QLinearConv's
// output: the global pool's SIMD kernel), spatial, channel and last axis on row-major input,
// and batch + height (the batch axis forbids image slicing).
TEST(QOpsParity, QdqReduceMeanIsFused) {
  OCTET_SKIP_WITHOUT_ORT();
  for (DType t : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    std::mt19937 rng(5);
    const int64_t z = t == DType::u8 ? 128 : 0;
    const auto x = b.input("x", {-1, 6, 5, 7}, elem(t));
    const auto conv = b.node("QLinearConv",
                             {x, scalar_f(b, 0.0437f), zero_point(b, t, z + 3),
                              constant(b, TensorValue::s8({8, 6, 3, 3}, random_ints(rng, 8 * 54, -127, 127))),
                              scalar_f(b, 0.0093f), zero_point(b, DType::s8, 0), scalar_f(b, 0.7316f),
                              zero_point(b, t, z - 5)},
                             {{"pads", {1, 1, 1, 1}}});
    auto mean = [&](const std::string& in, float in_scale, int64_t in_zp, std::vector<int64_t> axes, int64_t keep,
                    float out_scale, int64_t out_zp) {
      const auto d = b.node("DequantizeLinear", {in, scalar_f(b, in_scale), zero_point(b, t, in_zp)});
      const auto m = b.node("ReduceMean", {d}, {{"axes", axes}, {"keepdims", keep}});
      return b.node("QuantizeLinear", {m, scalar_f(b, out_scale), zero_point(b, t, out_zp)});
    };
    b.output(mean(conv, 0.7316f, z - 5, {2, 3}, 1, 0.0871f, z + 2), elem(t));
    // Output scales spread each mean over about +-100 steps (x spans +-5.6, so a mean of n
    // values has a standard deviation near 3.2 / sqrt(n)).
    b.output(mean(x, 0.0437f, z + 3, {-2, -1}, 0, 0.0131f, z - 1), elem(t));
    b.output(mean(x, 0.0437f, z + 3, {1}, 1, 0.0297f, z), elem(t));
    b.output(mean(x, 0.0437f, z + 3, {-1}, 0, 0.0313f, z + 4), elem(t));
    b.output(mean(x, 0.0437f, z + 3, {0, 2}, 1, 0.0331f, z - 2), elem(t));
    const std::string name = std::string("qdq_reduce_mean_") + ir::dtype_name(t);
    expect_within_one(b, name, 0.001, {1, 3}, 8);
    ScratchDir dir("octet-qreduce");
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    int fused = 0;
    const Session session = Session::load(path);
    for (const auto& n : session.graph().nodes) fused += n.op == "QLinearReduceMean";
    EXPECT_EQ(fused, 5) << name;
  }
}

// The com.microsoft QLinearReduceMean node itself (ORT's schema; ORT's CPU provider cannot run
// it, so the reference is octet's scalar kernel): the spatial axes and the channel axis of a
// row-major input, keepdims 0 and 1.
TEST(QOpsParity, QLinearReduceMeanContribOpMatchesTheRef) {
  for (DType t : {DType::u8, DType::s8}) {
    OnnxBuilder b(13);
    const int64_t z = t == DType::u8 ? 128 : 0;
    const Q xq{0.0437f, z + 3}, yq{0.0113f, z - 4};
    const auto x = b.input("x", {-1, 8, 5, 6}, elem(t));
    b.output(qunary(b, "QLinearReduceMean", t, x, xq, yq, {{"axes", {2, 3}}, {"keepdims", 0}}), elem(t));
    b.output(qunary(b, "QLinearReduceMean", t, x, xq, yq, {{"axes", {-3}}, {"keepdims", 1}}), elem(t));
    ScratchDir dir("octet-qreduce-op");
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    Session session = Session::load(path);
    std::mt19937 rng(9);
    const ir::TensorData in = random_tensor(t, {3, 8, 5, 6}, rng);
    const auto ours = session.run({in});
    ASSERT_EQ(ours.size(), 2u);
    EXPECT_EQ(ours[0].dims, (ir::Dims{3, 8}));
    EXPECT_EQ(ours[1].dims, (ir::Dims{3, 1, 5, 6}));
    const std::vector<int64_t> dims = {3, 8, 5, 6}, strides = {240, 30, 6, 1};
    const bool spatial[4] = {false, false, true, true}, channel[4] = {false, true, false, false};
    const kernels::QuantParams kx{xq.scale, int32_t(xq.zp)}, ky{yq.scale, int32_t(yq.zp)};
    auto check = [&](auto tag) {
      using T = decltype(tag);
      std::vector<T> want0(24), want1(90);
      kernels::q8_reduce_mean_strided__ref<T>(4, dims.data(), spatial, in.as<T>(), strides.data(), kx, ky, want0.data());
      kernels::q8_reduce_mean_strided__ref<T>(4, dims.data(), channel, in.as<T>(), strides.data(), kx, ky, want1.data());
      EXPECT_EQ(std::vector<T>(ours[0].as<T>(), ours[0].as<T>() + 24), want0);
      EXPECT_EQ(std::vector<T>(ours[1].as<T>(), ours[1].as<T>() + 90), want1);
    };
    if (t == DType::u8) check(uint8_t{});
    else check(int8_t{});
  }
}

TEST(QOpsParity, QLinearLeakyRelu) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto xu = b.input("xu", {-1, 4, 8, 8}, ElemType::u8);
  const auto xs = b.input("xs", {-1, 4, 8, 8}, ElemType::s8);
  b.output(qunary(b, "QLinearLeakyRelu", DType::u8, xu, {0.05f, 128}, {0.03f, 40}, {{"alpha", 0.1f}}), ElemType::u8);
  b.output(qunary(b, "QLinearLeakyRelu", DType::s8, xs, {0.04f, 3}, {0.025f, -90}, {{"alpha", 0.3f}}), ElemType::s8);
  expect_exact(b, "qleakyrelu");
}

TEST(QOpsParity, QLinearGlobalAveragePool) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  const auto xu = b.input("xu", {-1, 16, 7, 5}, ElemType::u8);
  const auto xs = b.input("xs", {-1, 16, 6, 6}, ElemType::s8);
  b.output(qunary(b, "QLinearGlobalAveragePool", DType::u8, xu, {0.05f, 128}, {0.01f, 120}, {{"channels_last", 0}}),
           ElemType::u8);
  b.output(qunary(b, "QLinearGlobalAveragePool", DType::s8, xs, {0.04f, -3}, {0.0075f, 5}, {{"channels_last", 0}}),
           ElemType::s8);
  expect_exact(b, "qgap", {1, 4}, 8);
}

TEST(QOpsParity, QLinearAveragePool) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t include_pad : {0, 1}) {
    for (int64_t ceil_mode : {0, 1}) {
      OnnxBuilder b(13);
      const auto xu = b.input("xu", {-1, 5, 8, 7}, ElemType::u8);
      const auto xs = b.input("xs", {-1, 5, 8, 7}, ElemType::s8);
      const testing::Attrs attrs = {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}},
                                    {"count_include_pad", include_pad}, {"ceil_mode", ceil_mode}, {"channels_last", 0}};
      b.output(qunary(b, "QLinearAveragePool", DType::u8, xu, {0.05f, 128}, {0.02f, 125}, attrs), ElemType::u8);
      b.output(qunary(b, "QLinearAveragePool", DType::s8, xs, {0.04f, -3}, {0.015f, 5}, attrs), ElemType::s8);
      expect_exact(b, "qavgpool_pad" + std::to_string(include_pad) + "_ceil" + std::to_string(ceil_mode), {1, 2}, 8);
    }
  }
}

// The ops on channels-last data: conv output (NHWC inside octet) into the global pool, the
// SE-gate Mul against the pooled [N, C, 1, 1] map, and a residual Add of two conv outputs.
TEST(QOpsParity, ChannelsLastChain) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  std::mt19937 rng(21);
  const auto x = b.input("x", {-1, 4, 6, 5}, ElemType::u8);
  auto conv = [&](const std::string& in, int64_t out_c, float y_scale) {
    return b.node("QLinearConv",
                  {in, scalar_f(b, 0.05f), zero_point(b, DType::u8, 128),
                   constant(b, TensorValue::s8({out_c, 4, 3, 3}, random_ints(rng, size_t(out_c) * 36, -127, 127))),
                   scalar_f(b, 0.01f), zero_point(b, DType::s8, 0), scalar_f(b, y_scale),
                   zero_point(b, DType::u8, 100)},
                  {{"pads", {1, 1, 1, 1}}});
  };
  const auto c1 = conv(x, 8, 0.25f), c2 = conv(x, 8, 0.3f);
  const auto gap =
      qunary(b, "QLinearGlobalAveragePool", DType::u8, c1, {0.25f, 100}, {0.05f, 110}, {{"channels_last", 0}});
  const auto gated = qbinary(b, "QLinearMul", DType::u8, c1, {0.25f, 100}, gap, {0.05f, 110}, {0.3f, 90});
  const auto sum = qbinary(b, "QLinearAdd", DType::u8, c1, {0.25f, 100}, c2, {0.3f, 100}, {0.41f, 95});
  b.output(c1, ElemType::u8);
  b.output(gap, ElemType::u8);
  b.output(gated, ElemType::u8);
  b.output(sum, ElemType::u8);
  for (int64_t batch : {1, 3}) {
    for (const Agreement& a : run_both(b, "channels_last_chain", batch, 3)) {
      EXPECT_EQ(a.differ, 0) << a.output << " at batch " << batch << ": max |diff| " << a.max_diff;
      EXPECT_GE(a.distinct, std::min<size_t>(8, size_t(a.elements) / 4)) << a.output << ": nearly constant";
    }
  }
}

}  // namespace
}  // namespace octet::parity
