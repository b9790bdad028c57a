// Q8Gemm (QGemm / QLinearMatMul with constant B on the INT8 microkernels of
// kernels/gemm/q8_gemm_list.h) against q8_gemm__ref: bit-exact, for every microkernel this CPU runs.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/q8_gemm.h"
#include "kernels/gemm/q8_weight_chunks.h"
#include "kernels/ref/qgemm.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Fill;

std::map<std::string, int>& q8_gemm_kernels_ran() {
  static std::map<std::string, int> counts;
  return counts;
}

class Q8GemmTester {
 public:
  Q8GemmTester& m(int v) {
    m_ = v;
    return *this;
  }
  Q8GemmTester& n(int v) {
    n_ = v;
    return *this;
  }
  Q8GemmTester& k(int v) {
    k_ = v;
    return *this;
  }
  Q8GemmTester& trans_b(bool v) {
    trans_b_ = v;
    return *this;
  }
  Q8GemmTester& a_type(Q8 t) {
    a_type_ = t;
    return *this;
  }
  Q8GemmTester& y_type(Q8 t) {
    y_type_ = t;
    return *this;
  }
  Q8GemmTester& a_zero_point(int32_t zp) {
    a_zero_point_ = zp;
    return *this;
  }
  Q8GemmTester& y_zero_point(int32_t zp) {
    y_zero_point_ = zp;
    return *this;
  }
  Q8GemmTester& fill(Fill f) {
    fill_ = f;
    return *this;
  }
  Q8GemmTester& per_channel(bool v) {
    per_channel_ = v;
    return *this;
  }
  Q8GemmTester& power_of_two_multipliers(bool v) {
    pow2_ = v;
    return *this;
  }
  Q8GemmTester& bias(bool v) {
    bias_ = v;
    return *this;
  }
  Q8GemmTester& narrow_clamp(bool v) {
    narrow_ = v;
    return *this;
  }
  Q8GemmTester& pool(pthreadpool_t p) {
    pool_ = p;
    return *this;
  }

  void test(std::mt19937& rng, const std::vector<const Q8GemmKernel*>& kernels) const {
    GemmShape s;
    s.m = m_;
    s.n = n_;
    s.k = k_;
    s.trans_b = trans_b_;
    const size_t y_size = static_cast<size_t>(m_) * n_;
    std::vector<uint8_t> a = testing::random_activations(rng, static_cast<size_t>(m_) * k_, a_type_,
                                                         a_zero_point_, fill_);
    std::vector<int8_t> b = testing::random_weights(rng, static_cast<size_t>(k_) * n_, fill_);
    if (fill_ == Fill::extreme)
      testing::make_channels_one_signed(b, static_cast<size_t>(n_), trans_b_);
    std::vector<int32_t> bias_values =
        bias_ ? testing::random_bias(rng, static_cast<size_t>(n_)) : std::vector<int32_t>();
    const int32_t* bias = bias_ ? bias_values.data() : nullptr;
    const int32_t b_zero_point[] = {0};
    const int32_t a_zp[] = {a_zero_point_};

    std::vector<int32_t> acc(y_size);
    testing::with_q8_types(a_type_, a_type_, [&](auto a_tag, auto) {
      using A = decltype(a_tag);
      q8_gemm_int32__ref<A, int8_t>(s, reinterpret_cast<const A*>(a.data()), a_zp, b.data(),
                                    b_zero_point, bias, 0, 1, acc.data());
    });
    const std::vector<float> multiplier =
        testing::fitted_multipliers(rng, acc, static_cast<size_t>(n_), per_channel_, pow2_);
    Requantization rq{multiplier, y_zero_point_, q8_min(y_type_), q8_max(y_type_)};
    if (narrow_) testing::narrow_clamp(rng, rq, y_type_);
    std::vector<uint8_t> expected(y_size);
    reference(s, a.data(), b.data(), bias, rq, expected.data());

    for (const Q8GemmKernel* kernel : kernels) {
      Q8Gemm gemm(k_, n_, a_type_, a_zero_point_, b.data(), trans_b_, bias, rq, y_type_, *kernel);
      std::vector<uint8_t> y(y_size + 1, 0x5A);  // one guard byte past the end
      gemm.run(m_, a.data(), y.data(), pool_);
      ASSERT_EQ(y[y_size], 0x5A) << gemm.kernel_name() << " wrote past the output";
      for (size_t i = 0; i < y_size; ++i) {
        ASSERT_EQ(static_cast<int>(y[i]), static_cast<int>(expected[i]))
            << gemm.kernel_name() << " at row " << i / n_ << " column " << i % n_ << ", m " << m_
            << " n " << n_ << " k " << k_ << (trans_b_ ? " (B transposed)" : "") << ", a "
            << q8_name(a_type_) << " zp " << a_zero_point_ << ", y " << q8_name(y_type_) << " zp "
            << rq.zero_point << " clamp [" << rq.qmin << ", " << rq.qmax << "], acc " << acc[i]
            << " multiplier " << rq.multiplier_of(i % n_);
      }
      ++q8_gemm_kernels_ran()[gemm.kernel_name()];
    }
  }

