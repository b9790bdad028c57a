// The LRN microkernels (kernels/pool/lrn_list.h) through their driver (kernels/pool/lrn.h)
// against f32_lrn_nhwc__ref, for every row this CPU runs: sizes 1..11 (odd and even), channels
// 1..40 and model widths, pixel counts around every block length (tails of every length),
// alpha / beta / bias of the zoo and beyond, 1 and 2 threads; and adversarial values: zeros,
// x^2 that overflows, infinities, NaN, subnormals, bias <= 0, powers outside the normal range.
// The running sums are the reference's bit for bit; the power is within a few ulps of
// std::pow, so outputs are compared within 1e-6 relative, NaN with NaN.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/pool/lrn.h"
#include "kernels/pool/lrn_list.h"
#include "kernels/ref/lrn.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Pool;

std::string describe(const LrnUkernel& k, const LrnParams& p, size_t pixels, size_t channels) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s size %d alpha %g beta %g bias %g, %zu pixels x %zu channels", k.name, p.size,
                p.alpha, p.beta, p.bias, pixels, channels);
  return buf;
}

// Runs `k` through the driver and compares with the reference; returns the worst relative error.
double check(const LrnUkernel& k, const LrnParams& p, size_t pixels, size_t channels, const std::vector<float>& x,
             pthreadpool_t pool) {
  std::vector<float> want(x.size()), got(x.size(), 7.0f);
  f32_lrn_nhwc__ref(p, pixels, channels, x.data(), want.data());
  F32Lrn d(p, channels, k);
  std::vector<char> scratch(d.scratch_bytes(pool ? pthreadpool_get_threads_count(pool) : 1));
  d.run(x.data(), got.data(), pixels, scratch.data(), pool);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = got[i], r = want[i];
    if (std::isnan(r) || std::isnan(a)) {
      if (std::isnan(a) != std::isnan(r)) {
        ADD_FAILURE() << describe(k, p, pixels, channels) << " at " << i << ": " << a << " vs " << r;
        return worst;
      }
      continue;
    }
    if (std::isinf(r) || r == 0.0f) {
      if (a != r) {
        ADD_FAILURE() << describe(k, p, pixels, channels) << " at " << i << ": " << a << " vs " << r;
        return worst;
      }
      continue;
    }
    const double rel = std::fabs(double(a) - double(r)) / std::fabs(double(r));
    worst = std::max(worst, rel);
    if (rel > 1e-6) {
      ADD_FAILURE() << describe(k, p, pixels, channels) << " at " << i << ": " << a << " vs " << r << " (rel " << rel << ")";
      return worst;
    }
  }
  return worst;
}

std::vector<float> uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = u(rng);
  return v;
}

TEST(LrnUkernels, RandomShapesEveryKernel) {
  Pool pool(pthreadpool_create(2));
  for (const LrnUkernel* k : testing::runnable_entries(kF32LrnUkernels)) {
    std::mt19937 rng(5);
    const size_t block = kLrnBlockVectors * k->lanes;
    double worst = 0;
    for (int size = 1; size <= 11; ++size)
      for (size_t channels : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(8), size_t(13), size_t(17), size_t(40)}) {
        const size_t pixels = 1 + rng() % (2 * block + 1);
        const LrnParams p{size, 1e-4f * float(1 + rng() % 5000), 0.25f + 0.25f * float(rng() % 8), 0.5f + float(rng() % 3)};
        const std::vector<float> x = uniform(rng, pixels * channels, -4.0f, 4.0f);
        worst = std::max(worst, check(*k, p, pixels, channels, x, size % 2 ? pool.get() : nullptr));
      }
    // Every tail length of a block, and the zoo's shapes (AlexNet / GoogLeNet: size 5, alpha 1e-4, beta 0.75).
    for (size_t pixels = 1; pixels <= 2 * block + 1; ++pixels) {
      const LrnParams p{5, 1e-4f, 0.75f, pixels % 2 ? 1.0f : 2.0f};
      const std::vector<float> x = uniform(rng, pixels * 24, -100.0f, 100.0f);
      worst = std::max(worst, check(*k, p, pixels, 24, x, nullptr));
    }
    for (size_t channels : {size_t(64), size_t(96), size_t(97), size_t(192)}) {
      const LrnParams p{5, 1e-4f, 0.75f, 1.0f};
      const std::vector<float> x = uniform(rng, 55 * channels, -300.0f, 300.0f);
      worst = std::max(worst, check(*k, p, 55, channels, x, pool.get()));
    }
    std::printf("%s: worst relative error %.3g\n", k->name, worst);
  }
}

