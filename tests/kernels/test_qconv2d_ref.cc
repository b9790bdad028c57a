// Quantized conv references: ONNX node tests, hand-computed cases, the pad-with-zero-point
// rule, an independent float computation (dequantize -> FP32 ref conv -> quantize), and
// adversarial accumulator ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tests/kernels/ref_test_util.h"
#include "tests/kernels/int_vectors.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qconv2d.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {
namespace {

template <typename T>
std::vector<T> random_q(size_t n, std::mt19937& rng, int lo = qmin_of<T>(), int hi = qmax_of<T>()) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// ---- ONNX node tests -------------------------------------------------------------------

TEST(QConv2dRef, OnnxNodeTestQLinearConv) {
  // test_qlinearconv: uint8 x 7x7 (zp 132), one uint8 1x1 weight 0 with zero point 255,
  // so every accumulator is -255 * (x - 132).
  const std::vector<uint8_t> x = {255, 174, 162, 25,  203, 168, 58,  15,  59,  237, 95,  129, 0,
                                  64,  56,  242, 153, 221, 168, 12,  166, 232, 178, 186, 195, 237,
                                  162, 237, 188, 39,  124, 77,  80,  102, 43,  127, 230, 21,  83,
                                  41,  40,  134, 255, 154, 92,  141, 42,  148, 247};
  const Ints want = {0,   81,  93,  230, 52,  87,  197, 240, 196, 18,  160, 126, 255,
                     191, 199, 13,  102, 34,  87,  243, 89,  23,  77,  69,  60,  18,
                     93,  18,  67,  216, 131, 178, 175, 153, 212, 128, 25,  234, 172,
                     214, 215, 121, 0,   101, 163, 114, 213, 107, 8};
  Conv2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 7;
  const uint8_t w[] = {0};
  const int32_t w_zp[] = {255};
  const float m[] = {requant_multiplier(0.00369204697f, 0.00172794575f, 0.00162681262f)};
  std::vector<uint8_t> y(49);
  q8_conv2d_nhwc__ref<uint8_t, uint8_t, uint8_t>(
      s, x.data(), 132, w, w_zp, nullptr, full_range_requantization<uint8_t>(m, 123), y.data());
  EXPECT_EQ(ints(y), want);
}

TEST(QConv2dRef, OnnxNodeTestsConvInteger) {
  // test_basic_convinteger / test_convinteger_with_padding: x 3x3 = 2..10 (zp 1), w 2x2 of 1.
  const uint8_t x[] = {2, 3, 4, 5, 6, 7, 8, 9, 10};
  const uint8_t w[] = {1, 1, 1, 1};
  const int32_t w_zp[] = {0};
  Conv2dShape s;
  s.in_h = s.in_w = 3;
  s.kernel_h = s.kernel_w = 2;
  s.out_h = s.out_w = 2;
  std::vector<int32_t> acc(4);
  q8_conv2d_nhwc_acc__ref<uint8_t, uint8_t>(s, x, 1, w, w_zp, nullptr, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{12, 16, 24, 28}));
  s.pad_top = s.pad_left = 1;  // pads 1 on every side
  s.out_h = s.out_w = 4;
  acc.assign(16, -1);
  q8_conv2d_nhwc_acc__ref<uint8_t, uint8_t>(s, x, 1, w, w_zp, nullptr, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

// ---- Hand-computed cases --------------------------------------------------------------

TEST(QConv2dRef, DepthwiseKeepsChannelsApartAndRoundsTiesToEven) {
  // The FP32 ref's depthwise case, quantized: x zero point 10, channel 0 holds v = 3r + c + 1,
  // channel 1 holds 10 v. Accumulators: ch0 = 10 v + 27 -> {37, 47, 67, 77};
  // ch1 = 30 v + 80 -> {110, 140, 200, 230} (v = top-left value of the window).
  Conv2dShape s;
  s.in_h = s.in_w = 3;
  s.in_c = s.out_c = s.groups = 2;
  s.kernel_h = s.kernel_w = 2;
  s.out_h = s.out_w = 2;
  std::vector<uint8_t> x;
  for (int v = 1; v <= 9; ++v) {
    x.push_back(static_cast<uint8_t>(v + 10));
    x.push_back(static_cast<uint8_t>(10 * v + 10));
  }
  const int8_t w[] = {1, 2, 3, 4, 1, 0, 0, 2};
  const int32_t w_zp[] = {0};
  std::vector<int32_t> acc(8);
  q8_conv2d_nhwc_acc__ref<uint8_t, int8_t>(s, x.data(), 10, w, w_zp, nullptr, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{37, 110, 47, 140, 67, 200, 77, 230}));
  // Multiplier 0.5: 18.5 -> 18, 23.5 -> 24, 33.5 -> 34, 38.5 -> 38 (ties to even).
  const float m[] = {0.5f};
  std::vector<uint8_t> y(8);
  q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x.data(), 10, w, w_zp, nullptr,
                                                full_range_requantization<uint8_t>(m, 0), y.data());
  EXPECT_EQ(ints(y), (Ints{18, 55, 24, 70, 34, 100, 38, 115}));
}