 private:
  void reference(const GemmShape& s, const uint8_t* a, const int8_t* b, const int32_t* bias,
                 const Requantization& rq, uint8_t* y) const {
    const int32_t b_zero_point[] = {0};
    testing::with_q8_types(a_type_, y_type_, [&](auto a_tag, auto y_tag) {
      using A = decltype(a_tag);
      using Y = decltype(y_tag);
      q8_gemm__ref<A, int8_t, Y>(s, reinterpret_cast<const A*>(a), a_zero_point_, b, b_zero_point,
                                 bias, 0, 1, rq, reinterpret_cast<Y*>(y));
    });
  }

  int m_ = 1, n_ = 1, k_ = 1;
  bool trans_b_ = false;
  Q8 a_type_ = Q8::u8, y_type_ = Q8::u8;
  int32_t a_zero_point_ = 0, y_zero_point_ = 0;
  Fill fill_ = Fill::random;
  bool per_channel_ = true, pow2_ = false, bias_ = true, narrow_ = false;
  pthreadpool_t pool_ = nullptr;
};

TEST(Q8Gemm, RandomShapesEveryKernel) {
  std::mt19937 rng(1234);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int shapes = 0;
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(a_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int iter = 0; iter < 300; ++iter, ++shapes) {
      const Q8 y_type = uniform(0, 1) == 0 ? Q8::u8 : Q8::s8;
      Q8GemmTester()
          .m(uniform(1, iter % 10 == 0 ? 40 : 14))
          .n(uniform(1, iter % 10 == 1 ? 200 : 65))
          .k(uniform(1, iter % 10 == 2 ? 600 : 70))
          .trans_b(uniform(0, 1) == 1)
          .a_type(a_type)
          .y_type(y_type)
          .a_zero_point(testing::random_zero_point(rng, a_type))
          .y_zero_point(testing::random_zero_point(rng, y_type))
          .per_channel(uniform(0, 1) == 1)
          .power_of_two_multipliers(iter % 5 == 0)
          .bias(iter % 7 != 0)
          .narrow_clamp(iter % 4 == 0)
          .test(rng, kernels);
      if (HasFatalFailure()) return;
    }
  }
  for (const auto& [name, count] : q8_gemm_kernels_ran()) std::printf("ran %s on %d GEMMs\n", name.c_str(), count);
  RecordProperty("shapes", shapes);
}

