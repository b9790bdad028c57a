// Observers: exact min/max, percentiles on a ramp, and entropy/MSE on Gaussians with
// outliers checked against a brute-force search over the raw samples (quantize -> dequantize
// with the reference kernels at every candidate threshold).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "calib/observers.h"
#include "core/ir.h"
#include "kernels/ref/qmath.h"
#include "tests/calib/quant_targets.h"

namespace octet::calib {
namespace {

using namespace test_targets;
const Method kAllMethods[] = {Method::minmax, Method::percentile, Method::entropy, Method::mse};
// For property tests that run many observers: the search costs O(bins^2) per tensor.
const ObserverOptions kSmall{99.999, 512};

using Batches = std::vector<std::vector<float>>;

// The two calibration passes the caller runs.
std::unique_ptr<Observer> observe(Method m, const Batches& batches, const ObserverOptions& o = {}) {
  auto obs = make_observer(m, o);
  for (const auto& b : batches) obs->observe_range(b);
  if (obs->needs_histogram())
    for (const auto& b : batches) obs->observe_histogram(b);
  return obs;
}

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = g(rng);
  return x;
}

// A Gaussian body and a few outliers far out on the positive side.
std::vector<float> gaussian_with_outliers(size_t n, uint32_t seed) {
  std::vector<float> x = gaussian(n, seed);
  x.insert(x.end(), {25.0f, 27.0f});
  return x;
}

// Big enough that clipping the two outliers away pays off in squared error too: a huge
// outlier clipped to the body costs about D^2 / N per value, and the finer grid saves about
// D^2 / (12 * 255^2) per value, so MSE drops an outlier only with more than ~780k values
// per outlier (twice that after a ReLU, whose zeros carry no rounding error).
const std::vector<float>& big_gaussian_with_outliers() {
  static const std::vector<float> x = gaussian_with_outliers(3'000'000, 1);
  return x;
}

std::vector<float> relu(std::vector<float> x) {
  for (float& v : x) v = std::max(v, 0.0f);
  return x;
}

// Mean squared error of quantize -> dequantize over the raw samples, for uint8 parameters
// worked out here from the textbook formula (not the code under test). Same arithmetic as
// QuantizeLinear (divide, clamp, round half to even) with the rounding done by the 1.5 * 2^23
// trick so the loop stays fast over millions of samples.
double sample_mse(const std::vector<float>& x, double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  const float scale = static_cast<float>((hi - lo) / 255.0);
  const float zp = static_cast<float>(std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0));
  const float qlo = -zp, qhi = 255.0f - zp;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds |v| < 2^22 to even
  double sum[8] = {};
  size_t i = 0;
  for (; i + 8 <= x.size(); i += 8)
    for (size_t j = 0; j < 8; ++j) {
      const float r = std::min(std::max(x[i + j] / scale, qlo), qhi);
      const float d = ((r + kRound) - kRound) * scale - x[i + j];
      sum[j] += static_cast<double>(d) * d;
    }
  for (; i < x.size(); ++i) {
    const int32_t q = kernels::quantize_value(x[i], scale, static_cast<int32_t>(zp), 0, 255);
    const double d = kernels::dequantize_value(q, scale, static_cast<int32_t>(zp)) - x[i];
    sum[0] += d * d;
  }
  double total = 0;
  for (double v : sum) total += v;
  return total / static_cast<double>(x.size());
}

struct BruteForce {
  double threshold = 0;
  double mse = std::numeric_limits<double>::infinity();
};

