// QuantizeLinear / DequantizeLinear / requantization / DynamicQuantizeLinear references.
// Expected values are worked by hand or copied from the ONNX node tests
// (onnx/backend/test/data/node/test_*; also in Debian's libonnx-testdata).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tests/kernels/int_vectors.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {
namespace {

template <typename T>
std::vector<int> quantize(const std::vector<float>& x, float scale, int32_t zp) {
  std::vector<T> y(x.size());
  q8_quantize_linear__ref<T>(static_cast<int64_t>(x.size()), x.data(), scale, zp, y.data());
  return std::vector<int>(y.begin(), y.end());
}

TEST(QuantizeLinearRef, TiesRoundToEven) {
  const std::vector<float> x = {2.5f, 3.5f, -2.5f, -3.5f, 0.5f, -0.5f, 1.5f};
  EXPECT_EQ(quantize<int8_t>(x, 1.0f, 0), (Ints{2, 4, -2, -4, 0, 0, 2}));
  EXPECT_EQ(quantize<uint8_t>(x, 1.0f, 128), (Ints{130, 132, 126, 124, 128, 128, 130}));
  // Scale 2 puts the tie after the division: 5 / 2 = 2.5 -> 2, 7 / 2 = 3.5 -> 4.
  EXPECT_EQ(quantize<int8_t>({5.0f, 7.0f, -5.0f}, 2.0f, 0), (Ints{2, 4, -2}));
}

TEST(QuantizeLinearRef, ZeroPointIsAddedAfterRounding) {
  // round_half_even(2.5) + 1 = 3. Rounding after adding the zero point would give
  // round_half_even(3.5) = 4: ONNX's QuantizeLinear and MLAS add the zero point after.
  EXPECT_EQ(quantize<uint8_t>({2.5f, 0.5f, -0.5f}, 1.0f, 1), (Ints{3, 1, 1}));
  EXPECT_EQ(quantize<int8_t>({2.5f}, 1.0f, -1), (Ints{1}));
}

TEST(QuantizeLinearRef, SaturatesAtBothEndsUint8) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(quantize<uint8_t>({-1.0f, -1000.0f, 255.0f, 255.4f, 255.5f, 256.0f, 1e9f, -inf, inf},
                              1.0f, 0),
            (Ints{0, 0, 255, 255, 255, 255, 255, 0, 255}));
  // Zero point at the top of the range: anything positive saturates.
  EXPECT_EQ(quantize<uint8_t>({1.0f, 0.0f, -255.0f, -256.0f}, 1.0f, 255), (Ints{255, 255, 0, 0}));
  EXPECT_EQ(quantize<uint8_t>({-1.0f, 255.0f, 256.0f}, 1.0f, 0), (Ints{0, 255, 255}));
}

TEST(QuantizeLinearRef, SaturatesAtBothEndsInt8) {
  // 127.5 rounds to 128 (even) and then saturates; -128.5 rounds to -128.
  EXPECT_EQ(
      quantize<int8_t>({-128.0f, -128.5f, -129.0f, -1e9f, 127.0f, 127.5f, 128.0f, 1e9f}, 1.0f, 0),
      (Ints{-128, -128, -128, -128, 127, 127, 127, 127}));
  EXPECT_EQ(quantize<int8_t>({1.0f, 0.0f, -255.0f, -256.0f}, 1.0f, 127),
            (Ints{127, 127, -128, -128}));
  EXPECT_EQ(quantize<int8_t>({-1.0f, 255.0f, 256.0f}, 1.0f, -128), (Ints{-128, 127, 127}));
}

TEST(QuantizeLinearRef, NanLandsOnTheTypeMinimumLikeMlasOnX86) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(quantize<uint8_t>({nan}, 1.0f, 100), (Ints{0}));
  EXPECT_EQ(quantize<int8_t>({nan}, 1.0f, 5), (Ints{-128}));
}

