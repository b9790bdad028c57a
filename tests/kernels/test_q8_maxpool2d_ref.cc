// Max pooling of 8-bit quantized values: hand-computed windows, the ends of both types' ranges,
// and a brute-force oracle that scatters every input into the windows that contain it (the
// kernel gathers each window instead).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ref/pool2d.h"

namespace octet::kernels {
namespace {

template <typename T>
std::vector<T> maxpool(const Pool2dShape& s, const std::vector<T>& in) {
  std::vector<T> out(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.channels, T(42));
  q8_maxpool2d_nhwc__ref<T>(s, in.data(), out.data());
  return out;
}

// For every input pixel, every output window that covers it takes the max.
template <typename T>
std::vector<T> scatter_max(const Pool2dShape& s, const std::vector<T>& in) {
  std::vector<T> out(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.channels,
                     std::numeric_limits<T>::lowest());
  for (int n = 0; n < s.batch; ++n)
    for (int iy = 0; iy < s.in_h; ++iy)
      for (int ix = 0; ix < s.in_w; ++ix)
        for (int oy = 0; oy < s.out_h; ++oy)
          for (int ox = 0; ox < s.out_w; ++ox)
            for (int ky = 0; ky < s.kernel_h; ++ky)
              for (int kx = 0; kx < s.kernel_w; ++kx) {
                if (oy * s.stride_h - s.pad_top + ky * s.dilation_h != iy) continue;
                if (ox * s.stride_w - s.pad_left + kx * s.dilation_w != ix) continue;
                for (int c = 0; c < s.channels; ++c) {
                  T& o = out[((size_t(n) * s.out_h + oy) * s.out_w + ox) * s.channels + c];
                  o = std::max(o, in[((size_t(n) * s.in_h + iy) * s.in_w + ix) * s.channels + c]);
                }
              }
  return out;
}

TEST(Q8MaxPool2dRef, HandComputedWindowsUint8) {
  // 3x3 input, 2x2 kernel, stride 1: four windows.
  Pool2dShape s;
  s.in_h = s.in_w = 3;
  s.out_h = s.out_w = 2;
  s.kernel_h = s.kernel_w = 2;
  const std::vector<uint8_t> in = {0, 255, 3,   //
                                   7, 1,   200, //
                                   9, 8,   254};
  EXPECT_EQ(maxpool(s, in), (std::vector<uint8_t>{255, 255, 9, 254}));
}

TEST(Q8MaxPool2dRef, Int8ComparesSignedValuesAndPaddingNeverWins) {
  // All values negative, pads 1: a padded 0 (or the byte of -128 read as 128) must never win.
  Pool2dShape s;
  s.in_h = s.in_w = 2;
  s.out_h = s.out_w = 3;
  s.kernel_h = s.kernel_w = 2;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  const std::vector<int8_t> in = {-128, -1,  //
                                  -50, -127};
  const std::vector<int8_t> want = {-128, -1, -1,  //
                                    -50,  -1, -1,  //
                                    -50,  -50, -127};
  EXPECT_EQ(maxpool(s, in), want);
}

TEST(Q8MaxPool2dRef, WindowOutsideTheInputGivesTheLowestValue) {
  // Pads larger than the kernel: the corner window sees only padding.
  Pool2dShape s;
  s.in_h = s.in_w = 1;
  s.out_h = s.out_w = 2;
  s.kernel_h = s.kernel_w = 1;
  s.stride_h = s.stride_w = 2;
  s.pad_top = s.pad_left = 0;
  s.pad_bottom = s.pad_right = 2;
  EXPECT_EQ(maxpool<uint8_t>(s, {17}), (std::vector<uint8_t>{17, 0, 0, 0}));
  EXPECT_EQ(maxpool<int8_t>(s, {17}), (std::vector<int8_t>{17, -128, -128, -128}));
}

template <typename T>
void random_shapes_match_scatter_oracle() {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 200; ++iter) {
    Pool2dShape s;
    s.batch = pick(1, 2);
    s.channels = pick(1, 5);
    s.in_h = pick(1, 7);
    s.in_w = pick(1, 7);
    s.kernel_h = pick(1, 3);
    s.kernel_w = pick(1, 3);
    s.stride_h = pick(1, 3);
    s.stride_w = pick(1, 3);
    s.dilation_h = pick(1, 2);
    s.dilation_w = pick(1, 2);
    s.pad_top = pick(0, s.kernel_h - 1);
    s.pad_left = pick(0, s.kernel_w - 1);
    s.pad_bottom = pick(0, s.kernel_h - 1);
    s.pad_right = pick(0, s.kernel_w - 1);
    const int eff_h = (s.kernel_h - 1) * s.dilation_h + 1, eff_w = (s.kernel_w - 1) * s.dilation_w + 1;
    const int span_h = s.in_h + s.pad_top + s.pad_bottom - eff_h;
    const int span_w = s.in_w + s.pad_left + s.pad_right - eff_w;
    if (span_h < 0 || span_w < 0) continue;
    s.out_h = span_h / s.stride_h + 1;
    s.out_w = span_w / s.stride_w + 1;
    std::vector<T> in(size_t(s.batch) * s.in_h * s.in_w * s.channels);
    for (T& v : in)
      v = T(pick(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()));
    ASSERT_EQ(maxpool(s, in), scatter_max(s, in)) << "iteration " << iter;
  }
}

TEST(Q8MaxPool2dRef, RandomShapesMatchAScatterOracleUint8) { random_shapes_match_scatter_oracle<uint8_t>(); }
TEST(Q8MaxPool2dRef, RandomShapesMatchAScatterOracleInt8) { random_shapes_match_scatter_oracle<int8_t>(); }

}  // namespace
}  // namespace octet::kernels
