// LayerNormalization, Erf, Tanh and GELU microkernels (kernels/elementwise/eltwise_list.h) and their
// drivers against the scalar references, for every entry this CPU supports.
// LayerNormalization: bit for bit with f32_layernorm__ref (ONNX Runtime's formula), over random
// and adversarial rows (every length 1-40: Welford below 8, then every tail of MLAS's 8 lanes and
// 4 double lanes; rows not a multiple of the lane count, large offsets, constant rows, NaN and
// infinity), with and without bias and the Mean / InvStdDev outputs. Erf, Tanh, GELU: error bounds against double
// precision over a dense sweep plus the special values.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/layernorm.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::layernorm_gelu_test {

bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0; }

struct LnCase {
  size_t rows, n;
  std::vector<float> x, scale, bias;
  bool with_bias, with_stats;
};

LnCase make_case(std::mt19937& rng, size_t rows, size_t n, int kind) {
  LnCase c{rows, n, std::vector<float>(rows * n), std::vector<float>(n), std::vector<float>(n), rng() % 2 == 0,
           rng() % 2 == 0};
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (float& v : c.scale) v = u(rng);
  for (float& v : c.bias) v = u(rng);
  for (size_t r = 0; r < rows; ++r) {
    // kind 1: large offsets (the one-pass variance cancels); 2: constant rows; 3: a NaN or an
    // infinity in some rows; 0: plain.
    const float offset = kind == 1 ? float(int(rng() % 2001) - 1000) * 37.0f : 0.0f;
    const float constant = u(rng) * 100.0f;
    for (size_t h = 0; h < n; ++h) c.x[r * n + h] = kind == 2 ? constant : offset + u(rng);
    if (kind == 3 && rng() % 3 == 0)
      c.x[r * n + rng() % n] = rng() % 2 ? std::nanf("") : (rng() % 2 ? INFINITY : -INFINITY);
  }
  return c;
}

void check_layernorm(const LnCase& c, F32LayerNormUkernel fn, const char* name) {
  const float eps = 1e-5f;
  std::vector<float> expected(c.rows * c.n), y(c.rows * c.n, -7.0f);
  std::vector<float> em(c.rows), es(c.rows), m(c.rows, -7.0f), s(c.rows, -7.0f);
  const float* bias = c.with_bias ? c.bias.data() : nullptr;
  f32_layernorm__ref(c.rows, c.n, c.x.data(), c.scale.data(), bias, eps, expected.data(), em.data(), es.data());
  fn(c.rows, c.n, c.x.data(), c.scale.data(), bias, eps, y.data(), c.with_stats ? m.data() : nullptr,
     c.with_stats ? s.data() : nullptr);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_TRUE(same_bits(y[i], expected[i])) << name << " rows " << c.rows << " n " << c.n << " at " << i << ": "
                                              << y[i] << " vs ref " << expected[i];
  for (size_t r = 0; r < c.rows; ++r) {
    if (!c.with_stats) {
      ASSERT_EQ(m[r], -7.0f) << name << ": wrote Mean though asked not to";
      continue;
    }
    ASSERT_TRUE(same_bits(m[r], em[r])) << name << " mean of row " << r << " n " << c.n;
    ASSERT_TRUE(same_bits(s[r], es[r])) << name << " inv_std of row " << r << " n " << c.n;
  }
}

TEST(F32LayerNormUkernel, EqualsTheRefBitForBit) {
  std::mt19937 rng(71);
  int cases = 0;
  for (auto* k : testing::runnable_entries(kF32LayerNormUkernels)) {
    std::vector<size_t> lengths;
    for (size_t n = 1; n <= 40; ++n) lengths.push_back(n);
    for (size_t n : {64, 95, 96, 100, 101, 102, 103, 257}) lengths.push_back(n);
    for (size_t n : lengths) {
      for (int kind = 0; kind < 4; ++kind, ++cases) {
        const size_t rows = 1 + rng() % 37;
        check_layernorm(make_case(rng, rows, n, kind), k->fn, k->name);
      }
    }
    for (int i = 0; i < 100; ++i, ++cases)
      check_layernorm(make_case(rng, 1 + rng() % 50, 1 + rng() % 300, int(rng() % 4)), k->fn, k->name);
  }
  ::testing::Test::RecordProperty("cases", cases);
}

