// Scale and zero point from a range, worked by hand from ORT's compute_scale_zp:
// extend [min, max] to contain 0; symmetric uses max|x|; scale = (max - min) / (qmax - qmin);
// zero point = round_half_even(qmin - min / scale), or the middle code when symmetric.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "calib/qparams.h"
#include "core/ir.h"
#include "tests/calib/quant_targets.h"

namespace octet::calib {
namespace {

using namespace test_targets;

TEST(QuantTarget, CodeRanges) {
  EXPECT_EQ(kU8.qmin(), 0);
  EXPECT_EQ(kU8.qmax(), 255);
  EXPECT_EQ(kS8.qmin(), -128);
  EXPECT_EQ(kS8.qmax(), 127);
  EXPECT_EQ(kS8SymNarrow.qmin(), -127);
  EXPECT_EQ(kS8SymNarrow.qmax(), 127);
  const QuantTarget u8_narrow{QType::u8, true, true};
  EXPECT_EQ(u8_narrow.qmin(), 0);
  EXPECT_EQ(u8_narrow.qmax(), 254);
}

TEST(QParamsFromRange, U8AsymmetricMinusOneToThree) {
  // scale = 4 / 255; zero point = round(0 + 1 / (4/255)) = round(63.75) = 64.
  bool degenerate = true;
  const QParams p = qparams_from_range({-1.0f, 3.0f}, kU8, &degenerate);
  EXPECT_EQ(p.scale, static_cast<float>(4.0 / 255.0));
  EXPECT_EQ(p.zero_point, 64);
  EXPECT_FALSE(degenerate);
}

TEST(QParamsFromRange, S8Asymmetric) {
  // Same scale; zero point = round(-128 + 63.75) = round(-64.25) = -64.
  const QParams p = qparams_from_range({-1.0f, 3.0f}, kS8);
  EXPECT_EQ(p.scale, static_cast<float>(4.0 / 255.0));
  EXPECT_EQ(p.zero_point, -64);
}

TEST(QParamsFromRange, S8SymmetricNarrowUsesPlusMinus127) {
  // max|x| = 3.175: scale = 6.35 / 254 = 0.025, zero point 0; the whole range maps onto
  // [-127, 127], never -128.
  const QParams p = qparams_from_range({-3.175f, 1.0f}, kS8SymNarrow);
  EXPECT_EQ(p.scale, static_cast<float>(2.0 * static_cast<double>(3.175f) / 254.0));
  EXPECT_NEAR(p.scale, 0.025f, 1e-8f);
  EXPECT_EQ(p.zero_point, 0);
  EXPECT_EQ(std::nearbyint(-3.175f / p.scale), -127);
  EXPECT_EQ(std::nearbyint(3.175f / p.scale), 127);
}

TEST(QParamsFromRange, SymmetricZeroPointIsTheMiddleCode) {
  // s8 full range: round(-0.5) = -0 -> 0 (half to even); u8: round(127.5) = 128;
  // narrow u8 [0, 254]: 127 (ORT's symmetric u8 range).
  const QParams s8 = qparams_from_range({-2.0f, 1.0f}, {QType::s8, true, false});
  EXPECT_EQ(s8.zero_point, 0);
  EXPECT_EQ(s8.scale, static_cast<float>(4.0 / 255.0));
  const QParams u8 = qparams_from_range({-2.0f, 1.0f}, {QType::u8, true, false});
  EXPECT_EQ(u8.zero_point, 128);
  EXPECT_EQ(u8.scale, static_cast<float>(4.0 / 255.0));
  const QParams u8n = qparams_from_range({-2.0f, 1.0f}, {QType::u8, true, true});
  EXPECT_EQ(u8n.zero_point, 127);
  EXPECT_EQ(u8n.scale, static_cast<float>(4.0 / 254.0));
}

TEST(QParamsFromRange, ZeroRangeIsDegenerateWithScaleOne) {
  for (const QuantTarget& t : {kU8, kS8, kS8SymNarrow, QuantTarget{QType::u8, true, false}}) {
    bool degenerate = false;
    const QParams p = qparams_from_range({0.0f, 0.0f}, t, &degenerate);
    EXPECT_EQ(p.scale, 1.0f);
    EXPECT_EQ(p.zero_point, 0);  // ORT writes 0 for every type here, even symmetric u8
    EXPECT_TRUE(degenerate);
  }
  // A range below the smallest normal float scale is degenerate too (ORT's `tiny` test).
  bool degenerate = false;
  qparams_from_range({0.0f, 1e-37f}, kU8, &degenerate);
  EXPECT_TRUE(degenerate);
}

TEST(QParamsFromRange, RangeNotContainingZeroIsExtendedToZero) {
  // [2, 5] -> [0, 5]: zero point at qmin. [-5, -2] -> [-5, 0]: zero point at qmax.
  QParams p = qparams_from_range({2.0f, 5.0f}, kU8);
  EXPECT_EQ(p.scale, static_cast<float>(5.0 / 255.0));
  EXPECT_EQ(p.zero_point, 0);
  p = qparams_from_range({-5.0f, -2.0f}, kU8);
  EXPECT_EQ(p.scale, static_cast<float>(5.0 / 255.0));
  EXPECT_EQ(p.zero_point, 255);
  p = qparams_from_range({-5.0f, -2.0f}, kS8);
  EXPECT_EQ(p.zero_point, 127);
  p = qparams_from_range({2.0f, 5.0f}, kS8);
  EXPECT_EQ(p.zero_point, -128);
}

TEST(QParamsFromRange, ZeroPointTiesRoundToEven) {
  // Ranges with scale exactly 2, so -min / scale is exactly 0.5, 1.5, 2.5:
  // u8 -> 0, 2, 2 (ties away from zero would give 1, 2, 3).
  EXPECT_EQ(qparams_from_range({-1.0f, 509.0f}, kU8).zero_point, 0);
  EXPECT_EQ(qparams_from_range({-3.0f, 507.0f}, kU8).zero_point, 2);
  EXPECT_EQ(qparams_from_range({-5.0f, 505.0f}, kU8).zero_point, 2);
  EXPECT_EQ(qparams_from_range({-1.0f, 509.0f}, kU8).scale, 2.0f);
  // s8: -128 + 0.5 = -127.5 -> -128; -128 + 1.5 = -126.5 -> -126 (away: -127).
  EXPECT_EQ(qparams_from_range({-1.0f, 509.0f}, kS8).zero_point, -128);
  EXPECT_EQ(qparams_from_range({-3.0f, 507.0f}, kS8).zero_point, -126);
}

TEST(QParamsFromRange, ZeroPointUsesTheDoubleScaleLikeOrt) {
  // Expected values from ORT's compute_scale_zp evaluated in numpy (float32 bounds, float64
  // scale and zero point). For these ranges -min / scale lands within 1e-5 of a .5 tie, and
  // an all-float32 computation rounds the zero point to the other side (198, 122, 176).
  struct Case {
    float min, max, scale;
    int zero_point;
  };
  for (const Case& c : {Case{-61.754044f, 17.979025f, 0.3126787f, 197},
                        Case{-8.154757f, 8.82045f, 0.06656944f, 123},
                        Case{-3.9152663f, 1.7735822f, 0.02230921f, 175}}) {
    const QParams p = qparams_from_range({c.min, c.max}, kU8);
    EXPECT_EQ(p.scale, c.scale) << c.min << " " << c.max;
    EXPECT_EQ(p.zero_point, c.zero_point) << c.min << " " << c.max;
  }
}

TEST(QParamsFromRange, NonFiniteOrInvertedBoundsThrow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THROW(qparams_from_range({nan, 1.0f}, kU8), ir::Error);
  EXPECT_THROW(qparams_from_range({-1.0f, nan}, kU8), ir::Error);
  EXPECT_THROW(qparams_from_range({-inf, 1.0f}, kS8), ir::Error);
  EXPECT_THROW(qparams_from_range({0.0f, inf}, kS8SymNarrow), ir::Error);
  EXPECT_THROW(qparams_from_range({2.0f, 1.0f}, kU8), ir::Error);
  // Finite bounds whose float difference overflows.
  const float big = std::numeric_limits<float>::max();
  EXPECT_THROW(qparams_from_range({-big, big}, kU8), ir::Error);
}

TEST(WeightQParams, PerChannelWithAZeroChannel) {
  // [3 channels, 4]: max|w| = 1.27, 0, 2.54 -> scales 0.01, (1: all zero), 0.02.
  const std::vector<float> w = {-1.0f, 0.5f,  0.25f, 1.27f,   // channel 0
                                0.0f,  0.0f,  0.0f,  0.0f,    // channel 1
                                0.1f,  -2.54f, 0.3f, 2.0f};   // channel 2
  const std::vector<QParams> p = weight_qparams_per_channel(w, 3, kS8SymNarrow);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].scale, static_cast<float>(2.0 * static_cast<double>(1.27f) / 254.0));
  EXPECT_NEAR(p[0].scale, 0.01f, 1e-9f);
  EXPECT_EQ(p[1].scale, 1.0f);
  EXPECT_NEAR(p[2].scale, 0.02f, 1e-9f);
  for (const QParams& q : p) EXPECT_EQ(q.zero_point, 0);