// Extreme activations x +-127 weights with K up to 4096: int16 pair sums would saturate.
TEST(Q8Gemm, ExtremeValuesAndZeroPoints) {
  std::mt19937 rng(99);
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(a_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int32_t a_zp : testing::extreme_zero_points(a_type)) {
      for (int k : {1, 2, 3, 5, 64, 4096}) {
        for (Q8 y_type : {Q8::u8, Q8::s8}) {
          Q8GemmTester()
              .m(k == 4096 ? 3 : 13)
              .n(k == 4096 ? 17 : 33)
              .k(int(k))
              .trans_b(k % 2 == 1)
              .a_type(a_type)
              .y_type(y_type)
              .a_zero_point(a_zp)
              .y_zero_point(testing::extreme_zero_point(rng, y_type))
              .fill(Fill::extreme)
              .per_channel(k % 3 == 0)
              .test(rng, kernels);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(Q8Gemm, TwoThreadsMatchTheReference) {
  testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::mt19937 rng(5);
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(a_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    Q8GemmTester()
        .m(77)
        .n(130)
        .k(257)
        .a_type(a_type)
        .y_type(Q8::u8)
        .a_zero_point(testing::random_zero_point(rng, a_type))
        .y_zero_point(100)
        .pool(pool.get())
        .test(rng, kernels);
    if (HasFatalFailure()) return;
  }
}

// Packed weights past q8_weight_chunk_bytes() (kernels/gemm/q8_weight_chunks.h, a share of this
// CPU's L2) run chunk by chunk of column blocks; K x 230 with K chosen so the packing is about
// 1.2 budgets, so blocks split into chunks, the last block partial; one and two threads.
TEST(Q8Gemm, WeightsPastTheChunkBudget) {
  testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::mt19937 rng(6);
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(a_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (pthreadpool_t threads : {static_cast<pthreadpool_t>(nullptr), pool.get()}) {
      const size_t k = std::max<size_t>(64, octet::kernels::q8_weight_chunk_bytes() * 6 / 5 / 230);
      Q8GemmTester()
          .m(29)
          .n(230)
          .k(int(k))
          .a_type(a_type)
          .y_type(a_type)
          .a_zero_point(testing::random_zero_point(rng, a_type))
          .y_zero_point(testing::random_zero_point(rng, a_type))
          .pool(threads)
          .test(rng, kernels);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Q8Gemm, IsaChoiceDownToThePortableRow) {
  std::mt19937 rng(8);
  const int m = 5, n = 10, k = 64;
  std::vector<uint8_t> a = testing::random_activations(rng, m * k, Q8::s8, -3, Fill::random);
  std::vector<int8_t> b = testing::random_weights(rng, k * n, Fill::random);
  const float multiplier[] = {0.002f};
  const Requantization rq{multiplier, -7, -128, 127};
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.trans_b = true;
  std::vector<uint8_t> expected(m * n);
  const int32_t b_zero_point[] = {0};
  q8_gemm__ref<int8_t, int8_t, int8_t>(s, reinterpret_cast<const int8_t*>(a.data()), -3, b.data(),
                                       b_zero_point, nullptr, 0, 1, rq,
                                       reinterpret_cast<int8_t*>(expected.data()));
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    Q8Gemm gemm(k, n, Q8::s8, -3, b.data(), true, nullptr, rq, Q8::s8, isa);
    // Every level runs a row, the portable one at scalar: one driver path everywhere.
    EXPECT_LE(gemm.kernel().isa, isa) << gemm.kernel_name();
    EXPECT_EQ(gemm.kernel_id().scalar, isa == Isa::scalar) << gemm.kernel_name();
    if (isa == Isa::scalar) {
      EXPECT_TRUE(gemm.kernel_name().ends_with("__scalar")) << gemm.kernel_name();
    }
    std::printf("Isa %s -> %s\n", isa_name(isa), gemm.kernel_name().c_str());
    std::vector<uint8_t> y(expected.size());
    gemm.run(m, a.data(), y.data(), nullptr);
    EXPECT_EQ(y, expected) << gemm.kernel_name();
  }
}

}  // namespace
}  // namespace octet::kernels