// Best threshold T, on a grid fine near the body and coarse beyond, for the range
// [max(-T, min), min(T, max)] (for a non-negative tensor: [0, min(T, max)]).
BruteForce brute_force_threshold(const std::vector<float>& x) {
  const auto [mn, mx] = std::minmax_element(x.begin(), x.end());
  std::vector<double> grid;
  for (double t = 2.5; t < 6.0; t += 0.1) grid.push_back(t);
  for (double t = 6.0; t < *mx; t += 1.0) grid.push_back(t);
  grid.push_back(*mx);
  BruteForce best;
  for (double t : grid) {
    const double e = sample_mse(x, std::max(-t, static_cast<double>(*mn)),
                                std::min(t, static_cast<double>(*mx)));
    if (e < best.mse) best = {t, e};
  }
  return best;
}

TEST(Methods, ParseAndName) {
  for (Method m : kAllMethods) EXPECT_EQ(parse_method(method_name(m)), m);
  try {
    parse_method("kl");
    FAIL() << "expected a throw";
  } catch (const ir::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'kl'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("entropy"), std::string::npos) << msg;
  }
}

TEST(Observers, BadOptionsThrow) {
  EXPECT_THROW(make_observer(Method::percentile, {50.0, 2048}), ir::Error);
  EXPECT_THROW(make_observer(Method::percentile, {100.5, 2048}), ir::Error);
  EXPECT_THROW(make_observer(Method::entropy, {99.9, 4}), ir::Error);
  EXPECT_NO_THROW(make_observer(Method::percentile, {100.0, 2048}));
}

TEST(MinMaxObserver, IsExactOverBatches) {
  auto o = observe(Method::minmax, {{-1.5f, 2.0f, 0.25f}, {3.25f, -0.75f}});
  EXPECT_FALSE(o->needs_histogram());
  EXPECT_EQ(o->count(), 5);
  EXPECT_EQ(o->observed().min, -1.5f);
  EXPECT_EQ(o->observed().max, 3.25f);
  EXPECT_EQ(o->range(kU8).min, -1.5f);
  EXPECT_EQ(o->range(kU8).max, 3.25f);
}

TEST(PercentileObserver, RampClipsTheTopOnly) {
  // 0, 1, ..., 999: the 99th percentile is about 989 (numpy's linear rule gives 989.01).
  std::vector<float> ramp(1000);
  for (int i = 0; i < 1000; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i);
  auto o = observe(Method::percentile, {ramp}, {99.0, 2048});
  const Range r = o->range(kU8);
  EXPECT_EQ(r.min, 0.0f);
  EXPECT_NEAR(r.max, 989.0f, 1.0f);
  // p = 100 keeps everything.
  EXPECT_EQ(observe(Method::percentile, {ramp}, {100.0, 2048})->range(kU8).max, 999.0f);
}

TEST(PercentileObserver, SignedRampClipsBothEnds) {
  // -500 ... 499: the 1st and 99th percentiles are about -490 and 489.
  std::vector<float> ramp(1000);
  for (int i = 0; i < 1000; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i - 500);
  const Range r = observe(Method::percentile, {ramp}, {99.0, 2048})->range(kU8);
  EXPECT_NEAR(r.min, -490.0f, 1.0f);
  EXPECT_NEAR(r.max, 489.0f, 1.0f);
}

// Entropy and MSE on a signed Gaussian with two outliers at 25 and 27 sigma: the threshold
// must land far below the outliers and close to the brute-force MSE optimum over the raw
// samples (about 4.2 sigma).
TEST(SearchObservers, GaussianWithOutliersSigned) {
  const std::vector<float>& x = big_gaussian_with_outliers();
  const BruteForce best = brute_force_threshold(x);
  ASSERT_GT(best.threshold, 3.0);  // the optimum for 8 bits is a few sigma
  ASSERT_LT(best.threshold, 6.0);
  const double minmax_mse = sample_mse(x, *std::min_element(x.begin(), x.end()), 27.0);
  for (Method m : {Method::entropy, Method::mse}) {
    const Range r = observe(m, {x})->range(kU8);
    const double mse = sample_mse(x, r.min, r.max);
    SCOPED_TRACE(std::string(method_name(m)) + " range [" + std::to_string(r.min) + ", " +
                 std::to_string(r.max) + "], brute force T " + std::to_string(best.threshold));
    EXPECT_LT(r.max, 8.0f);
    EXPECT_LT(r.min, 0.0f);
    EXPECT_LT(mse, minmax_mse / 2);
    EXPECT_LT(mse, (m == Method::mse ? 1.05 : 1.5) * best.mse);
    const double threshold = std::max<double>(r.max, -r.min);
    EXPECT_LT(threshold, 1.3 * best.threshold);
    EXPECT_GT(threshold, best.threshold / 1.3);
  }
}