TEST(QuantizeLinearRef, DividesByTheScaleNeverMultipliesByItsReciprocal) {
  // Find inputs where x / s and x * (1 / s) round to different integers, then check that
  // the kernel agrees with the division.
  int found = 0;
  for (float s : {0.1f, 0.3f, 0.7f, 0.05f, 1.0f / 3.0f, 0.0123f, 6.1e-5f}) {
    const float reciprocal = 1.0f / s;
    for (int k = -120; k < 120; ++k) {
      // Near a half-integer multiple of s, step through neighbouring floats.
      float x = (static_cast<float>(k) + 0.5f) * s;
      for (int step = 0; step < 8; ++step, x = std::nextafter(x, 1e30f)) {
        const float by_div = std::nearbyint(x / s);
        const float by_mul = std::nearbyint(x * reciprocal);
        if (by_div == by_mul) continue;
        ++found;
        const int32_t want = static_cast<int32_t>(by_div);
        const Ints got = quantize<int8_t>({x}, s, 0);
        ASSERT_EQ(got[0], want) << "x " << x << " scale " << s;
        ASSERT_NE(got[0], static_cast<int32_t>(by_mul));
      }
    }
  }
  // The search must actually exercise the rule.
  EXPECT_GT(found, 0);
  std::printf("[          ] %d inputs where dividing and multiplying by the reciprocal disagree\n",
              found);
}

TEST(QuantizeLinearRef, OnnxNodeTestPerTensor) {
  // test_quantizelinear
  EXPECT_EQ(quantize<uint8_t>({0, 2, 3, 1000, -254, -1000}, 2.0f, 128),
            (Ints{128, 129, 130, 255, 1, 0}));
}

const std::vector<float> kAxisX = {-162, 10, -100, 232, -20,  -50,  -76,  0,    0,
                                   252,  32, -44,  245, -485, -960, -270, -375, -470};
const Ints kAxisY = {3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4, 142, 121, 102};

TEST(QuantizeLinearRef, PerAxisOnnxNodeTestAxis1AndNegativeAxis) {
  // test_quantizelinear_axis: x [1, 3, 3, 2], axis 1, scales {2, 4, 5}, zero points {84, 24, 196}.
  const int64_t dims[] = {1, 3, 3, 2};
  const float scale[] = {2, 4, 5};
  const int32_t zp[] = {84, 24, 196};
  for (int axis : {1, -3}) {
    std::vector<uint8_t> y(18);
    q8_quantize_linear_per_axis__ref<uint8_t>(4, dims, axis, kAxisX.data(), scale, zp, y.data());
    EXPECT_EQ(Ints(y.begin(), y.end()), kAxisY) << "axis " << axis;
  }
}

TEST(QuantizeLinearRef, PerAxisLastAxisByNegativeIndex) {
  // x [2, 3], axis -1: column c uses scale {1, 2, 4}[c], zero point {0, 10, 20}[c].
  // Row 0: 3/1 = 3; 3/2 = 1.5 -> 2 + 10; 3/4 = 0.75 -> 1 + 20.
  // Row 1: -6; -6/2 = -3 + 10; -6/4 = -1.5 -> -2 + 20.
  const int64_t dims[] = {2, 3};
  const std::vector<float> x = {3, 3, 3, -6, -6, -6};
  const float scale[] = {1, 2, 4};
  const int32_t zp[] = {0, 10, 20};
  std::vector<int8_t> y(6);
  q8_quantize_linear_per_axis__ref<int8_t>(2, dims, -1, x.data(), scale, zp, y.data());
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{3, 12, 21, -6, 7, 18}));
  // Axis 1 is the same axis.
  std::vector<int8_t> y1(6);
  q8_quantize_linear_per_axis__ref<int8_t>(2, dims, 1, x.data(), scale, zp, y1.data());
  EXPECT_EQ(y1, y);
  // Absent zero points mean 0.
  q8_quantize_linear_per_axis__ref<int8_t>(2, dims, -1, x.data(), scale, {}, y.data());
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{3, 2, 1, -6, -3, -2}));
}

