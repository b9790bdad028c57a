#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernels/ref/gemm.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;
using testing::random_floats;

// A = [[1,2,3],[4,5,6]], B = [[7,8],[9,10],[11,12]], A*B = [[58,64],[139,154]].
const std::vector<float> kA = {1, 2, 3, 4, 5, 6};
const std::vector<float> kAt = {1, 4, 2, 5, 3, 6};
const std::vector<float> kB = {7, 8, 9, 10, 11, 12};
const std::vector<float> kBt = {7, 9, 11, 8, 10, 12};

std::vector<float> gemm(const GemmShape& s, float alpha, const float* a, const float* b,
                        float beta = 0.0f, const float* c = nullptr, int64_t c_sm = 0,
                        int64_t c_sn = 0, Activation act = {}) {
  std::vector<float> y(static_cast<size_t>(s.m) * s.n, -999.0f);
  f32_gemm__ref(s, alpha, a, b, beta, c, c_sm, c_sn, act, y.data());
  return y;
}

GemmShape shape_2x2x3(bool trans_a, bool trans_b) {
  GemmShape s;
  s.m = 2;
  s.n = 2;
  s.k = 3;
  s.trans_a = trans_a;
  s.trans_b = trans_b;
  return s;
}

TEST(GemmRef, AllTransposeCombinations) {
  const std::vector<float> want = {58, 64, 139, 154};
  EXPECT_TRUE(all_near(gemm(shape_2x2x3(false, false), 1, kA.data(), kB.data()), want));
  EXPECT_TRUE(all_near(gemm(shape_2x2x3(true, false), 1, kAt.data(), kB.data()), want));
  EXPECT_TRUE(all_near(gemm(shape_2x2x3(false, true), 1, kA.data(), kBt.data()), want));
  EXPECT_TRUE(all_near(gemm(shape_2x2x3(true, true), 1, kAt.data(), kBt.data()), want));
}

TEST(GemmRef, CBroadcastThroughZeroStrides) {
  const GemmShape s = shape_2x2x3(true, true);
  const float row[] = {10, 20};    // [n], broadcast along m
  const float col[] = {100, 200};  // [m], broadcast along n
  const float scalar[] = {4};
  const float full[] = {1, 2, 3, 4};
  EXPECT_TRUE(all_near(gemm(s, 2, kAt.data(), kBt.data(), 0.5f, row, 0, 1), {121, 138, 283, 318}));
  EXPECT_TRUE(all_near(gemm(s, 2, kAt.data(), kBt.data(), 0.5f, col, 1, 0), {166, 178, 378, 408}));
  EXPECT_TRUE(all_near(gemm(s, 2, kAt.data(), kBt.data(), 0.5f, scalar, 0, 0), {118, 130, 280, 310}));
  EXPECT_TRUE(all_near(gemm(s, 1, kAt.data(), kBt.data(), -1.0f, full, 2, 1), {57, 62, 136, 150}));
  // A transposed C, read through swapped strides.
  EXPECT_TRUE(all_near(gemm(s, 1, kAt.data(), kBt.data(), -1.0f, full, 1, 2), {57, 61, 137, 150}));
}

TEST(GemmRef, LeadingDimensionsSkipPadding) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // A [2][3] stored with lda 5, B [3][2] with ldb 4; the padding is NaN and must not be read.
  const std::vector<float> a = {1, 2, 3, nan, nan, 4, 5, 6, nan, nan};
  const std::vector<float> b = {7, 8, nan, nan, 9, 10, nan, nan, 11, 12, nan, nan};
  GemmShape s = shape_2x2x3(false, false);
  s.lda = 5;
  s.ldb = 4;
  EXPECT_TRUE(all_near(gemm(s, 1, a.data(), b.data()), {58, 64, 139, 154}));

  // Transposed: A^T [3][2] with lda 3, B^T [2][3] with ldb 4.
  const std::vector<float> at = {1, 4, nan, 2, 5, nan, 3, 6, nan};
  const std::vector<float> bt = {7, 9, 11, nan, 8, 10, 12, nan};
  s = shape_2x2x3(true, true);
  s.lda = 3;
  s.ldb = 4;
  EXPECT_TRUE(all_near(gemm(s, 1, at.data(), bt.data()), {58, 64, 139, 154}));
}

TEST(GemmRef, ActivationAfterAlphaAndBeta) {
  GemmShape s;
  s.m = 1;
  s.n = 2;
  s.k = 2;
  const float a[] = {1, -2};
  const float b[] = {3, 1, 4, 1};  // [k][n]: column 0 gives -5, column 1 gives -1
  const float c[] = {2};
  // -5 + 2 = -3 -> 0; -1 + 2 = 1.
  EXPECT_TRUE(all_near(gemm(s, 1, a, b, 1, c, 0, 0, Activation::relu()), {0, 1}));
  // alpha = -1: 5 + 2 = 7 -> clip 6; 1 + 2 = 3.
  EXPECT_TRUE(all_near(gemm(s, -1, a, b, 1, c, 0, 0, Activation::clip(0, 6)), {6, 3}));
}

TEST(GemmRef, EmptyKGivesBetaC) {
  GemmShape s;
  s.m = 2;
  s.n = 2;
  s.k = 0;
  const float c[] = {3};
  EXPECT_TRUE(all_near(gemm(s, 1, nullptr, nullptr, 2, c, 0, 0), {6, 6, 6, 6}));
}

TEST(GemmRef, AccumulatesInDouble) {
  GemmShape s;
  s.m = 1;
  s.n = 1;
  s.k = 3;
  const float a[] = {1e8f, 1, -1e8f};
  const float b[] = {1, 1, 1};
  // Float accumulation in this order gives 0.
  EXPECT_TRUE(all_near(gemm(s, 1, a, b), {1}));
}

TEST(GemmRef, RandomTransposesAgreeWithExplicitTranspose) {
  for (int m : {1, 3, 7}) {
    for (int n : {1, 5, 16}) {
      for (int k : {1, 4, 13}) {
        const auto a = random_floats(static_cast<size_t>(m) * k, 10 + m);
        const auto b = random_floats(static_cast<size_t>(k) * n, 20 + n);
        const auto c = random_floats(n, 30 + k);
        std::vector<float> at(a.size()), bt(b.size());
        for (int i = 0; i < m; ++i)
          for (int p = 0; p < k; ++p) at[p * m + i] = a[i * k + p];
        for (int p = 0; p < k; ++p)
          for (int j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
        // One element from an independent dot product, so the baseline itself is checked.
        GemmShape s;
        s.m = m;
        s.n = n;
        s.k = k;
        const auto want = gemm(s, 0.75f, a.data(), b.data(), 1.5f, c.data(), 0, 1);
        double y00 = 0;
        for (int p = 0; p < k; ++p) y00 += static_cast<double>(a[p]) * b[p * n];
        EXPECT_FLOAT_EQ(want[0], static_cast<float>(0.75 * y00 + 1.5 * c[0]));
        for (bool ta : {false, true}) {
          for (bool tb : {false, true}) {
            s.trans_a = ta;
            s.trans_b = tb;
            const auto got = gemm(s, 0.75f, ta ? at.data() : a.data(), tb ? bt.data() : b.data(),
                                  1.5f, c.data(), 0, 1);
            EXPECT_TRUE(all_near(got, want)) << "m=" << m << " n=" << n << " k=" << k
                                             << " trans_a=" << ta << " trans_b=" << tb;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet::kernels