  const QParams t = weight_qparams_per_tensor(w, kS8SymNarrow);
  EXPECT_EQ(t.scale, p[2].scale);
  EXPECT_EQ(t.zero_point, 0);
}

TEST(WeightQParams, PerChannelAlongTheLastAxis) {
  // Gemm's B without transB is [K=2, N=3]: output channel j is column j (inner 1).
  const std::vector<float> w = {1.27f, -0.5f, 0.0f,
                                -0.3f, 2.54f, 0.0f};
  const std::vector<QParams> p = weight_qparams_per_channel(w, 3, kS8SymNarrow, 1);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_NEAR(p[0].scale, 0.01f, 1e-9f);
  EXPECT_NEAR(p[1].scale, 0.02f, 1e-9f);
  EXPECT_EQ(p[2].scale, 1.0f);  // a column of zeros
  EXPECT_THROW(weight_qparams_per_channel(w, 4, kS8SymNarrow, 1), ir::Error);
}

TEST(WeightQParams, BadShapesAndValuesThrow) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  EXPECT_THROW(weight_qparams_per_channel(w, 4, kS8SymNarrow), ir::Error);
  EXPECT_THROW(weight_qparams_per_channel(w, 0, kS8SymNarrow), ir::Error);
  const std::vector<float> bad = {1, std::numeric_limits<float>::quiet_NaN(), 3, 4};
  EXPECT_THROW(weight_qparams_per_channel(bad, 2, kS8SymNarrow), ir::Error);
  EXPECT_THROW(weight_qparams_per_tensor(bad, kS8SymNarrow), ir::Error);
}

}  // namespace
}  // namespace octet::calib