TEST(QuantizeLinearRef, PerAxisRejectsBadAxisAndMismatchedParams) {
  const int64_t dims[] = {2, 3};
  const float x[6] = {};
  const float scale3[] = {1, 1, 1};
  const float scale2[] = {1, 1};
  uint8_t y[6];
  EXPECT_THROW(q8_quantize_linear_per_axis__ref<uint8_t>(2, dims, 2, x, scale3, {}, y),
               std::invalid_argument);
  EXPECT_THROW(q8_quantize_linear_per_axis__ref<uint8_t>(2, dims, -3, x, scale3, {}, y),
               std::invalid_argument);
  EXPECT_THROW(q8_quantize_linear_per_axis__ref<uint8_t>(2, dims, 1, x, scale2, {}, y),
               std::invalid_argument);
  EXPECT_NO_THROW(q8_quantize_linear_per_axis__ref<uint8_t>(2, dims, 0, x, scale2, {}, y));
}

TEST(DequantizeLinearRef, OnnxNodeTests) {
  // test_dequantizelinear
  const uint8_t x[] = {0, 3, 128, 255};
  float y[4];
  q8_dequantize_linear__ref<uint8_t>(4, x, 2.0f, 128, y);
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{-256, -250, 0, 254}));
  // test_dequantizelinear_axis: the inverse of the quantize axis test.
  const int64_t dims[] = {1, 3, 3, 2};
  const float scale[] = {2, 4, 5};
  const int32_t zp[] = {84, 24, 196};
  std::vector<uint8_t> q(kAxisY.begin(), kAxisY.end());
  std::vector<float> f(18);
  q8_dequantize_linear_per_axis__ref<uint8_t>(4, dims, 1, q.data(), scale, zp, f.data());
  EXPECT_EQ(f, kAxisX);
}

TEST(DequantizeLinearRef, Int8ExtremesAndInt32Bias) {
  // The subtraction is done in integers: -128 - 127 = -255 does not wrap in 8 bits.
  const int8_t x[] = {-128, 127, 0};
  float y[3];
  q8_dequantize_linear__ref<int8_t>(3, x, 0.5f, 127, y);
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{-127.5f, 0.0f, -63.5f}));
  q8_dequantize_linear__ref<int8_t>(3, x, 0.5f, -128, y);
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{0.0f, 127.5f, 64.0f}));
  // An int32 bias with scale s_x * s_w and zero point 0: one float multiply.
  const int32_t bias[] = {-1000, 0, 123456789};
  const float s = 0.003f * 0.02f;
  q8_dequantize_linear__ref<int32_t>(3, bias, s, 0, y);
  EXPECT_EQ(y[0], -1000.0f * s);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], static_cast<float>(123456789) * s);
}

std::vector<int> requantize_s8(const std::vector<int32_t>& acc, float m, int32_t zp) {
  std::vector<int8_t> y(acc.size());
  const float mult[] = {m};
  q8_requantize__ref<int8_t>(static_cast<int64_t>(acc.size()), 1, acc.data(), nullptr,
                             full_range_requantization<int8_t>(mult, zp), y.data());
  return Ints(y.begin(), y.end());
}

TEST(RequantizeRef, TiesToEvenSaturationAndZeroPointAfterRounding) {
  EXPECT_EQ(requantize_s8({5, 7, -5, -7, 3, 1000, -1000}, 0.5f, 0),
            (Ints{2, 4, -2, -4, 2, 127, -128}));
  // 5 * 0.5 = 2.5 -> 2, then + 1 = 3 (ONNX Runtime's MlasRequantizeOutput; ONNX's Python
  // reference for QLinearConv adds the zero point first and would give 4).
  EXPECT_EQ(requantize_s8({5, -5}, 0.5f, 1), (Ints{3, -1}));
  // Saturation counts the zero point: 120 + 10 -> 127.
  EXPECT_EQ(requantize_s8({240, -300}, 0.5f, 10), (Ints{127, -128}));
}

