// QLinearAdd / QLinearMul (the Q/DQ float formula and ORT's MLAS variants) and the
// table-driven QLinearSigmoid, on hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "tests/kernels/int_vectors.h"
#include "kernels/ref/qelementwise.h"

namespace octet::kernels {
namespace {

using BinaryKernel = void (*)(int, const int64_t*, const uint8_t*, const int64_t*, QuantParams,
                              const uint8_t*, const int64_t*, QuantParams, QuantParams, int32_t,
                              int32_t, uint8_t*);

// Element-wise over equal-length vectors, full output range.
Ints run_u8(BinaryKernel kernel, const std::vector<uint8_t>& a, QuantParams aq,
            const std::vector<uint8_t>& b, QuantParams bq, QuantParams yq, int32_t y_min = 0,
            int32_t y_max = 255) {
  const int64_t dims[] = {static_cast<int64_t>(a.size())};
  const int64_t stride[] = {1};
  std::vector<uint8_t> y(a.size());
  kernel(1, dims, a.data(), stride, aq, b.data(), stride, bq, yq, y_min, y_max, y.data());
  return ints(y);
}

const QuantParams kA{0.5f, 128};
const QuantParams kB{0.25f, 100};

TEST(QAddRef, DequantizeAddQuantizeInFloat) {
  // fa = {1, 0, -64, 63.5, 0.5, 1.5, -0.5}; fb = {1, 0, 38.75, -25, 0, 0, 0};
  // sum = {2, 0, -25.25, 38.5, 0.5, 1.5, -0.5} -> rne {2, 0, -25, 38, 0, 2, -0} + 10.
  const std::vector<uint8_t> a = {130, 128, 0, 255, 129, 131, 127};
  const std::vector<uint8_t> b = {104, 100, 255, 0, 100, 100, 100};
  EXPECT_EQ(run_u8(q8_add_strided__ref<uint8_t>, a, kA, b, kB, {1.0f, 10}),
            (Ints{12, 10, 0, 48, 10, 12, 10}));
  // A folded ReLU (clamp at the zero point) and a narrower top.
  EXPECT_EQ(run_u8(q8_add_strided__ref<uint8_t>, a, kA, b, kB, {1.0f, 10}, 10, 40),
            (Ints{12, 10, 10, 40, 10, 12, 10}));
}

TEST(QAddRef, RatioFmaVariantRoundsAfterAddingTheZeroPoint) {
  // With an odd output zero point the two formulas part on ties: fa + fb = 0.5 gives
  // rne(0.5) + 11 = 11 for the Q/DQ formula, but MLAS folds the zero point in first:
  // fma(129, 0.5, fma(100, 0.25, 11 - (64 + 25))) = 11.5 -> 12.
  const std::vector<uint8_t> a = {129}, b = {100};
  EXPECT_EQ(run_u8(q8_add_strided__ref<uint8_t>, a, kA, b, kB, {1.0f, 11}), (Ints{11}));
  EXPECT_EQ(run_u8(q8_add_ratio_fma_strided__ref<uint8_t>, a, kA, b, kB, {1.0f, 11}), (Ints{12}));
}

TEST(QAddRef, RatioFmaVariantDiffersByAtMostOneOverAllInputs) {
  std::vector<uint8_t> a, b;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j) {
      a.push_back(static_cast<uint8_t>(i));
      b.push_back(static_cast<uint8_t>(j));
    }
  int differ = 0;
  for (QuantParams y : {QuantParams{1.0f, 11}, QuantParams{0.37f, 128}, QuantParams{0.1f, 0}}) {
    const Ints qdq = run_u8(q8_add_strided__ref<uint8_t>, a, kA, b, kB, y);
    const Ints mlas = run_u8(q8_add_ratio_fma_strided__ref<uint8_t>, a, kA, b, kB, y);
    for (size_t i = 0; i < qdq.size(); ++i) {
      ASSERT_LE(std::abs(qdq[i] - mlas[i]), 1) << "a " << int(a[i]) << " b " << int(b[i]);
      differ += qdq[i] != mlas[i];
    }
  }
  EXPECT_GT(differ, 0);
  std::printf("[          ] QLinearAdd: %d of %zu outputs differ by 1 between Q/DQ and MLAS AVX2\n",
              differ, 3 * a.size());
}

// Each float32 step of the formulas, computed so that no compiler flag can change it: a
// product of a float and a small integer, and a sum of two such floats, are exact in double,
// so rounding them to float gives the correctly rounded float32 step whether or not the
// compiler fuses anything here. The kernels must match on every input pair; a kernel compiled
// with a * b + c contracted into an FMA does not (checked with -mfma).
float f32(double v) { return static_cast<float>(v); }

int step_add(int a, int b, QuantParams aq, QuantParams bq, QuantParams yq) {
  const float fa = f32(static_cast<double>(aq.scale) * (a - aq.zero_point));
  const float fb = f32(static_cast<double>(bq.scale) * (b - bq.zero_point));
  const float sum = f32(static_cast<double>(fa) + fb);
  return std::clamp(static_cast<int>(std::nearbyint(sum / yq.scale)) + yq.zero_point, 0, 255);
}

int step_mul_ratio(int a, int b, QuantParams aq, QuantParams bq, QuantParams yq) {
  const float r = (aq.scale * bq.scale) / yq.scale;
  const int product = (a - aq.zero_point) * (b - bq.zero_point);
  const float scaled = f32(static_cast<double>(product) * r);
  const float v = f32(static_cast<double>(scaled) + yq.zero_point);
  return std::clamp(static_cast<int>(std::nearbyint(v)), 0, 255);
}

TEST(QAddRef, MatchesFloat32StepByStepOnEveryInputPair) {
  std::vector<uint8_t> a, b;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j) {
      a.push_back(static_cast<uint8_t>(i));
      b.push_back(static_cast<uint8_t>(j));
    }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> log2_scale(-10.0f, -2.0f);
  std::uniform_int_distribution<int> zp(0, 255);
  for (int trial = 0; trial < 8; ++trial) {
    const QuantParams aq{std::exp2(log2_scale(rng)), zp(rng)},
        bq{std::exp2(log2_scale(rng)), zp(rng)}, yq{std::exp2(log2_scale(rng)), zp(rng)};
    const Ints add = run_u8(q8_add_strided__ref<uint8_t>, a, aq, b, bq, yq);
    const Ints mul = run_u8(q8_mul_ratio_strided__ref<uint8_t>, a, aq, b, bq, yq);
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(add[i], step_add(a[i], b[i], aq, bq, yq))
          << "trial " << trial << " a " << int(a[i]) << " b " << int(b[i]);
      ASSERT_EQ(mul[i], step_mul_ratio(a[i], b[i], aq, bq, yq))
          << "trial " << trial << " a " << int(a[i]) << " b " << int(b[i]);
    }
  }
}

