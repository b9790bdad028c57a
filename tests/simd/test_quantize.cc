// SIMD QuantizeLinear against q8_quantize_linear__ref: bit-exact on random values, exact ties
// (the rounding rule), saturation, NaN / Inf and every length up to a few vectors (tails);
// SIMD DequantizeLinear against q8_dequantize_linear__ref, bit for bit; the fused
// dequantize-affine-quantize against q8_affine_quantize__ref.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/quantize/quantize.h"
#include "kernels/ref/qlinear.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

std::vector<float> adversarial_values(float scale, int32_t zp, std::mt19937& rng, size_t n) {
  std::vector<float> v;
  std::uniform_real_distribution<float> wide(-300.0f * scale, 300.0f * scale);
  std::uniform_int_distribution<int> k(-300, 300);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, 0.0f, -0.0f, 1e-40f};
  while (v.size() < n) {
    switch (v.size() % 4) {
      case 0: v.push_back(wide(rng)); break;
      case 1: v.push_back((float(k(rng)) + 0.5f) * scale); break;  // a tie after the division
      case 2: v.push_back(float(k(rng)) * scale); break;
      default: v.push_back(specials[rng() % 8]); break;
    }
  }
  (void)zp;
  return v;
}

template <typename T>
void check(const Q8QuantizeKernel& k, Q8 type, float scale, int32_t zp, std::mt19937& rng) {
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(15), size_t(16), size_t(17), size_t(33),
                   size_t(100), size_t(3072)}) {
    std::vector<float> x = adversarial_values(scale, zp, rng, n);
    std::vector<T> want(n), got(n + 1, T(0x5A));
    q8_quantize_linear__ref<T>(int64_t(n), x.data(), scale, zp, want.data());
    q8_quantize(k, type, n, x.data(), scale, zp, got.data());
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(int(got[i]), int(want[i])) << k.name << " " << q8_name(type) << " scale " << scale << " zp " << zp
                                           << " n " << n << " x[" << i << "] = " << x[i];
    EXPECT_EQ(got[n], T(0x5A)) << k.name << ": wrote past the end (n " << n << ")";
  }
}

TEST(Q8Quantize, EveryKernelMatchesTheRefBitForBit) {
  std::mt19937 rng(17);
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) {
      testing::print_untested(k.name, k.isa, "this CPU lacks it");
      continue;
    }
    ++ran;
    for (float scale : {1.0f / 255.0f, 0.0078125f, 0.0236f, 1.7f, 3e-5f})
      for (int32_t zp : {0, 1, 127, 128, 255}) check<uint8_t>(k, Q8::u8, scale, zp, rng);
    for (float scale : {1.0f / 127.0f, 0.05f, 2.5f})
      for (int32_t zp : {-128, -1, 0, 127}) check<int8_t>(k, Q8::s8, scale, zp, rng);
  }
  testing::skip_when_none_run(size_t(ran), "quantize");
}

// The kernels multiply by fl(1/scale) and divide only within 2^-12 of a rounding boundary:
// sweep values at and a few ulps around every k + 1/2 (k in [-300, 300], so also around the
// clamp bounds) for random scales, and scales whose reciprocal is not a normal float (those must
// divide everywhere), against the dividing ref. A margin of 2^-20 already fails here.
TEST(Q8Quantize, ReciprocalShortcutMatchesTheDivisionEverywhere) {
  std::mt19937 rng(41);
  std::vector<float> scales = {1e-30f, 3e-39f, 1e-45f, 1e30f, 3e38f, 1.0f / 3.0f, 0.1f, 7.0f};
  std::uniform_real_distribution<float> exponent(-20.0f, 8.0f);
  for (int i = 0; i < 40; ++i) scales.push_back(std::pow(2.0f, exponent(rng)) * (1.0f + float(rng() % 1000) / 1000.0f));
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) continue;
    ++ran;
    for (float scale : scales) {
      std::vector<float> x;
      for (int q = -300; q <= 300; ++q) {
        float v = (float(q) + 0.5f) * scale;
        for (int step = 0; step < 4; ++step) v = std::nextafter(v, -INFINITY);
        for (int step = 0; step < 9; ++step, v = std::nextafter(v, INFINITY)) x.push_back(v);
      }
      std::uniform_real_distribution<float> wide(-600.0f, 600.0f);
      for (int j = 0; j < 2000; ++j) x.push_back(wide(rng) * scale);
      for (int32_t zp : {0, 37, 255}) {
        std::vector<uint8_t> want(x.size()), got(x.size());
        q8_quantize_linear__ref<uint8_t>(int64_t(x.size()), x.data(), scale, zp, want.data());
        q8_quantize(k, Q8::u8, x.size(), x.data(), scale, zp, got.data());
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(int(got[i]), int(want[i])) << k.name << " scale " << scale << " zp " << zp << " x " << x[i];
      }
    }
  }
  testing::skip_when_none_run(size_t(ran), "quantize");
}