TEST(RequantizeRef, AccumulatorIsConvertedToFloatFirst) {
  // 25165823 = 1.5 * 2^24 - 1 is not a float; it converts to 25165824 (nearest, ties to
  // even). Times 2^-24 that is exactly 1.5 -> 2. Exact arithmetic (1.49999994) would give 1.
  // MLAS converts with cvtdq2ps and multiplies in float32; so does the reference.
  EXPECT_EQ(requantize_s8({25165823}, std::ldexp(1.0f, -24), 0), (Ints{2}));
}

TEST(RequantizeRef, PerChannelMultipliersBiasAndClamp) {
  // 2 rows x 2 channels; multipliers {0.5, 0.25}; bias {1, -1}; zero point 10; u8.
  const int32_t acc[] = {5, 9, -30, 400};
  const int32_t bias[] = {1, -1};
  const float m[] = {0.5f, 0.25f};
  std::vector<uint8_t> y(4);
  Requantization rq = full_range_requantization<uint8_t>(m, 10);
  q8_requantize__ref<uint8_t>(2, 2, acc, bias, rq, y.data());
  // (5+1)*0.5 = 3 -> 13; (9-1)*0.25 = 2 -> 12; (-30+1)*0.5 = -14.5 -> -14 -> -4 -> 0; (400-1)*0.25
  // = 99.75 -> 110.
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{13, 12, 0, 110}));
  // A folded ReLU6 with y_scale 0.0625: [10, 10 + 96] clamps the last one.
  output_range<uint8_t>(0.0f, 6.0f, {0.0625f, 10}, &rq.qmin, &rq.qmax);
  EXPECT_EQ(rq.qmin, 10);
  EXPECT_EQ(rq.qmax, 106);
  q8_requantize__ref<uint8_t>(2, 2, acc, bias, rq, y.data());
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{13, 12, 10, 106}));
}

TEST(RequantizeRef, BiasAddWrapsIn32Bits) {
  const int32_t acc[] = {std::numeric_limits<int32_t>::max()};
  const int32_t bias[] = {1};
  const float m[] = {1.0f};
  int8_t y[1];
  q8_requantize__ref<int8_t>(1, 1, acc, bias, full_range_requantization<int8_t>(m, 0), y);
  EXPECT_EQ(y[0], -128);  // INT32_MAX + 1 wraps to INT32_MIN, like vpaddd
}

TEST(RequantizeRef, OutputRangeOfFoldedActivations) {
  int32_t lo = 0, hi = 0;
  const float inf = std::numeric_limits<float>::infinity();
  output_range<uint8_t>(0.0f, inf, {0.05f, 10}, &lo, &hi);  // ReLU
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 255);
  output_range<int8_t>(0.0f, inf, {0.05f, -128}, &lo, &hi);  // ReLU, zero point at the bottom
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  output_range<int8_t>(0.0f, 6.0f, {0.0625f, -100}, &lo, &hi);  // ReLU6
  EXPECT_EQ(lo, -100);
  EXPECT_EQ(hi, -4);
  output_range<int8_t>(-inf, inf, {0.0625f, 0}, &lo, &hi);  // no activation
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
}

TEST(RequantizeRef, MultiplierIsComputedInFloatInOnnxRuntimeOrder) {
  // The order of the float operations matters: find scales where (sx * sw) / sy and
  // sx * (sw / sy) differ, and check the kernel's multiplier is the former.
  int differ = 0;
  for (int i = 1; i < 200; ++i) {
    const float sx = 0.001f * static_cast<float>(i), sw = 0.0017279457f, sy = 0.0016268126f;
    const float ort = (sx * sw) / sy;
    if (ort == sx * (sw / sy)) continue;
    ++differ;
    EXPECT_EQ(requant_multiplier(sx, sw, sy), ort);
  }
  EXPECT_GT(differ, 0);
  const Requantization rq{};
  EXPECT_EQ(rq.multiplier.size(), 0u);
  const float m[] = {1.0f, 2.0f};
  int8_t y[2];
  const int32_t acc[2] = {};
  EXPECT_THROW(
      q8_requantize__ref<int8_t>(1, 3, acc, nullptr, full_range_requantization<int8_t>(m, 0), y),
      std::invalid_argument);
  Requantization bad = full_range_requantization<uint8_t>(m, 0);
  bad.qmin = -1;
  EXPECT_THROW(q8_requantize__ref<uint8_t>(1, 2, acc, nullptr, bad, reinterpret_cast<uint8_t*>(y)),
               std::invalid_argument);
}

