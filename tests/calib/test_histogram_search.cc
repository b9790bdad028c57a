// The histogram and the two scores the range search minimizes, on histograms small enough
// to work out by hand, plus the MSE estimate against a direct quantize -> dequantize.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "calib/histogram.h"
#include "calib/range_search.h"
#include "core/ir.h"
#include "kernels/ref/qmath.h"
#include "tests/calib/quant_targets.h"

namespace octet::calib {
namespace {

using namespace test_targets;

TEST(Histogram, BinsEdgesAndZeros) {
  Histogram h(-1.0, 3.0, 4);
  const std::vector<float> x = {-1.0f, -0.5f, 0.0f, 0.0f, 0.5f, 1.0f, 2.99f, 3.0f};
  h.add(x);
  EXPECT_EQ(h.total(), 8);
  EXPECT_EQ(h.zeros(), 2);  // kept apart from bin 1
  EXPECT_EQ(h.counts(), (std::vector<int64_t>{2, 1, 1, 2}));
  EXPECT_EQ(h.edge(0), -1.0);
  EXPECT_EQ(h.edge(2), 1.0);
  EXPECT_EQ(h.edge(4), 3.0);
}

TEST(Histogram, ValueAtRankInterpolatesInsideABin) {
  // 10 values in [0, 10) one per bin: rank 2.5 is half-way through bin 2.
  Histogram h(0.0, 10.0, 10);
  std::vector<float> x;
  for (int i = 0; i < 10; ++i) x.push_back(i + 0.5f);
  h.add(x);
  EXPECT_DOUBLE_EQ(h.value_at_rank(2.5), 2.5);
  EXPECT_DOUBLE_EQ(h.value_at_rank(0), 0.0);
  EXPECT_DOUBLE_EQ(h.value_at_rank(10), 10.0);
  EXPECT_DOUBLE_EQ(h.value_at_rank(99), 10.0);  // clamped
}

TEST(Histogram, RejectsNonFiniteValuesAndBadRanges) {
  Histogram h(0.0, 1.0, 8);
  const std::vector<float> x = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  try {
    h.add(x);
    FAIL() << "expected a throw";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Histogram(1.0, 1.0, 8), ir::Error);
  EXPECT_THROW(Histogram(0.0, 1.0, 0), ir::Error);
}

// Values at the centres of bins 0, 1, 2 of a histogram over [0, 510] with 510 one-wide bins.
Histogram three_bins(int n0, int n1, int n2) {
  Histogram h(0.0, 510.0, 510);
  std::vector<float> x;
  x.insert(x.end(), n0, 0.5f);
  x.insert(x.end(), n1, 1.5f);
  x.insert(x.end(), n2, 2.5f);
  x.push_back(509.5f);  // something in the last bin so the full range is [0, 510]
  h.add(x);
  return h;
}

TEST(KlDivergence, GroupsBinsThatShareALevel) {
  // Range [0, 510] -> scale 2: centres 0.5 -> level 0, 1.5 and 2.5 -> level 1 (0.75 and
  // 1.25 round to 1). Counts 2, 4, 2 (+1 at the top, its own level): P = (2, 4, 2, 1) / 9,
  // Q spreads the level-1 mass 6 over its two non-empty bins: (2, 3, 3, 1) / 9.
  // KL = 4/9 ln(4/3) + 2/9 ln(2/3).
  const Histogram h = three_bins(2, 4, 2);
  const double expected = 4.0 / 9 * std::log(4.0 / 3) + 2.0 / 9 * std::log(2.0 / 3);
  EXPECT_NEAR(kl_divergence(h, {0.0f, 510.0f}, kU8), expected, 1e-12);
}

TEST(KlDivergence, ClippingFoldsTheOutliersIntoTheEdgeBinOfPOnly) {
  // Four 510-wide bins over [0, 2040], counts 1, 2, 3, 4. Clipped at 1530 (the end of bin
  // 2): P = (1, 2, 3 + 4) / 10, Q = the unfolded (1, 2, 3) / 6; every bin is its own level.
  Histogram h(0.0, 2040.0, 4);
  std::vector<float> x = {255.0f, 765.0f, 765.0f};
  x.insert(x.end(), 3, 1275.0f);
  x.insert(x.end(), 4, 1785.0f);
  h.add(x);
  const double expected = 0.1 * std::log(0.1 / (1.0 / 6)) + 0.2 * std::log(0.2 / (2.0 / 6)) +
                          0.7 * std::log(0.7 / (3.0 / 6));
  EXPECT_NEAR(kl_divergence(h, {0.0f, 1530.0f}, kU8), expected, 1e-12);
  EXPECT_NEAR(kl_divergence(h, {0.0f, 2040.0f}, kU8), 0.0, 1e-12);
}

TEST(KlDivergence, ClippingInsideAnEmptyStretchIsInfinite) {
  // Clip point in an empty bin with mass beyond it: Q has nothing where P has the folded
  // outlier.
  Histogram h(0.0, 2040.0, 4);
  const std::vector<float> x = {255.0f, 255.0f, 1785.0f};
  h.add(x);
  EXPECT_TRUE(std::isinf(kl_divergence(h, {0.0f, 1530.0f}, kU8)));
}

double direct_mse(const std::vector<float>& x, const kernels::QuantParams& q) {
  double sum = 0;
  for (float v : x) {
    const int32_t code = kernels::quantize_value(v, q.scale, q.zero_point, 0, 255);
    const double d = kernels::dequantize_value(code, q.scale, q.zero_point) - v;
    sum += d * d;
  }
  return sum / static_cast<double>(x.size());
}

TEST(ExpectedMse, MatchesQuantizeDequantizeOnUniformData) {
  // Uniform on [0, 10]; at range [0, 4] a fraction 0.6 clips with mean squared distance
  // 6^2 / 3, and the rest carries rounding noise scale^2 / 12.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 10.0f);
  std::vector<float> x(20000);
  for (float& v : x) v = u(rng);
  Histogram h(0.0, 10.0, 1000);
  h.add(x);
  for (float hi : {10.0f, 7.0f, 4.0f, 1.0f}) {
    const double scale = static_cast<float>(hi / 255.0);
    const double analytic = 0.1 * hi * scale * scale / 12 + (1 - 0.1 * hi) * std::pow(10 - hi, 2) / 3;
    const double direct = direct_mse(x, {static_cast<float>(scale), 0});
    const double estimate = expected_mse(h, {0.0f, hi}, kU8);
    EXPECT_NEAR(estimate, direct, 0.05 * direct) << "hi " << hi;
    EXPECT_NEAR(estimate, analytic, 0.05 * analytic) << "hi " << hi;
  }
}

TEST(ExpectedMse, ExactZerosCostNothing) {
  Histogram with(0.0, 10.0, 100), without(0.0, 10.0, 100);
  std::vector<float> x = {1.0f, 2.0f, 9.0f};
  without.add(x);
  x.insert(x.end(), 3, 0.0f);
  with.add(x);
  // Same error sum spread over twice the values.
  EXPECT_NEAR(expected_mse(with, {0.0f, 5.0f}, kU8), expected_mse(without, {0.0f, 5.0f}, kU8) / 2,
              1e-12);
}

}  // namespace
}  // namespace octet::calib