// ORT 1.30's formula (a double mean, then centred squares) agrees with a two-pass double
// computation to 1e-5 relative (of the largest output of the row) when the rows are centred, and
// with an offset of 1e4 against a spread of 1 stays within the float mean's rounding (half an ulp
// of 1e4 is 4.9e-4 against a standard deviation of 0.58), where the one-pass sum of squares ORT
// used before lost every digit.
TEST(F32LayerNormRef, CentredSquaresStayAccurateForLargeOffsets) {
  std::mt19937 rng(73);
  auto worst_error = [&](float offset) {
    double worst = 0;
    for (int t = 0; t < 50; ++t) {
      const size_t n = 1 + rng() % 400;
      std::vector<float> x(n), scale(n, 1.0f), y(n);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (float& v : x) v = offset + u(rng);
      f32_layernorm__ref(1, n, x.data(), scale.data(), nullptr, 1e-5f, y.data(), nullptr, nullptr);
      double mean = 0, var = 0;
      for (float v : x) mean += v;
      mean /= double(n);
      for (float v : x) var += (v - mean) * (v - mean);
      var /= double(n);
      double peak = 1e-30, err = 0;
      for (size_t h = 0; h < n; ++h) {
        const double e = (x[h] - mean) / std::sqrt(var + 1e-5);
        peak = std::max(peak, std::fabs(e));
        err = std::max(err, std::fabs(double(y[h]) - e));
      }
      worst = std::max(worst, err / peak);
    }
    return worst;
  };
  EXPECT_LE(worst_error(0.0f), 1e-5);
  const double offset_error = worst_error(1e4f);
  EXPECT_LE(offset_error, 2e-3);
  EXPECT_GT(offset_error, 1e-4);  // the mean rounded to float: not exact either
}

TEST(F32LayerNormDriver, SplitsRowsOverThreadsAndEqualsTheRef) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(79);
  for (Isa isa : runnable_isas()) {
    for (size_t n : {size_t(1), size_t(96), size_t(3000)}) {
      const size_t rows = 1 + rng() % 200;
      const LnCase c = make_case(rng, rows, n, 0);
      const F32LayerNorm norm(n, isa);
      if (isa != Isa::scalar) {
        EXPECT_EQ(norm.kernel_name().find("__ref"), std::string::npos) << norm.kernel_name();
      }
      std::vector<float> expected(rows * n), y(rows * n), em(rows), m(rows), es(rows), s(rows);
      f32_layernorm__ref(rows, n, c.x.data(), c.scale.data(), c.bias.data(), 1e-5f, expected.data(), em.data(),
                         es.data());
      norm.run(rows, c.x.data(), c.scale.data(), c.bias.data(), 1e-5f, y.data(), m.data(), s.data(), pool.get());
      for (size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(same_bits(y[i], expected[i])) << norm.kernel_name() << " " << i;
      for (size_t r = 0; r < rows; ++r) ASSERT_TRUE(same_bits(m[r], em[r]) && same_bits(s[r], es[r]));
    }
  }
}

// ---- Erf, Tanh, GELU ----

std::vector<float> sweep() {
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.00037f) x.push_back(v);
  for (float v = 1e-30f; v < 1.0f; v *= 1.7f) {
    x.push_back(v);
    x.push_back(-v);
  }
  for (float v : {0.0f, -0.0f, 0.875f, -0.875f, 0.4f, -0.4f, 4.0f, -4.0f, 3.92f, 9.0f, -9.0f, 50.0f, -50.0f, 1e10f,
                  -1e10f, INFINITY, -INFINITY, std::numeric_limits<float>::denorm_min()})
    x.push_back(v);
  return x;
}