TEST(LrnUkernels, AdversarialValuesEveryKernel) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const LrnUkernel* k : testing::runnable_entries(kF32LrnUkernels)) {
    std::mt19937 rng(6);
    const size_t block = kLrnBlockVectors * k->lanes;
    const size_t pixels = 2 * block + 3, channels = 11;
    struct Case {
      LrnParams p;
      std::vector<float> special;  // values sprinkled into the input
    };
    const Case cases[] = {
        {{3, 1e-4f, 0.75f, 1.0f}, {0.0f, -0.0f}},
        {{5, 1e-4f, 0.75f, 1.0f}, {1e20f, -3e19f, 1.8e19f}},        // x^2 overflows to inf: y = 0
        {{5, 1.0f, 0.75f, 1.0f}, {inf, -inf}},                      // inf * 0 = NaN
        {{5, 1.0f, 0.75f, 1.0f}, {nan}},
        {{3, 1e-4f, 0.75f, 1.0f}, {1e-40f, -1e-45f, FLT_MIN}},       // subnormal x
        {{3, 1.0f, 0.75f, 0.0f}, {0.0f}},                           // s = 0: 0 * inf = NaN
        {{3, 1.0f, 0.75f, -1.0f}, {0.0f, 0.5f}},                    // s < 0: NaN
        {{3, 2.0f, 4.0f, 1e-30f}, {0.0f, 1e-3f, 1e4f}},              // powers past 2^126 and below 2^-125
        {{7, 1.0f, 1.0f, 1e-6f}, {1e15f, 1e-15f}},
        {{4, 1e-2f, 0.5f, 3.0f}, {1e3f}},
    };
    for (const Case& c : cases)
      for (int density : {1, 7, 60}) {
        std::vector<float> x = uniform(rng, pixels * channels, -3.0f, 3.0f);
        for (float& e : x)
          if (int(rng() % 100) < density) e = c.special[rng() % c.special.size()];
        check(*k, c.p, pixels, channels, x, nullptr);
      }
    // Whole blocks of zeros with bias 0 (every lane bad) and of huge values.
    for (float v : {0.0f, 3e30f}) {
      std::vector<float> x(pixels * channels, v);
      check(*k, {3, 1.0f, 0.75f, 0.0f}, pixels, channels, x, nullptr);
    }
  }
}

TEST(LrnDriver, RefusesWhatTheVectorPowerDoesNotTake) {
  EXPECT_THROW(F32Lrn({3, 1e-4f, 0.0f, 1.0f}, 8, active_isa()), Unsupported);
  EXPECT_THROW(F32Lrn({3, 1e-4f, std::numeric_limits<float>::infinity(), 1.0f}, 8, active_isa()), Unsupported);
  EXPECT_THROW(F32Lrn({3, 1e-4f, 0.75f, 1.0f}, 0, active_isa()), Unsupported);
  EXPECT_THROW(F32Lrn({3, 1e-4f, 0.75f, 1.0f}, 8, Isa::scalar), Unsupported);
  EXPECT_THROW(F32Lrn({0, 1e-4f, 0.75f, 1.0f}, 8, active_isa()), std::invalid_argument);
}

}  // namespace
}  // namespace octet::kernels
