// The comparison, classification, Sign, Shrink and n-ary sum / max / min microkernels
// (kernels/elementwise/compare_list.h) at every runnable level against their scalar references
// (kernels/ref/compare.h): bools byte for byte, floats bit for bit (NaN payloads, -0), at every
// length 0..70 (every tail of every level), each operand a run or one repeated element, with NaN,
// +-inf, +-0, equal operands and the Shrink thresholds themselves among random values; nothing
// past y[n - 1] is written.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/compare_list.h"
#include "kernels/ref/compare.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace compare_tests {

constexpr size_t kGuard = 8;

template <class Fn>
std::vector<const EltwiseUkernel<Fn>*> runnable(std::span<const EltwiseUkernel<Fn>> list) {
  return testing::runnable_entries(list);
}

// Quarters in [-2, 2] (so that operands are often equal), with the specials scattered.
std::vector<float> adversarial(std::mt19937& rng, size_t n) {
  std::vector<float> v(std::max<size_t>(n, 1));
  for (float& x : v) x = float(int(rng() % 17) - 8) / 4.0f;
  const float specials[] = {std::nanf(""), -std::nanf("3"), INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -FLT_MAX};
  for (size_t k = 0; k < v.size() / 3 + 1; ++k) v[rng() % v.size()] = specials[rng() % std::size(specials)];
  return v;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[j]), std::bit_cast<uint32_t>(want[j])) << what << " at " << j;
}

TEST(F32CompareUkernel, EqualsTheReferenceAtEveryLengthAndBroadcast) {
  std::mt19937 rng(71);
  const struct {
    std::span<const EltwiseUkernel<F32CompareUkernel>> list;
    F32CompareUkernel ref;
  } families[] = {{kF32EqualUkernels, f32_equal__ref},
                  {kF32GreaterUkernels, f32_greater__ref},
                  {kF32GreaterEqualUkernels, f32_greater_equal__ref}};
  int cases = 0, trues = 0;
  for (const auto& f : families)
    for (auto* k : runnable(f.list))
      for (size_t n = 0; n <= 70; ++n)
        for (int incs = 0; incs < 4; ++incs) {
          const size_t a_inc = incs & 1, b_inc = (incs >> 1) & 1;
          const auto a = adversarial(rng, n), b = adversarial(rng, n);
          std::vector<uint8_t> expected(n + kGuard, 0xA5), y(n + kGuard, 0xA5);
          f.ref(n, a.data(), a_inc, b.data(), b_inc, expected.data());
          k->fn(n, a.data(), a_inc, b.data(), b_inc, y.data());
          ASSERT_EQ(y, expected) << k->name << " n " << n << " incs " << a_inc << b_inc;
          for (size_t j = 0; j < n; ++j) trues += y[j];
          ++cases;
        }
  // Both answers are common (on a CPU whose levels a lesser CPU's run tested, none ran here).
  if (cases > 0) {
    EXPECT_GT(trues, cases);
  }
  ::testing::Test::RecordProperty("cases", cases);
}

TEST(F32ClassifyUkernel, IsNaNAndIsInfEqualTheReferenceForEveryDetectSetting) {
  std::mt19937 rng(73);
  int cases = 0;
  for (bool inf : {false, true})
    for (auto* k : runnable(inf ? kF32IsInfUkernels : kF32IsNaNUkernels))
      for (size_t n = 0; n <= 70; ++n)
        for (int flags = 0; flags < 4; ++flags) {
          const bool negative = flags & 1, positive = flags & 2;
          const auto x = adversarial(rng, n);
          std::vector<uint8_t> expected(n + kGuard, 0xA5), y(n + kGuard, 0xA5);
          (inf ? f32_isinf__ref : f32_isnan__ref)(n, x.data(), expected.data(), negative, positive);
          k->fn(n, x.data(), y.data(), negative, positive);
          ASSERT_EQ(y, expected) << k->name << " n " << n << " flags " << flags;
          ++cases;
        }
  ::testing::Test::RecordProperty("cases", cases);
}

TEST(F32SignUkernel, EqualsTheReferenceBitForBit) {
  std::mt19937 rng(79);
  int cases = 0;
  for (auto* k : runnable(kF32SignUkernels))
    for (size_t n = 0; n <= 70; ++n) {
      const auto x = adversarial(rng, n);
      std::vector<float> expected(n + kGuard, 3.25f), y(n + kGuard, 3.25f);
      f32_sign__ref(n, x.data(), expected.data());
      k->fn(n, x.data(), y.data());
      expect_same_bits(y, expected, std::string(k->name) + " n " + std::to_string(n));
      ++cases;
    }
  ::testing::Test::RecordProperty("cases", cases);
}

TEST(F32ShrinkUkernel, EqualsTheReferenceBitForBitAtAndAroundTheThresholds) {
  std::mt19937 rng(83);
  int cases = 0;
  for (auto* k : runnable(kF32ShrinkUkernels))
    for (auto [lambd, bias] : {std::pair{0.5f, 0.0f}, std::pair{0.5f, 0.5f}, std::pair{0.0f, -0.25f},
                               std::pair{1.25f, 2.0f}, std::pair{INFINITY, 1.0f}})
      for (size_t n = 0; n <= 70; ++n) {
        auto x = adversarial(rng, n);
        for (size_t j = 0; j < n; j += 5) x[j] = (rng() % 2 ? 1 : -1) * lambd;  // exactly +-lambd: 0
        std::vector<float> expected(n + kGuard, 3.25f), y(n + kGuard, 3.25f);
        f32_shrink__ref(n, x.data(), expected.data(), lambd, bias);
        k->fn(n, x.data(), y.data(), lambd, bias);
        expect_same_bits(y, expected, std::string(k->name) + " n " + std::to_string(n) + " lambd " + std::to_string(lambd));
        ++cases;
      }
  ::testing::Test::RecordProperty("cases", cases);
}