double gelu_exact(double x) { return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_exact(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// |y - exact| <= rel * |exact| + abs_x * |x|: `abs_x` covers GELU's 1 + erf(x / sqrt 2) for x
// below about -1.5, where ORT's formula (and so octet's, which follows it) loses the digits of
// a number near 0 computed as a difference near 1 (one ulp of 1 times x / 2).
struct Bound {
  double rel, abs_x;
};

template <class Exact>
void check_map(std::span<const EltwiseUkernel<F32ActUkernel>> list, Exact exact, Bound bound) {
  const std::vector<float> x = sweep();
  for (auto* k : testing::runnable_entries(list)) {
    std::vector<float> y(x.size(), -7.0f);
    k->fn(x.size(), x.data(), y.data(), 0.0f, 0.0f);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = exact(double(x[i]));
      const double tol = bound.rel * std::fabs(e) + bound.abs_x * std::fabs(double(x[i])) + 1e-38;
      if (std::isinf(x[i]) && std::isnan(e)) continue;  // GELU(-inf): x * 0 is NaN in double
      if (double(y[i]) == e) continue;                    // infinities included
      ASSERT_LE(std::fabs(double(y[i]) - e), tol) << k->name << " x " << x[i] << ": " << y[i] << " vs " << e;
      worst = std::max(worst, std::fabs(double(y[i]) - e) / std::max(std::fabs(e), 1e-30));
    }
    std::printf("%s: worst relative error %.3g over %zu values\n", k->name, worst, x.size());
    const float nan_in[3] = {std::nanf(""), 1.0f, -std::nanf("")};
    float nan_out[3];
    k->fn(3, nan_in, nan_out, 0.0f, 0.0f);
    EXPECT_TRUE(std::isnan(nan_out[0]) && std::isnan(nan_out[2])) << k->name << ": NaN must pass through";
    // Tails: every length up to three vectors, written exactly there.
    for (size_t n = 0; n <= 48; ++n) {
      std::vector<float> in(x.begin(), x.begin() + 64), out(64, -7.0f), all(64);
      k->fn(64, in.data(), all.data(), 0.0f, 0.0f);
      k->fn(n, in.data(), out.data(), 0.0f, 0.0f);
      for (size_t i = 0; i < 64; ++i)
        ASSERT_TRUE(i < n ? same_bits(out[i], all[i]) : out[i] == -7.0f) << k->name << " n " << n << " at " << i;
    }
  }
}

TEST(F32ActUkernel, ErfWithinTwoHundredthsOfAMillionth) {
  check_map(kF32ErfUkernels, [](double v) { return std::erf(v); }, {2.5e-7, 0});
}

TEST(F32ActUkernel, TanhWithinFourTenthsOfAMillionth) {
  check_map(kF32TanhUkernels, [](double v) { return std::tanh(v); }, {4e-7, 0});
}

TEST(F32ActUkernel, GeluWithinBounds) { check_map(kF32GeluUkernels, gelu_exact, {5e-7, 1.2e-7}); }

TEST(F32ActUkernel, GeluTanhWithinBounds) { check_map(kF32GeluTanhUkernels, gelu_tanh_exact, {5e-7, 1.2e-7}); }

// The drivers: F32Unary (the standalone ops) and F32Epilogue (fused into a conv or GEMM) run
// the microkernels at every vector level and agree with the scalar reference within the bound.
TEST(EltwiseDriver, ErfTanhGeluOnTheirMicrokernels) {
  std::mt19937 rng(83);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  for (Isa isa : runnable_isas()) {
    for (const Activation act : {Activation::erf(), Activation::tanh(), Activation::gelu(), Activation::gelu_tanh()}) {
      const F32Unary unary(act.kind, isa);
      const F32Epilogue epilogue(act, isa);
      EXPECT_TRUE(epilogue.active());
      if (isa != Isa::scalar) {
        EXPECT_EQ(unary.kernel_name().find("__ref"), std::string::npos) << unary.kernel_name();
        EXPECT_EQ(epilogue.kernel_name().find("__ref"), std::string::npos) << epilogue.kernel_name();
      }
      const size_t n = 1 + rng() % 3000, rows = 3, ld = n + 5;
      std::vector<float> x(n), expected(n), y(n);
      for (float& v : x) v = u(rng);
      f32_unary__ref(act, int64_t(n), x.data(), expected.data());
      unary.run(act, int64_t(n), x.data(), y.data(), nullptr);
      // Erf and GELU take MLAS's erf steps at every level (kernels/elementwise/erf_coefficients.h).
      const bool exact = act.kind == ActKind::erf || act.kind == ActKind::gelu;
      for (size_t i = 0; i < n; ++i) {
        if (exact) {
          ASSERT_TRUE(same_bits(y[i], expected[i])) << unary.kernel_name() << " x " << x[i];
        }
        ASSERT_NEAR(y[i], expected[i], 1e-6f * std::fabs(expected[i]) + 2e-7f * std::fabs(x[i]))
            << unary.kernel_name() << " x " << x[i];
      }
      std::vector<float> block(rows * ld, 42.0f);
      for (size_t r = 0; r < rows; ++r) std::copy(x.begin(), x.end(), block.begin() + long(r * ld));
      epilogue.run(rows, n, block.data(), ld);
      for (size_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < ld; ++i) {
          const float v = block[r * ld + i];
          if (i >= n) {
            ASSERT_EQ(v, 42.0f) << "wrote past the block";
          } else if (exact) {
            ASSERT_TRUE(same_bits(v, expected[i])) << epilogue.kernel_name() << " x " << x[i];
          } else {
            ASSERT_NEAR(v, expected[i], 1e-6f * std::fabs(expected[i]) + 2e-7f * std::fabs(x[i]));
          }
        }
    }
  }
}

}  // namespace octet::kernels::layernorm_gelu_test
