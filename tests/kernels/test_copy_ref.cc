#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/ref/copy.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;

TEST(CopyStridedRef, SmallChwToHwc) {
  // [C 2][H 1][W 3] -> [H 1][W 3][C 2]; the box is given in destination order (H, W, C).
  const float src[] = {1, 2, 3, 10, 20, 30};
  std::vector<float> dst(6, -999.0f);
  const int64_t dims[] = {1, 3, 2};
  const int64_t src_strides[] = {3, 1, 3};
  const int64_t dst_strides[] = {6, 2, 1};
  copy_strided(3, dims, src, src_strides, dst.data(), dst_strides, sizeof(float));
  EXPECT_TRUE(all_near(dst, {1, 10, 2, 20, 3, 30}));
}

TEST(CopyStridedRef, NchwToNhwcTranspose) {
  constexpr int N = 2, C = 3, H = 2, W = 4;
  std::vector<float> nchw(N * C * H * W);
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i);
  std::vector<float> nhwc(nchw.size(), -999.0f);
  const int64_t dims[] = {N, H, W, C};
  const int64_t src_strides[] = {C * H * W, W, 1, H * W};
  const int64_t dst_strides[] = {H * W * C, W * C, C, 1};
  copy_strided(4, dims, nchw.data(), src_strides, nhwc.data(), dst_strides, sizeof(float));
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w)
          EXPECT_EQ(nhwc[((n * H + h) * W + w) * C + c], nchw[((n * C + c) * H + h) * W + w])
              << n << "," << c << "," << h << "," << w;
}

TEST(CopyStridedRef, ConcatIntoSlicesOfALargerTensor) {
  const float left[] = {1, 2, 3, 4};          // [2][2]
  const float right[] = {5, 6, 7, 8, 9, 10};  // [2][3]
  std::vector<float> out(10, -999.0f);        // [2][5]
  const int64_t out_strides[] = {5, 1};
  const int64_t left_dims[] = {2, 2}, left_strides[] = {2, 1};
  const int64_t right_dims[] = {2, 3}, right_strides[] = {3, 1};
  copy_strided(2, left_dims, left, left_strides, out.data(), out_strides, sizeof(float));
  copy_strided(2, right_dims, right, right_strides, out.data() + 2, out_strides, sizeof(float));
  EXPECT_TRUE(all_near(out, {1, 2, 5, 6, 7, 3, 4, 8, 9, 10}));
}

TEST(CopyStridedRef, OtherElementSizes) {
  const uint8_t bytes[] = {1, 2, 3, 4, 5, 6};  // [2][3] -> [3][2]
  uint8_t bytes_t[6] = {};
  const int64_t dims[] = {3, 2};
  const int64_t src_strides[] = {1, 3};
  const int64_t dst_strides[] = {2, 1};
  copy_strided(2, dims, bytes, src_strides, bytes_t, dst_strides, 1);
  EXPECT_EQ(std::vector<uint8_t>(bytes_t, bytes_t + 6), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));

  const double wide[] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5};
  double wide_t[6] = {};
  copy_strided(2, dims, wide, src_strides, wide_t, dst_strides, sizeof(double));
  EXPECT_EQ(std::vector<double>(wide_t, wide_t + 6),
            (std::vector<double>{1.5, 4.5, 2.5, 5.5, 3.5, 6.5}));
}

TEST(CopyStridedRef, ZeroStrideTilesAndEdgeCases) {
  const float row[] = {7, 8, 9};
  std::vector<float> tiled(6, -999.0f);
  const int64_t dims[] = {2, 3};
  const int64_t src_strides[] = {0, 1};
  const int64_t dst_strides[] = {3, 1};
  copy_strided(2, dims, row, src_strides, tiled.data(), dst_strides, sizeof(float));
  EXPECT_TRUE(all_near(tiled, {7, 8, 9, 7, 8, 9}));

  float scalar = -1;
  copy_strided(0, nullptr, row, nullptr, &scalar, nullptr, sizeof(float));
  EXPECT_EQ(scalar, 7.0f);

  float untouched = -1;
  const int64_t empty[] = {3, 0};
  copy_strided(2, empty, row, src_strides, &untouched, dst_strides, sizeof(float));
  EXPECT_EQ(untouched, -1.0f);
}