TEST(QConv2dRef, PerChannelWeightScalesBiasAndFoldedReluClamp) {
  // The FP32 ref's pointwise case: real x pixels [1, 2], [3, 4] (scale 1, zp 100); real
  // weights [oc][ic] = {1, 0}, {0, 1}, {2, -1} stored as int8 with per-channel scales
  // {0.1, 0.05, 0.05}; real bias {0.5, 0, -1} -> int32 {5, 0, -20} (scale s_x * s_w[c]).
  // Real outputs {1.5, 2, -1, 3.5, 4, 1}; y scale 0.5, zp 10 -> {13, 14, 8, 17, 18, 12}.
  Conv2dShape s;
  s.in_w = s.out_w = 2;
  s.in_c = 2;
  s.out_c = 3;
  const uint8_t x[] = {101, 102, 103, 104};
  const int8_t w[] = {10, 0, 0, 20, 40, -20};
  const float w_scale[] = {0.1f, 0.05f, 0.05f};
  const int32_t w_zp[] = {0};
  const int32_t bias[] = {5, 0, -20};
  float m[3];
  for (int c = 0; c < 3; ++c) m[c] = requant_multiplier(1.0f, w_scale[c], 0.5f);
  Requantization rq = full_range_requantization<uint8_t>(m, 10);
  std::vector<uint8_t> y(6);
  q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x, 100, w, w_zp, bias, rq, y.data());
  EXPECT_EQ(ints(y), (Ints{13, 14, 8, 17, 18, 12}));
  // ReLU folded into the clamp: qmin = the output zero point.
  output_range<uint8_t>(0.0f, std::numeric_limits<float>::infinity(), {0.5f, 10}, &rq.qmin,
                        &rq.qmax);
  q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x, 100, w, w_zp, bias, rq, y.data());
  EXPECT_EQ(ints(y), (Ints{13, 14, 10, 17, 18, 12}));
  // Clip(0, 3): qmax = 10 + 6.
  output_range<uint8_t>(0.0f, 3.0f, {0.5f, 10}, &rq.qmin, &rq.qmax);
  q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x, 100, w, w_zp, bias, rq, y.data());
  EXPECT_EQ(ints(y), (Ints{13, 14, 10, 16, 16, 12}));
}

TEST(QConv2dRef, WeightZeroPointPerTensorAndPerChannel) {
  // ConvInteger allows a weight zero point; with w = w_zp + 1 everywhere the accumulator is
  // the plain sum of (x - x_zp) over the window.
  Conv2dShape s;
  s.in_w = s.out_w = 1;
  s.in_c = 3;
  s.out_c = 2;
  const int8_t x[] = {-1, 2, 5};  // x_zp -2 -> {1, 4, 7}
  const int8_t w[] = {6, 6, 6, -9, -9, -9};
  std::vector<int32_t> acc(2);
  const int32_t per_channel[] = {5, -10};
  q8_conv2d_nhwc_acc__ref<int8_t, int8_t>(s, x, -2, w, per_channel, nullptr, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{12, 12}));
  const int32_t per_tensor[] = {5};
  q8_conv2d_nhwc_acc__ref<int8_t, int8_t>(s, x, -2, w, per_tensor, nullptr, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{12, 12 * -14}));
  const int32_t wrong[] = {1, 2, 3};
  EXPECT_THROW((q8_conv2d_nhwc_acc__ref<int8_t, int8_t>(s, x, -2, w, wrong, nullptr, acc.data())),
               std::invalid_argument);
}

