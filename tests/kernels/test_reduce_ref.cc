#include <gtest/gtest.h>

#include <vector>

#include "kernels/ref/reduce.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;

std::vector<float> reduce_mean(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                               const std::vector<float>& x, const std::vector<int64_t>& strides) {
  int64_t count = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!reduced[d]) count *= dims[d];
  bool flags[8] = {};
  for (size_t d = 0; d < reduced.size(); ++d) flags[d] = reduced[d];
  std::vector<float> y(count, -999.0f);
  f32_reduce_mean_strided__ref(static_cast<int>(dims.size()), dims.data(), flags, x.data(),
                               strides.data(), y.data());
  return y;
}

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(ReduceMeanRef, OverHWOfDenseNchw) {
  // [1][2][2][3] = 0..11: channel 0 holds 0..5, channel 1 holds 6..11.
  EXPECT_TRUE(all_near(reduce_mean({1, 2, 2, 3}, {false, false, true, true}, iota(12), {12, 6, 3, 1}),
                       {2.5f, 8.5f}));
}

TEST(ReduceMeanRef, OverHWOfNhwcDataReadThroughStrides) {
  // Same logical NCHW tensor, stored NHWC: element (c, h, w) at (h*3 + w)*2 + c.
  std::vector<float> nhwc(12);
  for (int c = 0; c < 2; ++c)
    for (int p = 0; p < 6; ++p) nhwc[p * 2 + c] = static_cast<float>(c * 6 + p);
  const std::vector<int64_t> strides = {12, 1, 6, 2};
  EXPECT_TRUE(all_near(reduce_mean({1, 2, 2, 3}, {false, false, true, true}, nhwc, strides),
                       {2.5f, 8.5f}));
  // Over C only: mean of p and p + 6, output dense [1][1][2][3].
  EXPECT_TRUE(all_near(reduce_mean({1, 2, 2, 3}, {false, true, false, false}, nhwc, strides),
                       {3, 4, 5, 6, 7, 8}));
}

TEST(ReduceMeanRef, MiddleAxis) {
  // [2][3][2]: mean over the 3.
  const std::vector<float> x = {1, 2, 3, 4, 5, 9, -1, -2, -3, -4, -5, 0};
  EXPECT_TRUE(all_near(reduce_mean({2, 3, 2}, {false, true, false}, x, {6, 2, 1}), {3, 5, -3, -2}));
}

TEST(ReduceMeanRef, AllAndNone) {
  EXPECT_TRUE(all_near(reduce_mean({2, 3, 2}, {true, true, true}, iota(12), {6, 2, 1}), {5.5f}));
  // Nothing reduced is a strided copy: here a [3][2] -> [2][3] transpose.
  EXPECT_TRUE(all_near(reduce_mean({2, 3}, {false, false}, iota(6), {1, 2}), {0, 2, 4, 1, 3, 5}));
}

TEST(ReduceMeanRef, AccumulatesInDouble) {
  // Float accumulation in this order gives (1e8 + 1 - 1e8 + 1) / 4 = 0.25.
  EXPECT_TRUE(all_near(reduce_mean({4}, {true}, {1e8f, 1, -1e8f, 1}, {1}), {0.5f}));
}

}  // namespace
}  // namespace octet::kernels
