// Cast: the expected values are what ONNX Runtime 1.30's Cast computed on x86-64 for the same
// inputs (float32 and float64 sources, run once and written down here), including the
// out-of-range and NaN cases that ONNX leaves undefined.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/ref/cast.h"

namespace octet::kernels {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

const std::vector<float> kFloats = {0.0f,    0.4f,   0.5f,   0.6f,   1.5f,        2.5f,        -0.5f,
                                    -0.6f,   -1.5f,  -2.5f,  127.9f, 128.0f,      200.7f,      255.9f,
                                    256.0f,  300.0f, -1.0f,  -129.0f, -200.5f,    1e10f,       -1e10f,
                                    3e9f,    -3e9f,  2147483520.0f,  2147483648.0f, kInf,       -kInf,
                                    kNaN,    1e19f,  -1e19f, 9.3e18f};

template <typename To, typename From>
std::vector<To> cast_all(const std::vector<From>& x) {
  std::vector<To> y(x.size());
  cast__ref<To, From>(int64_t(x.size()), x.data(), y.data());
  return y;
}

TEST(CastRef, FloatToUint8AsOnnxRuntimeOnX86) {
  const std::vector<uint8_t> want = {0, 0, 0,   0,   1,   2,   0,   0, 255, 254, 127, 128, 200, 255, 0, 44,
                                     255, 127, 56, 0, 0, 0, 0, 128, 0,   0,   0,   0,   0,   0,   0};
  EXPECT_EQ(cast_all<uint8_t>(kFloats), want);
}

TEST(CastRef, FloatToInt8AsOnnxRuntimeOnX86) {
  const std::vector<int8_t> want = {0, 0, 0,   0,  1, 2, 0, 0, -1,   -2, 127, -128, -56, -1, 0, 44,
                                    -1, 127, 56, 0, 0, 0, 0, -128, 0, 0, 0,   0,    0,   0,  0};
  EXPECT_EQ(cast_all<int8_t>(kFloats), want);
}

TEST(CastRef, FloatToInt32AsOnnxRuntimeOnX86) {
  const int32_t m = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> want = {0,  0,  0,  0,   1,   2,   0,   0,   -1,  -2, 127, 128, 200, 255, 256, 300,
                                     -1, -129, -200, m, m, m, m, 2147483520, m, m, m, m, m, m, m};
  EXPECT_EQ(cast_all<int32_t>(kFloats), want);
}

TEST(CastRef, FloatToInt64AsOnnxRuntimeOnX86) {
  const int64_t m = std::numeric_limits<int64_t>::min();
  const std::vector<int64_t> want = {0,  0,    0,    0,           1,            2,          0,           0,
                                     -1, -2,   127,  128,         200,          255,        256,         300,
                                     -1, -129, -200, 10000000000, -10000000000, 3000000000, -3000000000, 2147483520,
                                     2147483648, m, m, m, m, m, m};
  EXPECT_EQ(cast_all<int64_t>(kFloats), want);
}

TEST(CastRef, FloatToBoolIsNonZeroAndNaNIsTrue) {
  // Bool tensors are bytes; vector<bool> has no data() to write into.
  std::unique_ptr<bool[]> y(new bool[kFloats.size()]);
  cast__ref<bool, float>(int64_t(kFloats.size()), kFloats.data(), y.get());
  std::vector<bool> got(y.get(), y.get() + kFloats.size());
  std::vector<bool> want(kFloats.size(), true);
  want[0] = false;
  EXPECT_EQ(got, want);
}

TEST(CastRef, DoubleSourcesAsOnnxRuntimeOnX86) {
  const std::vector<double> x = {0.5, -1.5, 300.0, -200.5, 1e10, 3e9, 2147483647.9, 2147483648.0, -2147483648.9,
                                 std::nan(""), 1e300, 9.3e18, -9.3e18};
  EXPECT_EQ(cast_all<uint8_t>(x), (std::vector<uint8_t>{0, 255, 44, 56, 0, 0, 255, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(cast_all<int8_t>(x), (std::vector<int8_t>{0, -1, 44, 56, 0, 0, -1, 0, 0, 0, 0, 0, 0}));
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(cast_all<int32_t>(x),
            (std::vector<int32_t>{0, -1, 300, -200, m32, m32, 2147483647, m32, m32, m32, m32, m32, m32}));
  const int64_t m64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(cast_all<int64_t>(x), (std::vector<int64_t>{0, -1, 300, -200, 10000000000, 3000000000, 2147483647,
                                                        2147483648, -2147483648, m64, m64, m64, m64}));
  const auto f = cast_all<float>(x);
  EXPECT_EQ(f[6], 2147483648.0f);  // rounds to nearest
  EXPECT_TRUE(std::isnan(f[9]));
  EXPECT_EQ(f[10], kInf);  // overflows to infinity
}

TEST(CastRef, IntegersKeepTheirLowBits) {
  const std::vector<int64_t> x = {0, 1, -1, 127, 128, 255, 256, 300, -129, 2147483647, -2147483648LL,
                                  (1LL << 40) + 3, std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min(), 16777217};
  EXPECT_EQ(cast_all<uint8_t>(x), (std::vector<uint8_t>{0, 1, 255, 127, 128, 255, 0, 44, 127, 255, 0, 3, 255, 0, 1}));
  EXPECT_EQ(cast_all<int8_t>(x), (std::vector<int8_t>{0, 1, -1, 127, -128, -1, 0, 44, 127, -1, 0, 3, -1, 0, 1}));
  EXPECT_EQ(cast_all<int32_t>(x), (std::vector<int32_t>{0, 1, -1, 127, 128, 255, 256, 300, -129, 2147483647,
                                                        -2147483647 - 1, 3, -1, 0, 16777217}));
  const auto f = cast_all<float>(x);
  EXPECT_EQ(f[14], 16777216.0f);  // 2^24 + 1 rounds to even
  EXPECT_EQ(cast_all<int32_t>(std::vector<uint8_t>{0, 200, 255}), (std::vector<int32_t>{0, 200, 255}));
  EXPECT_EQ(cast_all<int32_t>(std::vector<int8_t>{-128, -1, 127}), (std::vector<int32_t>{-128, -1, 127}));
  EXPECT_EQ(cast_all<uint8_t>(std::vector<int8_t>{-128, -1, 127}), (std::vector<uint8_t>{128, 255, 127}));
}

}  // namespace
}  // namespace octet::kernels