// Operands of very different magnitudes, so that another order of the adds rounds differently.
TEST(F32SumUkernel, AddsLeftToRightAndScalesLikeTheReference) {
  std::mt19937 rng(89);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int cases = 0;
  for (auto* k : runnable(kF32SumUkernels))
    for (size_t count = 1; count <= 5; ++count)
      for (size_t n = 0; n <= 70; ++n)
        for (bool mean : {false, true}) {
          std::vector<std::vector<float>> data(count);
          std::vector<const float*> x(count);
          std::vector<size_t> inc(count);
          for (size_t i = 0; i < count; ++i) {
            inc[i] = i == 0 || rng() % 3 != 0;
            data[i].resize(std::max<size_t>(n, 1));
            const float magnitude = std::ldexp(1.0f, int(rng() % 40) - 20);
            for (float& v : data[i]) v = u(rng) * magnitude;
            if (n > 0 && rng() % 2) data[i][rng() % n] = rng() % 2 ? std::nanf("") : INFINITY;
            if (n > 0) data[i][rng() % n] = -0.0f;
            x[i] = data[i].data();
          }
          const float scale = mean ? 1.0f / float(count) : 1.0f;
          std::vector<float> expected(n + kGuard, 3.25f), y(n + kGuard, 3.25f);
          f32_sum__ref(n, count, x.data(), inc.data(), expected.data(), scale);
          k->fn(n, count, x.data(), inc.data(), y.data(), scale);
          expect_same_bits(y, expected, std::string(k->name) + " count " + std::to_string(count) + " n " + std::to_string(n));
          ++cases;
        }
  ::testing::Test::RecordProperty("cases", cases);
}

// Max / Min: the adversarial values (NaN of two payloads, +-inf, +-0, many equal operands) in
// every operand, 1 to 5 operands each a run or one repeated element; the NaN that wins and the
// zero's sign must match bit for bit.
TEST(F32ExtremumUkernel, PicksLikeTheReferenceWithNaNAndSignedZeros) {
  std::mt19937 rng(97);
  int cases = 0;
  for (bool min : {false, true})
    for (auto* k : runnable(min ? kF32MinUkernels : kF32MaxUkernels))
      for (size_t count = 1; count <= 5; ++count)
        for (size_t n = 0; n <= 70; ++n)
          for (int rep = 0; rep < 2; ++rep) {
            std::vector<std::vector<float>> data(count);
            std::vector<const float*> x(count);
            std::vector<size_t> inc(count);
            for (size_t i = 0; i < count; ++i) {
              inc[i] = rep == 0 ? 1 : rng() % 3 != 0;
              data[i] = adversarial(rng, n);
              x[i] = data[i].data();
            }
            std::vector<float> expected(n + kGuard, 3.25f), y(n + kGuard, 3.25f);
            (min ? f32_min__ref : f32_max__ref)(n, count, x.data(), inc.data(), expected.data());
            k->fn(n, count, x.data(), inc.data(), y.data());
            expect_same_bits(y, expected, std::string(k->name) + " count " + std::to_string(count) + " n " + std::to_string(n));
            ++cases;
          }
  ::testing::Test::RecordProperty("cases", cases);
}

// The reference's picks themselves: ONNX Runtime's (Eigen's max / min<PropagateNaN> packets).
TEST(F32ExtremumUkernel, ReferencePicksTheFirstNaNAndTheLaterOfEqualOperands) {
  const float nan_a = std::nanf("1"), nan_b = -std::nanf("2");
  EXPECT_EQ(std::bit_cast<uint32_t>(f32_pick__ref(false, nan_a, nan_b)), std::bit_cast<uint32_t>(nan_a));
  EXPECT_EQ(std::bit_cast<uint32_t>(f32_pick__ref(true, 1.0f, nan_b)), std::bit_cast<uint32_t>(nan_b));
  EXPECT_TRUE(std::signbit(f32_pick__ref(false, 0.0f, -0.0f)));
  EXPECT_FALSE(std::signbit(f32_pick__ref(true, -0.0f, 0.0f)));
  EXPECT_EQ(f32_pick__ref(false, -INFINITY, 2.0f), 2.0f);
  EXPECT_EQ(f32_pick__ref(true, -INFINITY, 2.0f), -INFINITY);
}

// Every templated level has a row in each table, named <op>__<level>, best first.
TEST(CompareLists, EveryLevelHasEachKernel) {
  std::vector<std::string> levels;
#define OCTET_LEVEL_NAME(isa, unused) levels.push_back(#isa);
  OCTET_TEMPLATE_LEVELS(OCTET_LEVEL_NAME, )
#undef OCTET_LEVEL_NAME
  auto check = [&](auto list, const std::string& op) {
    ASSERT_EQ(list.size(), levels.size()) << op;
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].name, op + "__" + levels[i]);
      EXPECT_EQ(isa_name(list[i].isa), levels[i]);
      EXPECT_NE(list[i].fn, nullptr);
    }
  };
  check(kF32EqualUkernels, "f32_equal");
  check(kF32GreaterUkernels, "f32_greater");
  check(kF32GreaterEqualUkernels, "f32_greater_equal");
  check(kF32IsNaNUkernels, "f32_isnan");
  check(kF32IsInfUkernels, "f32_isinf");
  check(kF32SignUkernels, "f32_sign");
  check(kF32ShrinkUkernels, "f32_shrink");
  check(kF32SumUkernels, "f32_sum");
  check(kF32MaxUkernels, "f32_max");
  check(kF32MinUkernels, "f32_min");
}

}  // namespace compare_tests
}  // namespace octet::kernels