std::vector<float> pad(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& begin,
                       const std::vector<int64_t>& end, PadMode mode, float value,
                       const std::vector<float>& x) {
  int64_t count = 1;
  for (size_t d = 0; d < in_dims.size(); ++d) count *= in_dims[d] + begin[d] + end[d];
  std::vector<float> y(count, -999.0f);
  f32_pad__ref(static_cast<int>(in_dims.size()), in_dims.data(), begin.data(), end.data(), mode,
               value, x.data(), y.data());
  return y;
}

const std::vector<float> k1234 = {1, 2, 3, 4};

TEST(PadRef, OneDimensionalModes) {
  EXPECT_TRUE(all_near(pad({4}, {2}, {2}, PadMode::constant, -5, k1234), {-5, -5, 1, 2, 3, 4, -5, -5}));
  // Reflect mirrors about the edge element without repeating it.
  EXPECT_TRUE(all_near(pad({4}, {2}, {2}, PadMode::reflect, 0, k1234), {3, 2, 1, 2, 3, 4, 3, 2}));
  EXPECT_TRUE(all_near(pad({4}, {3}, {3}, PadMode::reflect, 0, k1234), {4, 3, 2, 1, 2, 3, 4, 3, 2, 1}));
  EXPECT_TRUE(all_near(pad({4}, {2}, {2}, PadMode::edge, 0, k1234), {1, 1, 1, 2, 3, 4, 4, 4}));
}

TEST(PadRef, NegativePadsCrop) {
  EXPECT_TRUE(all_near(pad({4}, {-1}, {2}, PadMode::constant, 9, k1234), {2, 3, 4, 9, 9}));
  EXPECT_TRUE(all_near(pad({4}, {-1}, {-2}, PadMode::constant, 9, k1234), {2}));
  // Crop one side, pad the other: same as slicing first, then padding (ONNX Runtime).
  EXPECT_TRUE(all_near(pad({4}, {-1}, {1}, PadMode::reflect, 0, k1234), {2, 3, 4, 3}));
  EXPECT_TRUE(all_near(pad({4}, {1}, {-1}, PadMode::reflect, 0, k1234), {2, 1, 2, 3}));
  EXPECT_TRUE(all_near(pad({4}, {1}, {-2}, PadMode::edge, 0, k1234), {1, 1, 2}));
}

TEST(PadRef, OnnxSpecExamples) {
  const std::vector<float> x = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};  // [3][2]
  EXPECT_TRUE(all_near(pad({3, 2}, {0, 2}, {0, 0}, PadMode::constant, 0, x),
                       {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}));
  EXPECT_TRUE(all_near(pad({3, 2}, {0, 2}, {0, 0}, PadMode::reflect, 0, x),
                       {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}));
  EXPECT_TRUE(all_near(pad({3, 2}, {0, 2}, {0, 0}, PadMode::edge, 0, x),
                       {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}));
}

TEST(PadRef, TwoDimensionalReflectAndCrop) {
  // [3][3] = 1..9
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  // Reflect one row above and one column left.
  EXPECT_TRUE(all_near(pad({3, 3}, {1, 1}, {0, 0}, PadMode::reflect, 0, x),
                       {5, 4, 5, 6, 2, 1, 2, 3, 5, 4, 5, 6, 8, 7, 8, 9}));
  // Crop the first row and last column, add an edge row at the bottom.
  EXPECT_TRUE(all_near(pad({3, 3}, {-1, 0}, {1, -1}, PadMode::edge, 0, x), {4, 5, 7, 8, 7, 8}));
}

TEST(PadRef, NchwSpatialPadding) {
  // [1][2][1][2]: pad H and W by one on each side with a constant.
  const std::vector<float> x = {1, 2, 3, 4};
  const auto y = pad({1, 2, 1, 2}, {0, 0, 1, 1}, {0, 0, 1, 1}, PadMode::constant, 0, x);
  EXPECT_TRUE(all_near(y, {0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0,  //
                           0, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace octet::kernels