// ---- Padding holds the input zero point ------------------------------------------------

template <typename TX>
void check_padding_reads_zero_point(int32_t x_zp) {
  SCOPED_TRACE(::testing::Message() << "x_zp " << x_zp);
  std::mt19937 rng(static_cast<uint32_t>(x_zp + 1000));
  Conv2dShape s;
  s.in_h = 4;
  s.in_w = 5;
  s.in_c = 3;
  s.out_c = 4;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;  // and 1 at the bottom / right
  s.out_h = 4;
  s.out_w = 5;
  const auto w = random_q<int8_t>(static_cast<size_t>(s.out_c) * s.in_c * 9, rng, -127, 127);
  const int32_t w_zp[] = {0};
  const int32_t bias[] = {-7, 0, 1234, -99999};

  // A constant image equal to the zero point is real 0 everywhere, padding included: every
  // output, border or interior, is the bias alone.
  const std::vector<TX> flat(static_cast<size_t>(s.in_h) * s.in_w * s.in_c, static_cast<TX>(x_zp));
  std::vector<int32_t> acc(static_cast<size_t>(s.out_h) * s.out_w * s.out_c);
  q8_conv2d_nhwc_acc__ref<TX, int8_t>(s, flat.data(), x_zp, w.data(), w_zp, bias, acc.data());
  for (size_t i = 0; i < acc.size(); ++i) ASSERT_EQ(acc[i], bias[i % s.out_c]) << "output " << i;

  // Padding by 1 equals an unpadded conv over the image framed by x_zp.
  const auto img = random_q<TX>(flat.size(), rng);
  const int ph = s.in_h + 2, pw = s.in_w + 2;
  std::vector<TX> framed(static_cast<size_t>(ph) * pw * s.in_c, static_cast<TX>(x_zp));
  for (int y = 0; y < s.in_h; ++y)
    for (int x = 0; x < s.in_w; ++x)
      for (int c = 0; c < s.in_c; ++c)
        framed[((y + 1) * pw + x + 1) * s.in_c + c] = img[(y * s.in_w + x) * s.in_c + c];
  Conv2dShape unpadded = s;
  unpadded.in_h = ph;
  unpadded.in_w = pw;
  unpadded.pad_top = unpadded.pad_left = 0;
  std::vector<int32_t> padded_acc(acc.size()), framed_acc(acc.size());
  q8_conv2d_nhwc_acc__ref<TX, int8_t>(s, img.data(), x_zp, w.data(), w_zp, bias, padded_acc.data());
  q8_conv2d_nhwc_acc__ref<TX, int8_t>(unpadded, framed.data(), x_zp, w.data(), w_zp, bias,
                                      framed_acc.data());
  EXPECT_EQ(padded_acc, framed_acc);
}

TEST(QConv2dRef, PaddingReadsTheInputZeroPointUint8) {
  for (int32_t zp : {0, 1, 128, 255}) check_padding_reads_zero_point<uint8_t>(zp);
}

TEST(QConv2dRef, PaddingReadsTheInputZeroPointInt8) {
  for (int32_t zp : {-128, -1, 0, 127}) check_padding_reads_zero_point<int8_t>(zp);
}

// ---- Against an independent float computation -----------------------------------------


struct FloatCheck {
  int outputs = 0, near_ties = 0, off_by_one = 0;
};