// After a ReLU half the values are exact zeros; the range must start at 0. MSE's optimum
// here shaves the outliers (about 13) rather than dropping them: see big_gaussian_with_outliers.
TEST(SearchObservers, ReluGaussianWithOutliers) {
  const std::vector<float> x = relu(big_gaussian_with_outliers());
  const BruteForce best = brute_force_threshold(x);
  ASSERT_LT(best.threshold, 20.0);
  for (Method m : {Method::entropy, Method::mse}) {
    const Range r = observe(m, {x})->range(kU8);
    const double mse = sample_mse(x, r.min, r.max);
    SCOPED_TRACE(std::string(method_name(m)) + " range [" + std::to_string(r.min) + ", " +
                 std::to_string(r.max) + "], brute force T " + std::to_string(best.threshold));
    EXPECT_EQ(r.min, 0.0f);
    if (m == Method::mse) {
      EXPECT_LT(mse, 1.05 * best.mse);
      EXPECT_LT(r.max, 1.3 * best.threshold);
      EXPECT_GT(r.max, best.threshold / 1.3);
    } else {
      // KL weighs how often values are clipped, not how far: it drops the outliers.
      EXPECT_LT(r.max, 8.0f);
      EXPECT_LT(mse, 2.0 * best.mse);
    }
  }
}

// A skewed signed tensor (short negative side, long positive tail with the outliers): the
// symmetric |x| threshold, clamped to the observed range, keeps the short side whole.
TEST(SearchObservers, SkewedSignedTensorKeepsItsShortSide) {
  std::vector<float> x = big_gaussian_with_outliers();
  for (float& v : x) v = v < 0 ? 0.1f * v : v;
  const float observed_min = *std::min_element(x.begin(), x.end());
  for (Method m : {Method::entropy, Method::mse}) {
    const Range r = observe(m, {x})->range(kU8);
    SCOPED_TRACE(std::string(method_name(m)) + " range [" + std::to_string(r.min) + ", " +
                 std::to_string(r.max) + "]");
    EXPECT_EQ(r.min, observed_min);
    EXPECT_LT(r.max, 12.5f);  // half-way to the outliers at most
  }
}

TEST(Observers, TwoBatchesEqualOneBatch) {
  for (const std::vector<float>& x : {gaussian_with_outliers(20000, 4), relu(gaussian_with_outliers(20000, 5))}) {
    const size_t half = x.size() / 3;
    const Batches one = {x};
    const Batches two = {std::vector<float>(x.begin(), x.begin() + static_cast<long>(half)),
                         std::vector<float>(x.begin() + static_cast<long>(half), x.end())};
    for (Method m : kAllMethods)
      for (const QuantTarget& t : {kU8, kS8SymNarrow}) {
        const Range a = observe(m, one, kSmall)->range(t);
        const Range b = observe(m, two, kSmall)->range(t);
        EXPECT_EQ(a.min, b.min) << method_name(m);
        EXPECT_EQ(a.max, b.max) << method_name(m);
      }
  }
}

