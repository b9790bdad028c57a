// Min / max reductions, broadcasting min / max and round-half-to-even, on hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/activation.h"
#include "kernels/ref/minmax.h"

namespace octet::kernels {
namespace {

const float kInf = std::numeric_limits<float>::infinity();

// x is [2, 3] row-major: {{3, -1, 7}, {-4, 2, 0}}.
const std::vector<float> kX = {3, -1, 7, -4, 2, 0};
const int64_t kDims[2] = {2, 3};
const int64_t kRowMajor[2] = {3, 1};

std::vector<float> reduce(Extremum kind, bool rows, bool cols, const int64_t* strides = kRowMajor,
                          const std::vector<float>& x = kX) {
  const bool reduced[2] = {rows, cols};
  std::vector<float> y((rows ? 1 : 2) * (cols ? 1 : 3), -999.0f);
  f32_reduce_extremum_strided__ref(kind, 2, kDims, reduced, x.data(), strides, y.data());
  return y;
}

TEST(MinMaxRef, Reductions) {
  EXPECT_EQ(reduce(Extremum::min, true, true), (std::vector<float>{-4}));
  EXPECT_EQ(reduce(Extremum::max, true, true), (std::vector<float>{7}));
  EXPECT_EQ(reduce(Extremum::min, true, false), (std::vector<float>{-4, -1, 0}));
  EXPECT_EQ(reduce(Extremum::max, false, true), (std::vector<float>{7, 2}));
  EXPECT_EQ(reduce(Extremum::max, false, false), kX);
}

TEST(MinMaxRef, ReductionReadsThroughStrides) {
  // The same logical [2, 3] tensor stored column-major: {3, -4, -1, 2, 7, 0}.
  const std::vector<float> col_major = {3, -4, -1, 2, 7, 0};
  const int64_t strides[2] = {1, 2};
  EXPECT_EQ(reduce(Extremum::max, false, true, strides, col_major), (std::vector<float>{7, 2}));
  EXPECT_EQ(reduce(Extremum::min, true, false, strides, col_major), (std::vector<float>{-4, -1, 0}));
}

TEST(MinMaxRef, EmptyReductionGivesTheIdentity) {
  const int64_t dims[2] = {2, 0};
  const int64_t strides[2] = {0, 1};
  const bool reduced[2] = {false, true};
  std::vector<float> y(2, 0.0f);
  f32_reduce_extremum_strided__ref(Extremum::min, 2, dims, reduced, nullptr, strides, y.data());
  EXPECT_EQ(y, (std::vector<float>{kInf, kInf}));
  f32_reduce_extremum_strided__ref(Extremum::max, 2, dims, reduced, nullptr, strides, y.data());
  EXPECT_EQ(y, (std::vector<float>{-kInf, -kInf}));
}

TEST(MinMaxRef, BroadcastingElementWise) {
  // [2, 3] against a row [3] broadcast over the rows.
  const std::vector<float> row = {0, 0, 5};
  const int64_t row_strides[2] = {0, 1};
  std::vector<float> y(6);
  f32_extremum_strided__ref(Extremum::max, 2, kDims, kX.data(), kRowMajor, row.data(), row_strides, y.data());
  EXPECT_EQ(y, (std::vector<float>{3, 0, 7, 0, 2, 5}));
  f32_extremum_strided__ref(Extremum::min, 2, kDims, kX.data(), kRowMajor, row.data(), row_strides, y.data());
  EXPECT_EQ(y, (std::vector<float>{0, -1, 5, -4, 0, 0}));
  // In place: y = max(y, scalar 1).
  const float one = 1.0f;
  const int64_t scalar_strides[2] = {0, 0};
  f32_extremum_strided__ref(Extremum::max, 2, kDims, y.data(), kRowMajor, &one, scalar_strides, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 1, 5, 1, 1, 1}));
}

TEST(MinMaxRef, NaNWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {nan, 1.0f}, b = {2.0f, nan};
  const int64_t dims[1] = {2}, strides[1] = {1};
  std::vector<float> y(2);
  f32_extremum_strided__ref(Extremum::min, 1, dims, a.data(), strides, b.data(), strides, y.data());
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
}

// ONNX Round (kernels/elementwise/activation_list.h's row): to the nearest integer, halves to even.
TEST(MinMaxRef, RoundHalfToEven) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f, 2.6f, -7.0f, 8388609.0f};
  std::vector<float> y;
  for (float v : x) y.push_back(apply(Activation::round(), v));
  EXPECT_EQ(y, (std::vector<float>{0, 2, 2, -0.0f, -2, -2, 2, 3, -7, 8388609.0f}));
  EXPECT_TRUE(std::signbit(y[3]));
}

}  // namespace
}  // namespace octet::kernels
