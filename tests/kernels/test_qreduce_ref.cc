// QLinearReduceMean's reference on hand-computed values (ONNX Runtime's float steps), across
// layouts, and against the exact mean on random data and any axes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/ref/qreduce.h"

namespace octet::kernels {
namespace {

template <typename T>
std::vector<T> reduce_mean(const std::vector<int64_t>& dims, const std::vector<bool>& reduced, const std::vector<T>& x,
                           const std::vector<int64_t>& strides, QuantParams xq, QuantParams yq) {
  int64_t count = 1;
  bool flags[8] = {};
  for (size_t d = 0; d < dims.size(); ++d) {
    flags[d] = reduced[d];
    if (!reduced[d]) count *= dims[d];
  }
  std::vector<T> y(size_t(count), T(99));
  q8_reduce_mean_strided__ref<T>(int(dims.size()), dims.data(), flags, x.data(), strides.data(), xq, yq, y.data());
  return y;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = int(dims.size()) - 2; d >= 0; --d) s[size_t(d)] = s[size_t(d) + 1] * dims[size_t(d) + 1];
  return s;
}

TEST(QReduceMeanRef, DequantizeMeanQuantize) {
  // [2][3] u8, x scale 0.5 zp 10, y scale 0.25 zp 20, mean over axis 1:
  // row 0: 0 + 1 + 2 = 3, / 3 = 1, / 0.25 = 4 -> 24.
  // row 1: -5 - 5 - 4.5 = -14.5, / 3 = -4.8333335, / 0.25 = -19.333334 -> -19 -> 1.
  const std::vector<uint8_t> x = {10, 12, 14, 0, 0, 1};
  const auto y = reduce_mean<uint8_t>({2, 3}, {false, true}, x, {3, 1}, {0.5f, 10}, {0.25f, 20});
  EXPECT_EQ(std::vector<int>(y.begin(), y.end()), (std::vector<int>{24, 1}));
  // Axis 0, y scale 0.5: column means -2.5, -2, -1.25; / 0.5 = -5, -4, -2.5 (tie to even: -2)
  // -> 15, 16, 18.
  const auto cols = reduce_mean<uint8_t>({2, 3}, {true, false}, x, {3, 1}, {0.5f, 10}, {0.5f, 20});
  EXPECT_EQ(std::vector<int>(cols.begin(), cols.end()), (std::vector<int>{15, 16, 18}));
}

// ONNX Runtime runs the QDQ unit in float (it has no fused kernel): the dequantized values carry
// rounding errors the exact integer mean does not. Column (44, 203, 175, 212), scale 0.1, zp 128
// on both sides: the exact mean is 30.5 steps, a tie that rounds to even (158); ORT's float
// steps, 0 - 8.40000057 + 7.5 + 4.69999981 + 8.40000057 = 12.2000008, / 4 = 3.05000019, / 0.1 =
// 30.5000019, round to 31 (159). (The sweep's qdq/ReduceMean/axes0.2 case differed from ORT by
// this one step under the integer formula.)
TEST(QReduceMeanRef, RoundsAsOrtsFloatUnitNotTheExactMean) {
  const std::vector<uint8_t> x = {44, 0, 203, 0, 175, 0, 212, 0};
  const auto y = reduce_mean<uint8_t>({4, 2}, {true, false}, x, {2, 1}, {0.1f, 128}, {0.1f, 128});
  EXPECT_EQ(int(y[0]), 159);
}

TEST(QReduceMeanRef, TiesRoundToEvenAndSaturate) {
  // acc 1 and 3 over n = 2 with m = 1/2 (exact): 0.5 -> 0, 1.5 -> 2. An s8 mean of 127s with a
  // smaller output scale saturates at 127; of -128s at -128.
  const std::vector<int8_t> ties = {1, 0, 2, 1};
  const auto t = reduce_mean<int8_t>({2, 2}, {false, true}, ties, {2, 1}, {1.0f, 0}, {1.0f, 0});
  EXPECT_EQ(std::vector<int>(t.begin(), t.end()), (std::vector<int>{0, 2}));
  const std::vector<int8_t> ends = {127, 127, -128, -128};
  const auto e = reduce_mean<int8_t>({2, 2}, {false, true}, ends, {2, 1}, {1.0f, 0}, {0.5f, 0});
  EXPECT_EQ(std::vector<int>(e.begin(), e.end()), (std::vector<int>{127, -128}));
}

// The mean follows the logical tensor, not its memory: NCHW data stored channels-last (the
// spatial mean, a channel mean, a mixed set) gives the bytes the same data stored row-major gives.
TEST(QReduceMeanRef, LayoutDoesNotChangeTheResult) {
  std::mt19937 rng(3);
  const int64_t n = 3, c = 5, h = 4, w = 7;
  std::vector<uint8_t> nchw(size_t(n * c * h * w)), nhwc(nchw.size());
  for (auto& v : nchw) v = uint8_t(rng());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t p = 0; p < h * w; ++p) nhwc[size_t((i * h * w + p) * c + j)] = nchw[size_t((i * c + j) * h * w + p)];
  const QuantParams xq{0.0437f, 131}, yq{0.0123f, 117};
  for (const std::vector<bool>& reduced : {std::vector<bool>{false, false, true, true}, std::vector<bool>{false, true, false, false},
                                           std::vector<bool>{true, false, true, false}}) {
    const auto want = reduce_mean<uint8_t>({n, c, h, w}, reduced, nchw, dense_strides({n, c, h, w}), xq, yq);
    const auto got = reduce_mean<uint8_t>({n, c, h, w}, reduced, nhwc, {h * w * c, 1, w * c, c}, xq, yq);
    EXPECT_EQ(got, want);
  }
}

// Any axis set on random data: within one step of round(exact mean / y.scale) + zp, and equal
// to it wherever the exact value is not within 1e-3 of a tie.
TEST(QReduceMeanRef, RandomAxesMatchTheExactMean) {
  std::mt19937 rng(11);
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  std::vector<int8_t> x(120);
  for (auto& v : x) v = int8_t(int(rng() % 256) - 128);
  const QuantParams xq{0.031f, -7}, yq{0.0071f, 3};
  size_t checked = 0;
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<bool> reduced(4);
    for (int d = 0; d < 4; ++d) reduced[size_t(d)] = (mask >> d) & 1;
    const auto y = reduce_mean<int8_t>(dims, reduced, x, dense_strides(dims), xq, yq);
    // Exact means in double, y in the kept dimensions' row-major order.
    std::vector<double> sum(y.size(), 0.0);
    std::vector<int64_t> count(y.size(), 0);
    for (int64_t i = 0; i < 120; ++i) {
      int64_t idx[4] = {i / 60, i / 20 % 3, i / 5 % 4, i % 5}, off = 0;
      for (int d = 0; d < 4; ++d)
        if (!reduced[size_t(d)]) off = off * dims[size_t(d)] + idx[d];
      sum[size_t(off)] += double(xq.scale) * (x[size_t(i)] - xq.zero_point);
      ++count[size_t(off)];
    }
    for (size_t o = 0; o < y.size(); ++o) {
      const double v = sum[o] / double(count[o]) / double(yq.scale);
      const double expected = std::clamp(std::nearbyint(v) + yq.zero_point, -128.0, 127.0);
      EXPECT_LE(std::fabs(y[o] - expected), 1.0) << "mask " << mask << " output " << o;
      if (std::fabs(std::fabs(v - std::floor(v)) - 0.5) > 1e-3) {
        EXPECT_EQ(y[o], expected) << "mask " << mask;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace octet::kernels
