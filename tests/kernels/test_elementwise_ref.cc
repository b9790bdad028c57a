#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/elementwise.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;

std::vector<float> binary(BinaryOp op, const std::vector<int64_t>& dims, const float* a,
                          const std::vector<int64_t>& a_strides, const float* b,
                          const std::vector<int64_t>& b_strides, Activation act = {}) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> y(count, -999.0f);
  f32_binary_strided__ref(op, static_cast<int>(dims.size()), dims.data(), a, a_strides.data(), b,
                          b_strides.data(), act, y.data());
  return y;
}

TEST(BinaryRef, RowBroadcastThroughZeroStride) {
  const float a[] = {1, 2, 3, 4, 5, 6};  // [2][3]
  const float b[] = {10, 20, 30};        // [3], broadcast along rows
  EXPECT_TRUE(all_near(binary(BinaryOp::add, {2, 3}, a, {3, 1}, b, {0, 1}), {11, 22, 33, 14, 25, 36}));
}

TEST(BinaryRef, BothSidesBroadcastIsOuterProduct) {
  const float a[] = {1, 2};     // [2][1]
  const float b[] = {3, 4, 5};  // [1][3]
  EXPECT_TRUE(all_near(binary(BinaryOp::mul, {2, 3}, a, {1, 0}, b, {0, 1}), {3, 4, 5, 6, 8, 10}));
}

TEST(BinaryRef, OperandOrder) {
  const float a[] = {6, 8};
  const float b[] = {2, 4};
  EXPECT_TRUE(all_near(binary(BinaryOp::sub, {2}, a, {1}, b, {1}), {4, 4}));
  EXPECT_TRUE(all_near(binary(BinaryOp::sub, {2}, b, {1}, a, {1}), {-4, -4}));
  EXPECT_TRUE(all_near(binary(BinaryOp::div, {2}, a, {1}, b, {1}), {3, 2}));
  EXPECT_TRUE(all_near(binary(BinaryOp::div, {2}, b, {1}, a, {1}), {1.0f / 3, 0.5f}));
}

TEST(BinaryRef, NchwOperandReadInNhwcOrder) {
  // a is stored NCHW [1][2][2][3] with values 0..11; the output is NHWC [1][2][3][2],
  // so a is read with strides (N, H, W, C) = (12, 3, 1, 6).
  std::vector<float> a(12);
  for (int i = 0; i < 12; ++i) a[i] = static_cast<float>(i);
  std::vector<float> b(12);
  for (int i = 0; i < 12; ++i) b[i] = 100.0f * static_cast<float>(i);
  const std::vector<float> a_as_nhwc = {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11};
  std::vector<float> want(12);
  for (int i = 0; i < 12; ++i) want[i] = a_as_nhwc[i] + b[i];
  EXPECT_TRUE(all_near(binary(BinaryOp::add, {1, 2, 3, 2}, a.data(), {12, 3, 1, 6}, b.data(),
                              {12, 6, 2, 1}),
                       want));
  // Per-channel bias on NHWC: b[c] with strides (0, 0, 0, 1).
  const float bias[] = {1000, 2000};
  const std::vector<float> with_bias = {1000, 2006, 1001, 2007, 1002, 2008,
                                        1003, 2009, 1004, 2010, 1005, 2011};
  EXPECT_TRUE(all_near(binary(BinaryOp::add, {1, 2, 3, 2}, a.data(), {12, 3, 1, 6}, bias,
                              {0, 0, 0, 1}),
                       with_bias));
}

TEST(BinaryRef, FusedActivation) {
  const float a[] = {-3, -1, 2, 5};
  const float b[] = {1};
  EXPECT_TRUE(all_near(binary(BinaryOp::add, {4}, a, {1}, b, {0}, Activation::relu()), {0, 0, 3, 6}));
  EXPECT_TRUE(
      all_near(binary(BinaryOp::mul, {4}, a, {1}, b, {0}, Activation::clip(-2, 4)), {-2, -1, 2, 4}));
}

TEST(BinaryRef, RankZeroIsOneElement) {
  const float a[] = {1.5f};
  const float b[] = {2.0f};
  EXPECT_TRUE(all_near(binary(BinaryOp::mul, {}, a, {}, b, {}), {3.0f}));
}

TEST(UnaryRef, EveryActivation) {
  const std::vector<float> x = {-10, -3, -1, 0, 1, 3, 7, 10};
  auto run = [&](const Activation& act) {
    std::vector<float> y(x.size(), -999.0f);
    f32_unary__ref(act, static_cast<int64_t>(x.size()), x.data(), y.data());
    return y;
  };
  EXPECT_TRUE(all_near(run(Activation{}), x));
  EXPECT_TRUE(all_near(run(Activation::relu()), {0, 0, 0, 0, 1, 3, 7, 10}));
  EXPECT_TRUE(all_near(run(Activation::clip(0, 6)), {0, 0, 0, 0, 1, 3, 6, 6}));
  const auto sig = run(Activation::sigmoid());
  EXPECT_FLOAT_EQ(sig[3], 0.5f);
  EXPECT_NEAR(sig[4], 0.7310585786f, 1e-7);
  EXPECT_NEAR(sig[2], 0.2689414214f, 1e-7);
  // alpha 0.2, beta 0.5: -10 and -3 clamp to 0, 3 and beyond clamp to 1.
  EXPECT_TRUE(all_near(run(Activation::hard_sigmoid(0.2f, 0.5f)), {0, 0, 0.3f, 0.5f, 0.7f, 1, 1, 1},
                       1e-6));
  // x * clamp(x/6 + 1/2, 0, 1)
  EXPECT_TRUE(all_near(run(Activation::hard_swish()),
                       {0, 0, -1.0f / 3, 0, 2.0f / 3, 3, 7, 10}, 1e-6));
  // ONNX Runtime's rounding: x * float(1/6), then + 0.5, then the product with x, each rounded
  // to float. At 1.3 the gate x / 6 + 0.5 is one ulp lower (0x3f377777), and so is the output.
  const float v = 1.3f;
  const volatile float sixth = 1.0f / 6.0f;
  const float g = v * sixth + 0.5f;
  EXPECT_EQ(apply(Activation::hard_swish(), v), v * g);
  EXPECT_NE(v * (v / 6.0f + 0.5f), v * g) << "pick an input where the two formulas round apart";
}

TEST(UnaryRef, ReluPropagatesNaN) {
  const float x[] = {std::numeric_limits<float>::quiet_NaN()};
  float y[] = {0};
  f32_unary__ref(Activation::relu(), 1, x, y);
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(BatchNormRef, ChannelsLastHandComputed) {
  // Two pixels, two channels; epsilon 1 so that sqrt(var + eps) is 2 and 1.
  const float x[] = {1, 2, 3, 4};
  const float scale[] = {3, 0.5f};
  const float bias[] = {1, -1};
  const float mean[] = {1, 2};
  const float var[] = {3, 0};
  std::vector<float> y(4, -999.0f);
  f32_batchnorm_channels_last__ref(2, 2, x, scale, bias, mean, var, 1.0f, y.data());
  // ch0: (x - 1) / 2 * 3 + 1; ch1: (x - 2) * 0.5 - 1.
  EXPECT_TRUE(all_near(y, {1, -1, 4, 0}));
}

}  // namespace
}  // namespace octet::kernels