// Runs the integer path and the float path (dequantize x and w, FP32 ref conv plus the
// dequantized bias, quantize) on the same random data. They must agree exactly unless the
// exact real result sits within 0.01 of a rounding tie, and within 1 everywhere.
template <typename TX, typename TW, typename TY>
FloatCheck float_cross_check(const Conv2dShape& s, int32_t x_zp, int32_t w_zp, int32_t y_zp,
                             bool per_channel, uint32_t seed) {
  std::mt19937 rng(seed);
  const int icg = s.in_c / s.groups;
  const size_t n_x = static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c;
  const size_t n_w = static_cast<size_t>(s.out_c) * icg * s.kernel_h * s.kernel_w;
  const size_t n_y = static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.out_c;
  const auto x = random_q<TX>(n_x, rng);
  // Symmetric int8 weights live in [-127, 127]; uint8 weights use their zero point.
  const auto w = std::is_same_v<TW, int8_t> && w_zp == 0 ? random_q<TW>(n_w, rng, -127, 127)
                                                         : random_q<TW>(n_w, rng);
  std::uniform_real_distribution<float> log2_scale(-10.0f, 2.0f);
  const float x_scale = std::exp2(std::uniform_real_distribution<float>(-8.0f, -4.0f)(rng));
  std::vector<float> w_scale(per_channel ? s.out_c : 1);
  for (float& v : w_scale) v = std::exp2(log2_scale(rng));
  auto w_scale_of = [&](int c) { return per_channel ? w_scale[c] : w_scale[0]; };
  std::vector<int32_t> bias(s.out_c);
  for (int32_t& b : bias) b = std::uniform_int_distribution<int32_t>(-40000, 40000)(rng);
  const int32_t w_zps[] = {w_zp};

  // Integer path; the output scale is chosen from the observed accumulators so the outputs
  // use the whole range (one scale per tensor, so small-scale channels stay near zero).
  std::vector<int32_t> acc(n_y);
  q8_conv2d_nhwc_acc__ref<TX, TW>(s, x.data(), x_zp, w.data(), w_zps, bias.data(), acc.data());
  double rmin = 0.0, rmax = 0.0;
  for (size_t i = 0; i < n_y; ++i) {
    const double r =
        acc[i] * static_cast<double>(x_scale) * w_scale_of(static_cast<int>(i % s.out_c));
    rmin = std::min(rmin, r);
    rmax = std::max(rmax, r);
  }
  const float y_scale = static_cast<float>((rmax - rmin) / 255.0) * 0.9f + 1e-6f;
  std::vector<float> m(w_scale.size());
  for (size_t c = 0; c < m.size(); ++c) m[c] = requant_multiplier(x_scale, w_scale[c], y_scale);
  std::vector<TY> y_int(n_y);
  q8_conv2d_nhwc__ref<TX, TW, TY>(s, x.data(), x_zp, w.data(), w_zps, bias.data(),
                                  full_range_requantization<TY>(m, y_zp), y_int.data());

  // Float path, built only from the quantize / dequantize kernels and the FP32 conv.
  std::vector<float> xf(n_x), wf(n_w), bf(s.out_c), yf(n_y);
  q8_dequantize_linear__ref<TX>(static_cast<int64_t>(n_x), x.data(), x_scale, x_zp, xf.data());
  const int64_t w_dims[] = {s.out_c, static_cast<int64_t>(n_w / s.out_c)};
  std::vector<int32_t> w_zp_axis(per_channel ? s.out_c : 1, w_zp);
  if (per_channel) {
    q8_dequantize_linear_per_axis__ref<TW>(2, w_dims, 0, w.data(), w_scale, w_zp_axis, wf.data());
  } else {
    q8_dequantize_linear__ref<TW>(static_cast<int64_t>(n_w), w.data(), w_scale[0], w_zp, wf.data());
  }
  for (int c = 0; c < s.out_c; ++c) {
    q8_dequantize_linear__ref<int32_t>(1, &bias[c], x_scale * w_scale_of(c), 0, &bf[c]);
  }
  f32_conv2d_nhwc__ref(s, xf.data(), wf.data(), bf.data(), Activation{}, yf.data());
  std::vector<TY> y_flt(n_y);
  q8_quantize_linear__ref<TY>(static_cast<int64_t>(n_y), yf.data(), y_scale, y_zp, y_flt.data());

  FloatCheck result;
  for (size_t i = 0; i < n_y; ++i) {
    const int c = static_cast<int>(i % s.out_c);
    const double exact = acc[i] * static_cast<double>(x_scale) * w_scale_of(c) / y_scale;
    const double frac = exact - std::floor(exact);
    const bool near_tie = std::fabs(frac - 0.5) < 0.01;
    const int diff = static_cast<int>(y_int[i]) - static_cast<int>(y_flt[i]);
    ++result.outputs;
    result.near_ties += near_tie;
    result.off_by_one += diff != 0;
    if (near_tie) {
      EXPECT_LE(std::abs(diff), 1) << "output " << i << " exact " << exact;
    } else {
      EXPECT_EQ(diff, 0) << "output " << i << " exact " << exact << " int " << int(y_int[i])
                         << " float " << int(y_flt[i]);
    }
  }
  return result;
}

