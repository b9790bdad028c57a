#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/softmax.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;

std::vector<float> softmax(int64_t outer, int64_t axis_len, int64_t inner,
                           const std::vector<float>& x) {
  std::vector<float> y(x.size(), -999.0f);
  f32_softmax__ref(outer, axis_len, inner, x.data(), y.data());
  return y;
}

TEST(SoftmaxRef, SmallVector) {
  // exp(-2), exp(-1), 1 over their sum 1.5032147244.
  EXPECT_TRUE(all_near(softmax(1, 3, 1, {1, 2, 3}), {0.0900305732f, 0.2447284711f, 0.6652409558f},
                       1e-6));
}

TEST(SoftmaxRef, HugeLogitsDoNotOverflow) {
  EXPECT_TRUE(all_near(softmax(1, 3, 1, {1e30f, 0, -1e30f}), {1, 0, 0}));
  EXPECT_TRUE(all_near(softmax(1, 2, 1, {1e30f, 1e30f}), {0.5f, 0.5f}));
  EXPECT_TRUE(all_near(softmax(1, 3, 1, {-1e30f, -1e30f, -1e30f}), {1.0f / 3, 1.0f / 3, 1.0f / 3},
                       1e-7));
  const float max = std::numeric_limits<float>::max();
  const auto y = softmax(1, 2, 1, {max, -max});
  for (float v : y) EXPECT_FALSE(std::isnan(v));
  EXPECT_TRUE(all_near(y, {1, 0}));
}

TEST(SoftmaxRef, MinusInfinityGetsZero) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(all_near(softmax(1, 3, 1, {-inf, 0, -inf}), {0, 1, 0}));
}

TEST(SoftmaxRef, AxisInTheMiddle) {
  // [outer 2][axis 2][inner 3]; each (outer, inner) column is normalized on its own.
  // Column values (0,0), (1,0), (2,0); the second outer block adds 50, which cancels.
  const std::vector<float> x = {0, 1, 2, 0, 0, 0, 50, 51, 52, 50, 50, 50};
  const float s1 = 0.7310585786f;  // 1 / (1 + e^-1)
  const float s2 = 0.8807970780f;  // 1 / (1 + e^-2)
  const std::vector<float> block = {0.5f, s1, s2, 0.5f, 1 - s1, 1 - s2};
  std::vector<float> want = block;
  want.insert(want.end(), block.begin(), block.end());
  EXPECT_TRUE(all_near(softmax(2, 2, 3, x), want, 1e-6));
}

TEST(SoftmaxRef, SumsToOneOnLongAxis) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.3f - 15.0f;
  const auto y = softmax(1, 1000, 1, x);
  double sum = 0;
  for (float v : y) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

}  // namespace
}  // namespace octet::kernels