// The range pass: every length up to a few vectors, the extremes in the tail, NaN anywhere
// (also after the last vector), +-inf, all equal values.
TEST(F32Range, EveryKernelMatchesTheRef) {
  std::mt19937 rng(23);
  std::normal_distribution<float> value(0.0f, 10.0f);
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) continue;
    ++ran;
    for (size_t n = 0; n <= 70; ++n) {
      for (int variant = 0; variant < 6; ++variant) {
        std::vector<float> x(n);
        for (float& v : x) v = value(rng);
        if (n > 0 && variant == 1) x[n - 1] = 1e6f;  // the max in the tail
        if (n > 0 && variant == 2) x[rng() % n] = std::numeric_limits<float>::quiet_NaN();
        if (n > 0 && variant == 3) x[rng() % n] = -std::numeric_limits<float>::infinity();
        if (variant == 4) std::fill(x.begin(), x.end(), 2.5f);
        if (n > 1 && variant == 5) x[n - 1] = std::numeric_limits<float>::quiet_NaN(), x[0] = -1e30f;
        const F32Range want = f32_range__ref(int64_t(n), x.data());
        F32Range got;
        k.range(n, x.data(), &got.min, &got.max);
        auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
        ASSERT_TRUE(same(got.min, want.min) && same(got.max, want.max))
            << k.name << " n " << n << " variant " << variant << ": [" << got.min << ", " << got.max
            << "] vs [" << want.min << ", " << want.max << "]";
      }
    }
  }
  testing::skip_when_none_run(size_t(ran), "range");
}

// DynamicQuantizeLinear on SIMD against qu8_dynamic_quantize_linear__ref: scale, zero point and
// every byte, for all-positive, all-negative, all-zero, mixed and tiny ranges; non-finite
// input is reported, not quantized.
TEST(Qu8DynamicQuantize, EveryKernelMatchesTheRef) {
  std::mt19937 rng(29);
  std::vector<const Q8QuantizeKernel*> kernels = {nullptr};  // every level of this architecture, and the ref
  for (const Q8QuantizeKernel& k : kQ8QuantizeKernels) kernels.push_back(&k);
  size_t simd = 0;
  for (const Q8QuantizeKernel* k : kernels) {
    if (k != nullptr && !isa_supported(k->isa)) continue;
    simd += k != nullptr;
    for (int variant = 0; variant < 6; ++variant) {
      for (size_t n : {size_t(1), size_t(9), size_t(64), size_t(1000)}) {
        std::uniform_real_distribution<float> dist(variant == 0 ? 0.0f : -5.0f, variant == 1 ? 0.0f : 7.0f);
        std::vector<float> x(n);
        for (float& v : x) v = variant == 2 ? 0.0f : dist(rng) * (variant == 3 ? 1e-6f : 1.0f);
        if (variant == 4) x[n / 2] = std::numeric_limits<float>::infinity();
        if (variant == 5) x[n - 1] = std::numeric_limits<float>::quiet_NaN();
        std::vector<uint8_t> want(n), got(n + 1, 0x5A);
        const DynamicQuantizeResult r = qu8_dynamic_quantize(k, n, x.data(), got.data());
        const char* name = k != nullptr ? k->name : "ref";
        if (variant >= 4) {
          EXPECT_FALSE(r.finite) << name;
          continue;
        }
        ASSERT_TRUE(r.finite) << name;
        const DynamicQuantization q = qu8_dynamic_quantize_linear__ref(int64_t(n), x.data(), want.data());
        EXPECT_EQ(r.q.scale, q.scale) << name << " variant " << variant << " n " << n;
        EXPECT_EQ(r.q.zero_point, q.zero_point) << name << " variant " << variant << " n " << n;
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << name << " x[" << i << "] = " << x[i];
        EXPECT_EQ(got[n], 0x5A) << name << ": wrote past the end";
      }
    }
  }
  testing::skip_when_none_run(simd, "dynamic quantize");
}

