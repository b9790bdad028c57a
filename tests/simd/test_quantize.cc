// SIMD QuantizeLinear against q8_quantize_linear__ref: bit-exact on random values, exact ties
// (the rounding rule), saturation, NaN / Inf and every length up to a few vectors (tails).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/elementwise/quantize.h"
#include "kernels/ref/qlinear.h"

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
      std::printf("skipped %s: this CPU lacks %s\n", k.name, isa_name(k.isa));
      continue;
    }
    ++ran;
    for (float scale : {1.0f / 255.0f, 0.0078125f, 0.0236f, 1.7f, 3e-5f})
      for (int32_t zp : {0, 1, 127, 128, 255}) check<uint8_t>(k, Q8::u8, scale, zp, rng);
    for (float scale : {1.0f / 127.0f, 0.05f, 2.5f})
      for (int32_t zp : {-128, -1, 0, 127}) check<int8_t>(k, Q8::s8, scale, zp, rng);
  }
  EXPECT_GT(ran, 0) << "no SIMD quantize kernel runs on this CPU";
}

TEST(Q8Quantize, ChoiceFollowsTheIsaCap) {
  EXPECT_EQ(choose_q8_quantize(Isa::scalar), nullptr);
  if (isa_supported(Isa::avx2)) EXPECT_EQ(choose_q8_quantize(Isa::avx2)->isa, Isa::avx2);
  if (isa_supported(Isa::avx512)) EXPECT_EQ(choose_q8_quantize(Isa::avx512vnni)->isa, Isa::avx512);
}

}  // namespace
}  // namespace octet::kernels
