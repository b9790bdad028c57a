// F32BatchedGemm (MatMul whose B is an activation: B packed at each run) against f32_gemm__ref,
// at every level this CPU runs, on sizes around the tiles (1 .. 2·tile + 1, primes), n = 1 (the
// global-context pooling's [C, HW] x [HW, 1]) and two runs with different B through one driver
// (the packing is redone per run, not kept from the first).
#include <gtest/gtest.h>

#include <pthreadpool.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/f32_batched_gemm.h"
#include "kernels/ref/gemm.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace batched_gemm_test {

using testing::absolute;
using testing::fill_uniform;

// |y - ref| <= 1e-5 · Σ|a·b| + 1e-6, the bound from a ref run on absolute values.
void expect_matches_ref(Isa isa, int m, int k, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> a(size_t(m) * size_t(k)), b1(size_t(k) * size_t(n)), b2(b1.size());
  fill_uniform(rng, a);
  fill_uniform(rng, b1);
  fill_uniform(rng, b2);
  F32BatchedGemm gemm(m, k, n, isa);
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  for (const std::vector<float>* b : {&b1, &b2}) {
    std::vector<float> y(size_t(m) * size_t(n), NAN), ref(y.size()), bound(y.size());
    gemm.run(a.data(), b->data(), y.data(), nullptr);
    f32_gemm__ref(s, 1.0f, a.data(), b->data(), 0.0f, nullptr, 0, 0, {}, ref.data());
    const auto aa = absolute(a), ab = absolute(*b);
    f32_gemm__ref(s, 1.0f, aa.data(), ab.data(), 0.0f, nullptr, 0, 0, {}, bound.data());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_LE(std::fabs(y[i] - ref[i]), 1e-5f * bound[i] + 1e-6f)
          << gemm.kernel_id().name << " m=" << m << " k=" << k << " n=" << n << " at " << i << ": " << y[i] << " vs " << ref[i];
  }
}

TEST(F32BatchedGemm, MatchesTheRefAroundTheTiles) {
  size_t ran = 0;
  for (Isa isa : testing::isas_under_test()) {
    if (isa == Isa::scalar) continue;
    uint32_t seed = 1;
    for (int m : {1, 2, 5, 6, 7, 13, 17})
      for (int n : {1, 3, 8, 16, 17, 33})
        for (int k : {1, 7, 64, 97}) expect_matches_ref(isa, m, k, n, seed++);
    expect_matches_ref(isa, 64, 3136, 1, seed++);  // gcresnext26ts's first attention pooling
    std::printf("F32BatchedGemm at %s: %s\n", isa_name(isa), F32BatchedGemm(6, 8, 16, isa).kernel_id().name.c_str());
    ++ran;
  }
  testing::skip_when_none_run(ran, "F32BatchedGemm");
}

// Gemm with B an input: B transposed or not, alpha folded into the packing, a bias row, a
// residual [m][n] (beta · C) and an activation after it; against the ref with C = bias + residual.
void expect_gemm_matches_ref(Isa isa, int m, int k, int n, bool trans_b, float alpha, bool bias, bool residual,
                             const Activation& act, uint32_t seed, pthreadpool_t pool) {
  std::mt19937 rng(seed);
  std::vector<float> a(size_t(m) * size_t(k)), b(size_t(k) * size_t(n)), r(size_t(m) * size_t(n));
  std::vector<float> row(static_cast<size_t>(n));
  fill_uniform(rng, a);
  fill_uniform(rng, b);
  fill_uniform(rng, row);
  fill_uniform(rng, r);
  std::vector<float> c(r.size(), 0.0f), ac(r.size(), 0.0f);
  for (size_t i = 0; i < c.size(); ++i) {
    c[i] = (bias ? row[i % size_t(n)] : 0.0f) + (residual ? r[i] : 0.0f);
    ac[i] = (bias ? std::fabs(row[i % size_t(n)]) : 0.0f) + (residual ? std::fabs(r[i]) : 0.0f);
  }
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.trans_b = trans_b;
  std::vector<float> y(size_t(m) * size_t(n), NAN), ref(y.size()), bound(y.size());
  f32_gemm__ref(s, alpha, a.data(), b.data(), 1.0f, c.data(), n, 1, act, ref.data());
  const auto aa = absolute(a), ab = absolute(b);
  f32_gemm__ref(s, std::fabs(alpha), aa.data(), ab.data(), 1.0f, ac.data(), n, 1, {}, bound.data());
  F32BatchedGemm gemm(m, k, n, isa, trans_b, act);
  gemm.run(a.data(), b.data(), y.data(), pool, {alpha, bias ? row.data() : nullptr, residual ? r.data() : nullptr});
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_LE(std::fabs(y[i] - ref[i]), 1e-5f * bound[i] + 1e-6f)
        << gemm.kernel_id().name << " m=" << m << " k=" << k << " n=" << n << (trans_b ? " trans_b" : "")
        << " alpha=" << alpha << (bias ? " bias" : "") << (residual ? " residual" : "") << " act "
        << int(act.kind) << " at " << i << ": " << y[i] << " vs " << ref[i];
}

TEST(F32BatchedGemm, GemmAddendsTransposedBAndActivations) {
  size_t ran = 0;
  testing::Pool pool(pthreadpool_create(2));
  const Activation acts[] = {Activation{}, Activation::relu(), Activation::clip(-0.25f, 0.5f), Activation::sigmoid()};
  for (Isa isa : testing::isas_under_test()) {
    if (isa == Isa::scalar) continue;
    std::mt19937 rng(21);
    for (uint32_t i = 0; i < 300; ++i) {
      const int m = 1 + int(rng() % 20), k = 1 + int(rng() % 70), n = 1 + int(rng() % 40);
      const float alphas[] = {1.0f, 0.5f, -2.5f};
      expect_gemm_matches_ref(isa, m, k, n, rng() % 2, alphas[rng() % 3], rng() % 2, rng() % 2, acts[rng() % 4], i,
                              i % 2 ? pool.get() : nullptr);
      if (HasFatalFailure()) return;
    }
    ++ran;
  }
  testing::skip_when_none_run(ran, "F32BatchedGemm");
}

TEST(F32BatchedGemm, ScalarLevelIsUnsupported) {
  EXPECT_THROW(F32BatchedGemm(4, 4, 4, Isa::scalar), std::invalid_argument);
}

}  // namespace batched_gemm_test
}  // namespace octet::kernels