TEST(QAddRef, BroadcastsThroughZeroStrides) {
  // a [2, 3] + b [3] (per-channel, like an NHWC bias): b's row stride is 0.
  const int64_t dims[] = {2, 3};
  const int64_t a_strides[] = {3, 1};
  const int64_t b_strides[] = {0, 1};
  const int8_t a[] = {0, 1, 2, 3, 4, 5};
  const int8_t b[] = {10, 20, 30};
  std::vector<int8_t> y(6);
  const QuantParams unit{1.0f, 0};
  q8_add_strided__ref<int8_t>(2, dims, a, a_strides, unit, b, b_strides, unit, unit, -128, 127,
                              y.data());
  EXPECT_EQ(ints(y), (Ints{10, 21, 32, 13, 24, 35}));
  // A scalar b: both strides 0. Saturates at the int8 ends.
  const int64_t scalar_strides[] = {0, 0};
  const int8_t big[] = {120};
  q8_add_strided__ref<int8_t>(2, dims, a, a_strides, unit, big, scalar_strides, unit, unit, -128,
                              127, y.data());
  EXPECT_EQ(ints(y), (Ints{120, 121, 122, 123, 124, 125}));
  const int8_t huge[] = {125};
  q8_add_strided__ref<int8_t>(2, dims, a, a_strides, unit, huge, scalar_strides, unit, unit, -128,
                              127, y.data());
  EXPECT_EQ(ints(y), (Ints{125, 126, 127, 127, 127, 127}));
}

TEST(QMulRef, DequantizeMultiplyQuantizeInFloat) {
  // fa = {1, -1, 0.5}; fb = {1, 2, 0.5}; product / 0.5 = {2, -4, 0.5} -> {2, -4, 0} + 10.
  const std::vector<uint8_t> a = {130, 126, 129};
  const std::vector<uint8_t> b = {104, 108, 102};
  EXPECT_EQ(run_u8(q8_mul_strided__ref<uint8_t>, a, kA, b, kB, {0.5f, 10}), (Ints{12, 6, 10}));
  // MLAS's formula: int product {8, -16, 2} * 0.25 + 10 = {12, 6, 10.5 -> 10}: the same here...
  EXPECT_EQ(run_u8(q8_mul_ratio_strided__ref<uint8_t>, a, kA, b, kB, {0.5f, 10}),
            (Ints{12, 6, 10}));
  // ...but with an odd zero point the tie rounds after the zero point: 11.5 -> 12, not 0 + 11.
  EXPECT_EQ(run_u8(q8_mul_strided__ref<uint8_t>, a, kA, b, kB, {0.5f, 11}), (Ints{13, 7, 11}));
  EXPECT_EQ(run_u8(q8_mul_ratio_strided__ref<uint8_t>, a, kA, b, kB, {0.5f, 11}),
            (Ints{13, 7, 12}));
}