TEST(Observers, NonNegativeTensorsNeverGetANegativeMin) {
  std::vector<float> shifted = gaussian(5000, 6);
  for (float& v : shifted) v = 0.5f + std::fabs(v);  // min > 0, like a sigmoid
  shifted.push_back(40.0f);
  for (const std::vector<float>& x : {relu(gaussian_with_outliers(20000, 7)), shifted}) {
    const float observed_min = *std::min_element(x.begin(), x.end());
    for (Method m : kAllMethods)
      for (const QuantTarget& t : {kU8, kS8SymNarrow}) {
        const Range r = observe(m, {x}, kSmall)->range(t);
        EXPECT_GE(r.min, observed_min) << method_name(m);
        EXPECT_GE(r.min, 0.0f) << method_name(m);
        EXPECT_LE(r.max, 40.0f) << method_name(m);
        EXPECT_GT(r.max, r.min) << method_name(m);
      }
  }
}

// A non-positive tensor is the mirror image of a non-negative one: same clipping, mirrored.
TEST(Observers, NonPositiveTensorsAreMirrorImages) {
  std::vector<float> x = gaussian(20000, 8);
  for (float& v : x) v = std::fabs(v);
  x.push_back(40.0f);
  std::vector<float> mirrored = x;
  for (float& v : mirrored) v = -v;
  const double bin = 40.0 / 2048;
  for (Method m : kAllMethods) {
    const Range r = observe(m, {x})->range(kU8);
    const Range n = observe(m, {mirrored})->range(kU8);
    EXPECT_LE(n.max, 0.0f) << method_name(m);
    EXPECT_EQ(n.max, -r.min) << method_name(m);
    EXPECT_NEAR(n.min, -r.max, 2 * bin) << method_name(m);
  }
}

TEST(Observers, ConstantTensorsReturnTheirValue) {
  for (Method m : kAllMethods) {
    const Range r = observe(m, {{3.0f, 3.0f}, {3.0f}})->range(kU8);
    EXPECT_EQ(r.min, 3.0f);
    EXPECT_EQ(r.max, 3.0f);
    const Range z = observe(m, {{0.0f, 0.0f, 0.0f}})->range(kU8);
    bool degenerate = false;
    const QParams p = qparams_from_range(z, kU8, &degenerate);
    EXPECT_TRUE(degenerate) << method_name(m);
    EXPECT_EQ(p.scale, 1.0f);
  }
}

TEST(Observers, NonFiniteValuesThrowSayingSo) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (Method m : kAllMethods)
    for (float bad : {nan, inf, -inf}) {
      auto o = make_observer(m);
      const std::vector<float> x = {1.0f, bad};
      try {
        o->observe_range(x);
        FAIL() << "expected a throw";
      } catch (const ir::Error& e) {
        EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
      }
    }
  // The histogram pass checks too.
  auto o = make_observer(Method::entropy);
  const std::vector<float> good = {1.0f, 2.0f}, bad = {1.0f, nan};
  o->observe_range(good);
  EXPECT_THROW(o->observe_histogram(bad), ir::Error);
}

TEST(Observers, NothingObservedThrows) {
  for (Method m : kAllMethods) {
    auto o = make_observer(m);
    o->observe_range(std::vector<float>{});  // an empty batch observes nothing
    try {
      o->range(kU8);
      FAIL() << "expected a throw";
    } catch (const ir::Error& e) {
      EXPECT_NE(std::string(e.what()).find("no values observed"), std::string::npos) << e.what();
    }
    EXPECT_THROW(o->observed(), ir::Error);
  }
}

TEST(Observers, PassesOutOfOrderThrow) {
  const std::vector<float> x = {1.0f, 2.0f, 5.0f};
  // Histogram before any range.
  EXPECT_THROW(make_observer(Method::mse)->observe_histogram(x), ir::Error);
  // A histogram method asked for its range without the histogram pass.
  auto o = make_observer(Method::percentile);
  o->observe_range(x);
  EXPECT_THROW(o->range(kU8), ir::Error);
  // More range observations once the histogram pass has begun.
  o->observe_histogram(x);
  EXPECT_THROW(o->observe_range(x), ir::Error);
}

}  // namespace
}  // namespace octet::calib