// DequantizeLinear: every byte value, zero points at both ends of each type, scales from
// subnormal to huge (products that overflow to inf or round into subnormals), every tail.
TEST(Q8Dequantize, EveryKernelMatchesTheRefBitForBit) {
  std::mt19937 rng(23);
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) {
      testing::print_untested(k.dequantize_name, k.isa, "this CPU lacks it");
      continue;
    }
    ++ran;
    for (bool is_signed : {false, true}) {
      const std::vector<int32_t> zps = is_signed ? std::vector<int32_t>{-128, -1, 0, 3, 127}
                                                 : std::vector<int32_t>{0, 1, 128, 200, 255};
      for (float scale : {1.0f / 255.0f, 0.0236f, 1.7f, 3e-41f, 2e36f, 1e-38f})
        for (int32_t zp : zps)
          for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(15), size_t(16), size_t(17),
                           size_t(33), size_t(256), size_t(1000)}) {
            std::vector<uint8_t> x(n);
            for (size_t i = 0; i < n; ++i) x[i] = n == 256 ? uint8_t(i) : uint8_t(rng());
            std::vector<float> want(n), got(n + 1, 1234.5f);
            if (is_signed)
              q8_dequantize_linear__ref<int8_t>(int64_t(n), reinterpret_cast<const int8_t*>(x.data()), scale, zp,
                                                want.data());
            else
              q8_dequantize_linear__ref<uint8_t>(int64_t(n), x.data(), scale, zp, want.data());
            k.dequantize(n, x.data(), is_signed, scale, zp, got.data());
            for (size_t i = 0; i < n; ++i)
              ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                  << k.dequantize_name << (is_signed ? " s8" : " u8") << " scale " << scale << " zp " << zp << " n "
                  << n << " x[" << i << "] = " << int(x[i]) << ": " << got[i] << " vs " << want[i];
            EXPECT_EQ(got[n], 1234.5f) << k.dequantize_name << ": wrote past the end (n " << n << ")";
          }
    }
  }
  testing::skip_when_none_run(size_t(ran), "dequantize");
}