class QConv2dFloatCrossCheck : public ::testing::TestWithParam<octet::kernels::testing::ConvGeometry> {};

TEST_P(QConv2dFloatCrossCheck, IntegerPathMatchesDequantizedFloatConv) {
  const Conv2dShape s = octet::kernels::testing::conv_shape(GetParam());
  FloatCheck total;
  uint32_t seed = 1;
  auto add = [&](const FloatCheck& r) {
    total.outputs += r.outputs;
    total.near_ties += r.near_ties;
    total.off_by_one += r.off_by_one;
  };
  // uint8 activations x int8 symmetric weights (the default), zero points at both ends.
  for (auto [x_zp, y_zp] : {std::pair{0, 128}, {128, 0}, {255, 255}, {1, 127}}) {
    for (bool per_channel : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << "u8s8u8 x_zp " << x_zp << " y_zp " << y_zp << " per_channel " << per_channel);
      add(float_cross_check<uint8_t, int8_t, uint8_t>(s, x_zp, 0, y_zp, per_channel, seed++));
    }
  }
  // int8 activations.
  for (auto [x_zp, y_zp] : {std::pair{-128, 0}, {0, -128}, {127, 127}, {-1, 5}}) {
    SCOPED_TRACE(::testing::Message() << "s8s8s8 x_zp " << x_zp << " y_zp " << y_zp);
    add(float_cross_check<int8_t, int8_t, int8_t>(s, x_zp, 0, y_zp, true, seed++));
  }
  // uint8 weights with a zero point (QLinearConv u8u8), and int8 weights with a nonzero
  // per-tensor zero point (ConvInteger imports).
  {
    SCOPED_TRACE("u8u8u8 w_zp 128");
    add(float_cross_check<uint8_t, uint8_t, uint8_t>(s, 77, 128, 3, true, seed++));
  }
  {
    SCOPED_TRACE("u8s8s8 w_zp -3");
    add(float_cross_check<uint8_t, int8_t, int8_t>(s, 200, -3, -20, false, seed++));
  }
  std::printf("[          ] %d outputs, %d near a tie, %d differ by 1 from the float path\n",
              total.outputs, total.near_ties, total.off_by_one);
}

