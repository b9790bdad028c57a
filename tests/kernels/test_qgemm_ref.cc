// Quantized GEMM references: MatMulInteger, QLinearMatMul and the QGemm-style fully
// connected layer, on ONNX node tests, hand values and adversarial accumulator ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tests/kernels/int_vectors.h"
#include "kernels/ref/qgemm.h"

namespace octet::kernels {
namespace {

GemmShape mnk(int m, int n, int k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

TEST(QGemmRef, OnnxNodeTestMatMulInteger) {
  // test_matmulinteger: A uint8 [4, 3] with zero point 12, B uint8 [3, 2] with zero point 0.
  const uint8_t a[] = {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0};
  const uint8_t b[] = {1, 4, 2, 5, 3, 6};
  const int32_t a_zp[] = {12};
  const int32_t b_zp[] = {0};
  std::vector<int32_t> y(8);
  q8_gemm_int32__ref<uint8_t, uint8_t>(mnk(4, 2, 3), a, a_zp, b, b_zp, nullptr, 0, 0, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(QGemmRef, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // A [2, 2] with row zero points {1, 2}; B [2, 2] with column zero points {0, 10}.
  // A - za = {{1, 2}, {1, 2}}; B - zb = {{1, -8}, {2, -6}}.
  const int8_t a[] = {2, 3, 3, 4};
  const int8_t b[] = {1, 2, 2, 4};
  const int32_t a_zp[] = {1, 2};
  const int32_t b_zp[] = {0, 10};
  std::vector<int32_t> y(4);
  q8_gemm_int32__ref<int8_t, int8_t>(mnk(2, 2, 2), a, a_zp, b, b_zp, nullptr, 0, 0, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{5, -20, 5, -20}));
  const int32_t wrong[] = {1, 2, 3};
  EXPECT_THROW((q8_gemm_int32__ref<int8_t, int8_t>(mnk(2, 2, 2), a, wrong, b, b_zp, nullptr, 0, 0,
                                                   y.data())),
               std::invalid_argument);
}

TEST(QGemmRef, OnnxNodeTestQLinearMatMul2D) {
  // test_qlinearmatmul_2D (and each batch of test_qlinearmatmul_3D).
  const uint8_t a[] = {208, 236, 0, 238, 3, 214, 255, 29};
  const uint8_t b[] = {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247};
  const float a_scale[] = {0.00659999996f};
  const float b_scale[] = {0.00705000013f};
  const int32_t a_zp[] = {113};
  const int32_t b_zp[] = {114};
  std::vector<uint8_t> y(6);
  q8_qlinear_matmul__ref<uint8_t, uint8_t, uint8_t>(mnk(2, 3, 4), a, a_scale, a_zp, b, b_scale,
                                                    b_zp, 0.0107000005f, 118, y.data());
  EXPECT_EQ(ints(y), (Ints{168, 115, 255, 1, 66, 151}));
}

TEST(QGemmRef, QLinearMatMulPerRowAndPerColumnScales) {
  // acc = A (B is the identity); m[i][j] = a_scale[i] * b_scale[j] / y_scale
  // = {{1, 2}, {0.5, 1}}: y = {1 * 1, 2 * 2, 3 * 0.5 = 1.5 -> 2, 4 * 1}.
  const int8_t a[] = {1, 2, 3, 4};
  const int8_t b[] = {1, 0, 0, 1};
  const float a_scale[] = {1.0f, 0.5f};
  const float b_scale[] = {1.0f, 2.0f};
  const int32_t zp[] = {0};
  std::vector<int8_t> y(4);
  q8_qlinear_matmul__ref<int8_t, int8_t, int8_t>(mnk(2, 2, 2), a, a_scale, zp, b, b_scale, zp, 1.0f,
                                                 0, y.data());
  EXPECT_EQ(ints(y), (Ints{1, 4, 2, 4}));
}

// The QGemm fully connected case worked by hand. Real activations {{1, -1, 2}, {0, 3, -2}}
// (scale 0.5, zp 128); real weights stored [n][k] (trans_b): {1, 1, 1} with scale 0.25 and
// {2, 0, -1} with scale 0.125; real bias {0.5, -1} -> int32 {4, -16}.
// Accumulators (bias included): {{20, -16}, {12, 16}}; real outputs {{2.5, -1}, {1.5, 1}}.
struct FcCase {
  GemmShape s = [] {
    GemmShape g;
    g.m = 2;
    g.n = 2;
    g.k = 3;
    g.trans_b = true;
    return g;
  }();
  uint8_t a[6] = {130, 126, 132, 128, 134, 124};
  int8_t w[6] = {4, 4, 4, 16, 0, -8};
  float w_scale[2] = {0.25f, 0.125f};
  int32_t w_zp[1] = {0};
  int32_t bias[2] = {4, -16};
};

TEST(QGemmRef, FullyConnectedWithBiasAndPerChannelScales) {
  FcCase f;
  std::vector<int32_t> acc(4);
  const int32_t a_zp[] = {128};
  q8_gemm_int32__ref<uint8_t, int8_t>(f.s, f.a, a_zp, f.w, f.w_zp, f.bias, 0, 1, acc.data());
  EXPECT_EQ(acc, (std::vector<int32_t>{20, -16, 12, 16}));

  // y scale 0.5, zp 128: {2.5, -1, 1.5, 1} / 0.5 = {5, -2, 3, 2} -> {133, 126, 131, 130}.
  float m[2];
  for (int j = 0; j < 2; ++j) m[j] = requant_multiplier(0.5f, f.w_scale[j], 0.5f);
  std::vector<uint8_t> y(4);
  q8_gemm__ref<uint8_t, int8_t, uint8_t>(f.s, f.a, 128, f.w, f.w_zp, f.bias, 0, 1,
                                         full_range_requantization<uint8_t>(m, 128), y.data());
  EXPECT_EQ(ints(y), (Ints{133, 126, 131, 130}));

  // y scale 1: 2.5 -> 2 and 1.5 -> 2 (ties to even) -> {130, 127, 130, 129}.
  for (int j = 0; j < 2; ++j) m[j] = requant_multiplier(0.5f, f.w_scale[j], 1.0f);
  q8_gemm__ref<uint8_t, int8_t, uint8_t>(f.s, f.a, 128, f.w, f.w_zp, f.bias, 0, 1,
                                         full_range_requantization<uint8_t>(m, 128), y.data());
  EXPECT_EQ(ints(y), (Ints{130, 127, 130, 129}));

  // int8 output with zp 0 and a folded ReLU: -1 -> 0.
  Requantization rq = full_range_requantization<int8_t>(m, 0);
  output_range<int8_t>(0.0f, std::numeric_limits<float>::infinity(), {1.0f, 0}, &rq.qmin, &rq.qmax);
  std::vector<int8_t> ys(4);
  q8_gemm__ref<uint8_t, int8_t, int8_t>(f.s, f.a, 128, f.w, f.w_zp, f.bias, 0, 1, rq, ys.data());
  EXPECT_EQ(ints(ys), (Ints{2, 0, 2, 1}));
}

TEST(QGemmRef, BiasBroadcastsThroughStrides) {
  // C as a scalar (strides 0, 0), per row (1, 0) and full (n, 1).
  const int8_t a[] = {1, 2};
  const int8_t b[] = {1, 1};
  const int32_t zp[] = {0};
  std::vector<int32_t> y(4);
  GemmShape s = mnk(2, 2, 1);
  const int32_t scalar[] = {100};
  q8_gemm_int32__ref<int8_t, int8_t>(s, a, zp, b, zp, scalar, 0, 0, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{101, 101, 102, 102}));
  const int32_t per_row[] = {10, 20};
  q8_gemm_int32__ref<int8_t, int8_t>(s, a, zp, b, zp, per_row, 1, 0, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{11, 11, 22, 22}));
  const int32_t full[] = {1, 2, 3, 4};
  q8_gemm_int32__ref<int8_t, int8_t>(s, a, zp, b, zp, full, 2, 1, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{2, 3, 5, 6}));
}

TEST(QGemmRef, TransposedAAndRowStrides) {
  // A stored [k][m] with a padded row stride; B [k][n] with a padded row stride.
  GemmShape s = mnk(2, 2, 3);
  s.trans_a = true;
  s.lda = 3;  // rows of length m = 2 plus one pad element
  s.ldb = 4;
  const uint8_t a[] = {1, 4, 99, 2, 5, 99, 3, 6, 99};             // A = {{1, 2, 3}, {4, 5, 6}}
  const int8_t b[] = {1, 0, 77, 77, 0, 1, 77, 77, 1, 1, 77, 77};  // B = {{1, 0}, {0, 1}, {1, 1}}
  const int32_t zp[] = {0};
  std::vector<int32_t> y(4);
  q8_gemm_int32__ref<uint8_t, int8_t>(s, a, zp, b, zp, nullptr, 0, 0, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{4, 5, 10, 11}));
}