// DequantizeLinear -> x * a + b -> Relu / Clip / none -> QuantizeLinear in registers against the
// ref's steps: every code, both types each way, per-element a and b with negative, zero, huge,
// NaN and inf factors, shifts that land on exact ties (x_scale and y_scale powers of two, b a
// half), clamps with NaN passing, every tail, nothing written past the end.
TEST(Q8AffineQuantize, EveryKernelMatchesTheRefBitForBit) {
  std::mt19937 rng(29);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float odd_factors[] = {nan, inf, -inf, 0.0f, -0.0f, 3e38f}, odd_shifts[] = {nan, inf, -inf, -0.0f};
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) {
      testing::print_untested(k.affine_name, k.isa, "this CPU lacks it");
      continue;
    }
    ++ran;
    for (int variant = 0; variant < 24; ++variant) {
      Q8AffineQuantize p;
      p.x_signed = variant % 2;
      const bool y_signed = (variant / 2) % 2;
      const bool ties = (variant / 4) % 2;
      p.x_scale = ties ? 0.25f : 0.0173f;
      p.x_zero_point = p.x_signed ? -5 : 131;
      p.y_scale = ties ? 0.5f : 0.0291f;
      p.y_zero_point = y_signed ? 3 : 117;
      p.qmin = y_signed ? -128 : 0;
      p.qmax = y_signed ? 127 : 255;
      switch (variant / 8) {
        case 0: break;                                // none
        case 1: p.lo = 0.0f; break;                   // Relu
        default: p.lo = -0.5f, p.hi = 1.5f; break;    // Clip
      }
      std::normal_distribution<float> factor(0.0f, 1.5f);
      for (size_t n : {size_t(0), size_t(1), size_t(5), size_t(16), size_t(17), size_t(63), size_t(64), size_t(65),
                       size_t(256), size_t(1000)}) {
        std::vector<uint8_t> x(n);
        std::vector<float> a(n), b(n);
        for (size_t i = 0; i < n; ++i) {
          x[i] = n == 256 ? uint8_t(i) : uint8_t(rng());
          a[i] = ties ? float(int(rng() % 9) - 4) : factor(rng);
          b[i] = ties ? 0.25f * float(int(rng() % 41) - 20) : factor(rng);
          if (rng() % 53 == 0) a[i] = odd_factors[rng() % 6];
          if (rng() % 59 == 0) b[i] = odd_shifts[rng() % 4];
        }
        std::vector<uint8_t> want(n), got(n + 1, 0x5A);
        q8_affine_quantize__ref(int64_t(n), x.data(), a.data(), b.data(), p, want.data());
        k.affine(n, x.data(), a.data(), b.data(), p, got.data());
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(int(got[i]), int(want[i])) << k.affine_name << " variant " << variant << " n " << n << " x["
                                               << i << "] = " << int(x[i]) << " a " << a[i] << " b " << b[i];
        EXPECT_EQ(got[n], 0x5A) << k.affine_name << ": wrote past the end (n " << n << ")";
      }
    }
  }
  testing::skip_when_none_run(size_t(ran), "affine quantize");
}

// QuantizeLinear then DequantizeLinear in one pass: the quantize test's adversarial values (ties,
// saturation, NaN, inf), both types, every tail, bit for bit with the ref; nothing written past n.
TEST(F32FakeQuantize, EveryKernelMatchesTheRefBitForBit) {
  std::mt19937 rng(31);
  int ran = 0;
  for (const auto& k : kQ8QuantizeKernels) {
    if (!isa_supported(k.isa)) {
      testing::print_untested(k.fake_quantize_name, k.isa, "this CPU lacks it");
      continue;
    }
    ++ran;
    for (bool s8 : {false, true})
      for (float scale : {1.0f / 255.0f, 0.0236f, 1.7f, 3e-5f})
        for (int32_t zp : s8 ? std::vector<int32_t>{-128, -3, 127} : std::vector<int32_t>{0, 117, 255})
          for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(16), size_t(17), size_t(100), size_t(3072)}) {
            const std::vector<float> x = adversarial_values(scale, zp, rng, n);
            const int32_t lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
            std::vector<float> want(n), got(n + 1, 1234.5f);
            f32_fake_quantize__ref(int64_t(n), x.data(), scale, zp, lo, hi, want.data());
            k.fake_quantize(n, x.data(), scale, zp, lo, hi, got.data());
            for (size_t i = 0; i < n; ++i)
              ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                  << k.fake_quantize_name << (s8 ? " s8" : " u8") << " scale " << scale << " zp " << zp << " x[" << i
                  << "] = " << x[i] << ": " << got[i] << " vs " << want[i];
            EXPECT_EQ(got[n], 1234.5f) << k.fake_quantize_name << ": wrote past the end (n " << n << ")";
          }
  }
  testing::skip_when_none_run(size_t(ran), "fake quantize");
}

TEST(Q8Quantize, ChoiceFollowsTheIsaCap) {
  EXPECT_EQ(choose_q8_quantize(Isa::scalar), nullptr);
  if (isa_supported(Isa::avx2)) {
    EXPECT_EQ(choose_q8_quantize(Isa::avx2)->isa, Isa::avx2);
  }
  if (isa_supported(Isa::avx512)) {
    EXPECT_EQ(choose_q8_quantize(Isa::avx512vnni)->isa, Isa::avx512);
  }
}

}  // namespace
}  // namespace octet::kernels