// batch, in_h, in_w, in_c, out_c, k_h, k_w, stride_h, stride_w, dil_h, dil_w,
// pad_top, pad_left, pad_bottom, pad_right, groups
INSTANTIATE_TEST_SUITE_P(
    Shapes, QConv2dFloatCrossCheck,
    ::testing::Values(
        octet::kernels::testing::ConvGeometry{2, 5, 6, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // dense, pad 1
        octet::kernels::testing::ConvGeometry{1, 7, 7, 6, 6, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 6},    // depthwise, stride 2
        octet::kernels::testing::ConvGeometry{1, 5, 6, 3, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},    // depthwise, multiplier 2
        octet::kernels::testing::ConvGeometry{1, 5, 5, 4, 6, 3, 1, 1, 2, 2, 1, 2, 0, 0, 1, 2},    // grouped, dilated
        octet::kernels::testing::ConvGeometry{3, 1, 1, 16, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},   // 1x1 spatial
        octet::kernels::testing::ConvGeometry{1, 4, 4, 3, 5, 3, 3, 1, 1, 1, 1, 2, 2, 0, 0, 1},    // asymmetric pads
        octet::kernels::testing::ConvGeometry{1, 9, 8, 5, 7, 5, 5, 2, 1, 1, 2, 2, 3, 2, 1, 1}));  // 5x5, odd sizes

// ---- Adversarial accumulators ---------------------------------------------------------

TEST(QConv2dRef, AllMaxActivationsTimesExtremeWeightsOverK4096) {
  // A 1x1 conv over 4096 channels: each term is at most |255 * 255| = 65025 in magnitude,
  // so |acc| <= 4096 * 65025 = 266,342,400 < 2^31 - 1: no overflow for K <= 33025.
  Conv2dShape s;
  s.in_c = 4096;
  s.out_c = 4;
  const std::vector<uint8_t> x(4096, 255);
  std::vector<int8_t> w(4 * 4096);
  for (int i = 0; i < 4096; ++i) {
    w[i] = 127;              // oc0: +127
    w[4096 + i] = -127;      // oc1: -127
    w[2 * 4096 + i] = -128;  // oc2: -128 with weight zero point 127 -> -255 per term
    w[3 * 4096 + i] = static_cast<int8_t>(i % 2 ? 127 : -127);  // oc3: alternating, sums to 0
  }
  const int32_t w_zp[] = {0, 0, 127, 0};
  std::vector<int32_t> acc(4);
  q8_conv2d_nhwc_acc__ref<uint8_t, int8_t>(s, x.data(), 0, w.data(), w_zp, nullptr, acc.data());
  EXPECT_EQ(acc[0], 4096 * 255 * 127);  // 132,648,960
  EXPECT_EQ(acc[1], -4096 * 255 * 127);
  EXPECT_EQ(acc[2], -4096 * 255 * 255);  // -266,342,400
  EXPECT_EQ(acc[3], 0);

  // Requantized with a multiplier that keeps them in range: 2^-21, 2^-21, 2^-22.
  const float m[] = {std::ldexp(1.0f, -21), std::ldexp(1.0f, -21), std::ldexp(1.0f, -22), 1.0f};
  std::vector<int8_t> y(4);
  q8_conv2d_nhwc__ref<uint8_t, int8_t, int8_t>(s, x.data(), 0, w.data(), w_zp, nullptr,
                                               full_range_requantization<int8_t>(m, 0), y.data());
  // 132648960 / 2^21 = 63.25 -> 63; 266342400 / 2^22 = 63.5 -> 64 (tie to even).
  EXPECT_EQ(ints(y), (Ints{63, -63, -64, 0}));
  // With the identity multiplier every extreme saturates.
  const float one[] = {1.0f};
  q8_conv2d_nhwc__ref<uint8_t, int8_t, int8_t>(s, x.data(), 0, w.data(), w_zp, nullptr,
                                               full_range_requantization<int8_t>(one, 0), y.data());
  EXPECT_EQ(ints(y), (Ints{127, -128, -128, 0}));
}

TEST(QConv2dRef, ZeroPointsAtTheEndsOfTheRange) {
  // x = 255 with zp 0 and x = 0 with zp 255 are real +255 and -255; likewise for int8.
  Conv2dShape s;
  s.in_c = 64;
  const std::vector<int8_t> w(64, -127);
  const int32_t w_zp[] = {0};
  int32_t acc = 0;
  for (auto [xv, zp, want] :
       {std::tuple{255, 0, -255 * 127 * 64}, {0, 255, 255 * 127 * 64}, {128, 128, 0}}) {
    const std::vector<uint8_t> x(64, static_cast<uint8_t>(xv));
    q8_conv2d_nhwc_acc__ref<uint8_t, int8_t>(s, x.data(), zp, w.data(), w_zp, nullptr, &acc);
    EXPECT_EQ(acc, want) << "u8 x " << xv << " zp " << zp;
  }
  for (auto [xv, zp, want] :
       {std::tuple{127, -128, -255 * 127 * 64}, {-128, 127, 255 * 127 * 64}, {0, 0, 0}}) {
    const std::vector<int8_t> x(64, static_cast<int8_t>(xv));
    q8_conv2d_nhwc_acc__ref<int8_t, int8_t>(s, x.data(), zp, w.data(), w_zp, nullptr, &acc);
    EXPECT_EQ(acc, want) << "s8 x " << xv << " zp " << zp;
  }
}

}  // namespace
}  // namespace octet::kernels