TEST(QMulRef, SaturatesAndClamps) {
  // 255 - 0 = 255 squared with unit scales is 65025: saturates; negative results clamp to 0.
  const QuantParams unit{1.0f, 0};
  EXPECT_EQ(run_u8(q8_mul_strided__ref<uint8_t>, {255, 2, 3}, unit, {255, 3, 0}, unit, {1.0f, 0}),
            (Ints{255, 6, 0}));
  EXPECT_EQ(
      run_u8(q8_mul_ratio_strided__ref<uint8_t>, {255, 2, 3}, unit, {255, 3, 0}, unit, {1.0f, 0}),
      (Ints{255, 6, 0}));
  EXPECT_EQ(
      run_u8(q8_mul_strided__ref<uint8_t>, {0, 1}, {1.0f, 128}, {255, 200}, {1.0f, 0}, {1.0f, 0}),
      (Ints{0, 0}));
}

TEST(QSigmoidRef, TableUint8) {
  // x scale 0.1, zp 128; y scale 1/256, zp 0 (ORT's usual QLinearSigmoid output).
  std::vector<uint8_t> table(256);
  q8_activation_table__ref<uint8_t>(Activation::sigmoid(), {0.1f, 128}, {1.0f / 256.0f, 0},
                                    table.data());
  EXPECT_EQ(table[128], 128);  // sigmoid(0) = 0.5 -> 128
  EXPECT_EQ(table[138], 187);  // sigmoid(1) = 0.731059 -> 187.15
  EXPECT_EQ(table[118], 69);   // sigmoid(-1) = 0.268941 -> 68.85
  EXPECT_EQ(table[0], 0);      // sigmoid(-12.8) * 256 = 0.0007
  EXPECT_EQ(table[255], 255);  // sigmoid(12.7) * 256 = 255.9992 -> 256 -> saturates
  for (int i = 1; i < 256; ++i) EXPECT_GE(table[i], table[i - 1]) << i;  // monotone
  const std::vector<uint8_t> x = {128, 138, 118, 0, 255};
  std::vector<uint8_t> y(5);
  q8_lookup__ref<uint8_t>(5, x.data(), table.data(), y.data());
  EXPECT_EQ(ints(y), (Ints{128, 187, 69, 0, 255}));
}

TEST(QSigmoidRef, TableInt8IsIndexedByTheRawByte) {
  // x scale 0.1, zp 0; y scale 1/256, zp -128: int8 -1 lives at table[255].
  std::vector<int8_t> table(256);
  q8_activation_table__ref<int8_t>(Activation::sigmoid(), {0.1f, 0}, {1.0f / 256.0f, -128},
                                   table.data());
  EXPECT_EQ(table[0], 0);       // x 0: 128 - 128
  EXPECT_EQ(table[10], 59);     // x 1: 187 - 128
  EXPECT_EQ(table[255], -6);    // x -1 -> -0.1: sigmoid = 0.475021 -> 121.6 -> 122 - 128
  EXPECT_EQ(table[128], -128);  // x -128 -> -12.8
  EXPECT_EQ(table[127], 127);   // x 127 -> 12.7: saturates
  const std::vector<int8_t> x = {0, 10, -1, -128, 127};
  std::vector<int8_t> y(5);
  q8_lookup__ref<int8_t>(5, x.data(), table.data(), y.data());
  EXPECT_EQ(ints(y), (Ints{0, 59, -6, -128, 127}));
}

TEST(QSigmoidRef, AnyActivationTableMatchesQuantizeOfFloat) {
  // A HardSwish table equals QuantizeLinear(hardswish(DequantizeLinear(q))) entry by entry.
  const QuantParams xq{0.05f, 120}, yq{0.03f, 10};
  std::vector<uint8_t> table(256);
  q8_activation_table__ref<uint8_t>(Activation::hard_swish(), xq, yq, table.data());
  for (int i = 0; i < 256; ++i) {
    const float fx = static_cast<float>(i - 120) * 0.05f;
    const float fy = apply(Activation::hard_swish(), fx);
    const int want = std::clamp(static_cast<int>(std::nearbyint(fy / 0.03f)) + 10, 0, 255);
    ASSERT_EQ(table[i], want) << i;
  }
}

}  // namespace
}  // namespace octet::kernels