TEST(QGemmRef, AllMaxActivationsTimesExtremeWeightsOverK4096) {
  const int k = 4096;
  const std::vector<uint8_t> a(k, 255);
  std::vector<int8_t> b(static_cast<size_t>(k) * 3);
  for (int p = 0; p < k; ++p) {
    b[p * 3 + 0] = 127;
    b[p * 3 + 1] = -127;
    b[p * 3 + 2] = -128;
  }
  const int32_t a_zp[] = {0};
  const int32_t b_zp[] = {0, 0, 127};  // column 2: -128 - 127 = -255 per term
  std::vector<int32_t> y(3);
  q8_gemm_int32__ref<uint8_t, int8_t>(mnk(1, 3, k), a.data(), a_zp, b.data(), b_zp, nullptr, 0, 0,
                                      y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{132648960, -132648960, -266342400}));
}

TEST(QGemmRef, AccumulatorBoundIsK33025AndBeyondItWrapsLikeInt32) {
  // Every term is at most 255 * 255 = 65025 in magnitude (u8 with zp 0 against int8 -128
  // with zp 127, or u8 against u8 with zp 0 / 255). floor((2^31 - 1) / 65025) = 33025.
  const int64_t term = -65025;
  for (int k : {33025, 33026}) {
    const std::vector<uint8_t> a(k, 255);
    const std::vector<int8_t> b(k, -128);
    const int32_t a_zp[] = {0};
    const int32_t b_zp[] = {127};
    int32_t y = 0;
    q8_gemm_int32__ref<uint8_t, int8_t>(mnk(1, 1, k), a.data(), a_zp, b.data(), b_zp, nullptr, 0, 0,
                                        &y);
    const int64_t exact = term * k;
    if (exact >= std::numeric_limits<int32_t>::min()) {
      EXPECT_EQ(y, exact) << "k " << k;  // -2,147,450,625 still fits
    } else {
      EXPECT_EQ(y, static_cast<int32_t>(exact + (int64_t{1} << 32))) << "k " << k;  // wrapped
    }
  }
}

}  // namespace
}  // namespace octet::kernels