struct DynamicCase {
  std::vector<float> x;
  float scale;
  int zero_point;
  Ints y;
};

TEST(DynamicQuantizeLinearRef, OnnxNodeTests) {
  const std::vector<DynamicCase> cases = {
      // test_dynamicquantizelinear
      {{0, 2, -3, -2.5f, 1.34f, 0.5f}, 5.0f / 255.0f, 153, {153, 255, 0, 26, 221, 179}},
      // test_dynamicquantizelinear_max_adjusted: all negative, so rmax is 0 and zp is 255.
      {{-1.0f, -2.1f, -1.3f, -2.5f, -3.34f, -4.0f}, 4.0f / 255.0f, 255, {191, 121, 172, 96, 42, 0}},
      // test_dynamicquantizelinear_min_adjusted: all positive, rmin is 0 and zp is 0.
      {{1, 2.1f, 1.3f, 2.5f, 3.34f, 4, 1.5f, 2.6f, 3.9f, 4, 3, 2.345f},
       4.0f / 255.0f,
       0,
       {64, 134, 83, 159, 213, 255, 96, 166, 249, 255, 191, 149}},
  };
  for (const DynamicCase& c : cases) {
    std::vector<uint8_t> y(c.x.size());
    const DynamicQuantization q =
        qu8_dynamic_quantize_linear__ref(static_cast<int64_t>(c.x.size()), c.x.data(), y.data());
    EXPECT_EQ(q.scale, c.scale);
    EXPECT_EQ(q.zero_point, c.zero_point);
    EXPECT_EQ(Ints(y.begin(), y.end()), c.y);
  }
}

TEST(DynamicQuantizeLinearRef, ZeroPointRoundsHalfToEven) {
  // Range [-0.5, 254.5] gives scale 1 and an initial zero point of exactly 0.5 -> 0;
  // [-1.5, 253.5] gives 1.5 -> 2.
  std::vector<uint8_t> y(2);
  std::vector<float> x = {-0.5f, 254.5f};
  DynamicQuantization q = qu8_dynamic_quantize_linear__ref(2, x.data(), y.data());
  EXPECT_EQ(q.scale, 1.0f);
  EXPECT_EQ(q.zero_point, 0);
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{0, 254}));  // -0.5 -> -0 -> 0; 254.5 -> 254
  x = {-1.5f, 253.5f};
  q = qu8_dynamic_quantize_linear__ref(2, x.data(), y.data());
  EXPECT_EQ(q.zero_point, 2);
  EXPECT_EQ(Ints(y.begin(), y.end()), (Ints{0, 255}));  // -2 + 2 = 0; 254 + 2 = 256 -> 255
}

TEST(DynamicQuantizeLinearRef, AllZeroInputDoesNotDivideByZero) {
  const std::vector<float> x(7, 0.0f);
  std::vector<uint8_t> y(7, 99);
  const DynamicQuantization q = qu8_dynamic_quantize_linear__ref(7, x.data(), y.data());
  EXPECT_EQ(q.scale, 1.0f);  // ONNX Runtime's value; see docs/requantization.md
  EXPECT_EQ(q.zero_point, 0);
  EXPECT_EQ(y, std::vector<uint8_t>(7, 0));
  const DynamicQuantization empty = qu8_dynamic_quantize_linear__ref(0, nullptr, nullptr);
  EXPECT_EQ(empty.scale, 1.0f);
  EXPECT_EQ(empty.zero_point, 0);
}

}  // namespace
}  // namespace octet::kernels
