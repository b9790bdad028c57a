// Every activation of kernels/elementwise/activation_list.h, from its row alone: each of its vector kernels
// this CPU runs against the row's scalar formula (apply) on random values, sizes around the
// vector widths and adversarial values (NaN, +-inf, -0, huge, tiny, subnormal, the turning
// points of the formulas), held to the row's bound (bit for bit where it says 0, 0); then the
// unary driver at every level runs it on a SIMD kernel, in place, with the same answers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/elementwise.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::activation_list_tests {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> adversarial_values() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {0.0f,    -0.0f,   kInf,     -kInf,     nan,      -nan,     1e-30f,  -1e-30f,  1e-42f, -1e-42f,
          1e30f,   -1e30f,  3.4e38f,  -3.4e38f,  88.0f,    -88.0f,   89.0f,   -89.0f,   100.0f, -100.0f,
          -103.9f, -104.5f, 1e-7f,    -1e-7f,    0.5f,     -0.5f,    1.0f,    -1.0f,    2.0f,   -2.0f,
          3.0f,    -3.0f,   9.0f,     -9.0f,     15.0f,    -15.0f,   20.0f,   -20.0f,   20.5f,  -20.5f,
          40.0f,   -40.0f,  1.17e-38f, -1.17e-38f, 0.375f,  -0.375f,  6.0f,    -6.0f,
          // Round's ties and near-ties, up to the last float with a fraction (2^23 - 1/2).
          1.5f,    2.5f,    -2.5f,    0.49999997f, -0.49999997f, 8388607.5f, -8388607.5f, 8388608.0f};
}

// The row's bound: NaN where the formula gives NaN, the same infinity, else within rel |want| + abs
// (bit for bit when both are 0).
bool within(const ActivationRow& row, float got, float want) {
  if (std::isnan(want)) return std::isnan(got);
  if (row.rel == 0 && row.abs == 0) return std::memcmp(&got, &want, sizeof(float)) == 0;
  if (std::isinf(want)) return got == want;
  return std::fabs(double(got) - want) <= double(row.rel) * std::fabs(double(want)) + row.abs;
}

Activation defaults(const ActivationRow& row) { return Activation{row.kind, 0, 0, row.dflt[0], row.dflt[1]}; }

TEST(ActivationList, EveryRowHasAKernelPerLevelAndAnImportableName) {
  for (const ActivationRow& row : kActivationRows) {
    const auto list = f32_act_ukernels(row.kind);
    EXPECT_FALSE(list.empty()) << row.op;
    for (const auto& k : list) EXPECT_EQ(std::string(k.name).rfind(std::string(row.kernel) + "__", 0), 0u) << k.name;
    EXPECT_EQ(activation_row(row.op), &row);
    EXPECT_EQ(activation_row(row.kind), &row);
  }
}

TEST(ActivationList, EveryKernelMatchesItsFormulaOnRandomAndAdversarialValues) {
  std::mt19937 rng(33);
  const auto adv = adversarial_values();
  for (const ActivationRow& row : kActivationRows) {
    const Activation act = defaults(row);
    for (auto* k : testing::runnable_entries(f32_act_ukernels(row.kind))) {
      // Every adversarial value in every lane position, then random sizes and values.
      std::vector<float> x;
      for (size_t shift = 0; shift < 16; ++shift) {
        x.insert(x.end(), shift, 0.25f);
        x.insert(x.end(), adv.begin(), adv.end());
      }
      for (int trial = 0; trial < 120; ++trial) {
        if (trial > 0) {
          const size_t n = trial < 70 ? size_t(trial) : 1 + rng() % 300;
          const float scale = trial % 3 == 0 ? 30.0f : 6.0f;
          std::uniform_real_distribution<float> dist(-scale, scale);
          x.resize(n);
          for (float& v : x) v = rng() % 5 == 0 ? adv[rng() % adv.size()] : dist(rng);
        }
        const size_t n = x.size();
        std::vector<float> want(n), got(n, 123.0f);
        f32_unary__ref(act, int64_t(n), x.data(), want.data());
        k->fn(n, x.data(), got.data(), act.alpha, act.beta);
        for (size_t i = 0; i < n; ++i)
          ASSERT_TRUE(within(row, got[i], want[i]))
              << k->name << " n=" << n << " x=" << x[i] << " got " << got[i] << " want " << want[i];
      }
    }
  }
}

TEST(ActivationList, TheUnaryDriverRunsEveryRowOnASimdKernelInPlace) {
  std::mt19937 rng(34);
  for (Isa isa : testing::isas_under_test()) {
    for (const ActivationRow& row : kActivationRows) {
      const Activation act = defaults(row);
      const F32Unary unary(row.kind, isa);
      if (isa != Isa::scalar) {
        EXPECT_EQ(unary.kernel_name().rfind(std::string(row.kernel) + "__", 0), 0u) << unary.kernel_name();
      }
      const size_t n = 1000 + rng() % 100;
      std::vector<float> x(n), want(n);
      testing::fill_uniform(rng, x);
      for (float& v : x) v *= 9.0f;
      f32_unary__ref(act, int64_t(n), x.data(), want.data());
      unary.run(act, int64_t(n), x.data(), x.data(), nullptr);
      for (size_t i = 0; i < n; ++i)
        ASSERT_TRUE(within(row, x[i], want[i])) << unary.kernel_name() << " at " << i << ": " << x[i] << " vs " << want[i];
    }
  }
}

}  // namespace octet::kernels::activation_list_tests
