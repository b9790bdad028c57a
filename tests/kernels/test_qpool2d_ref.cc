// QLinearGlobalAveragePool / QLinearAveragePool references on hand-computed values,
// including where ORT's float formula and its integer global-pool formula part ways.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/kernels/int_vectors.h"
#include "kernels/ref/qpool2d.h"

namespace octet::kernels {
namespace {

TEST(QGlobalAvgPoolRef, IntegerSumThenOneRequantization) {
  // x scale 0.5, zp 10; y scale 0.25, zp 20; 4 pixels x 2 channels (NHWC).
  // ch0: sum 52 - 4 * 10 = 12, m = 0.5 / (0.25 * 4) = 0.5 -> 6 -> 26 (mean of real {0, 1, 2, 3}
  // = 1.5). ch1: sum 1 - 40 = -39 -> -19.5 -> -20 (tie to even) -> 0; rounding away from zero's
  // neighbour -19 would give 1.
  const std::vector<uint8_t> x = {10, 0, 12, 0, 14, 0, 16, 1};
  std::vector<uint8_t> y(2);
  q8_global_avgpool_nhwc__ref<uint8_t>(1, 4, 2, x.data(), {0.5f, 10}, {0.25f, 20}, y.data());
  EXPECT_EQ(ints(y), (Ints{26, 0}));
}

TEST(QGlobalAvgPoolRef, Int8AndBatch) {
  // x scale 1, zp -128: 127 is real 255. Three pixels: acc = 3 * 127 + 3 * 128 = 765;
  // m = 1 / (1 * 3) in float = 0.333333343 -> 255.0000075 -> 255 -> -128 + 255 = 127.
  // Second image: all -128 (real 0) -> -128.
  const std::vector<int8_t> x = {127, 127, 127, -128, -128, -128};
  std::vector<int8_t> y(2);
  q8_global_avgpool_nhwc__ref<int8_t>(2, 3, 1, x.data(), {1.0f, -128}, {1.0f, -128}, y.data());
  EXPECT_EQ(ints(y), (Ints{127, -128}));
}

Pool2dShape pool(int in_h, int in_w, int k, int stride, int pad, int out) {
  Pool2dShape s;
  s.in_h = in_h;
  s.in_w = in_w;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
  s.out_h = s.out_w = out;
  return s;
}

TEST(QAvgPoolRef, FloatAverageWithTheZeroPointAddedBeforeRounding) {
  // x scale 1, zp 0; y scale 1, zp 1. 2x2 windows over a 3x3 image.
  // Window (0,0) averages to 0.5: ORT computes rne(0.5 / 1 + 1) = rne(1.5) = 2, where
  // QuantizeLinear's order (rne(0.5) + 1) would give 1. The other windows: 0.25 -> 1, 0, 0.
  const std::vector<uint8_t> x = {1, 1, 0, 0, 0, 0, 0, 0, 0};
  std::vector<uint8_t> y(4);
  q8_avgpool2d_nhwc__ref<uint8_t>(pool(3, 3, 2, 1, 0, 2), false, x.data(), {1.0f, 0}, {1.0f, 1},
                                  y.data());
  EXPECT_EQ(ints(y), (Ints{2, 1, 1, 1}));
}

TEST(QAvgPoolRef, KernelOverTheWholeInputSwitchesToTheGlobalIntegerFormula) {
  // The same window as above, but it is the whole (unpadded) input: ORT uses
  // QLinearGlobalAveragePool's requantization, rne(2 * 0.25) + 1 = 0 + 1 = 1.
  const std::vector<uint8_t> x = {1, 1, 0, 0};
  std::vector<uint8_t> y(1);
  q8_avgpool2d_nhwc__ref<uint8_t>(pool(2, 2, 2, 1, 0, 1), false, x.data(), {1.0f, 0}, {1.0f, 1},
                                  y.data());
  EXPECT_EQ(ints(y), (Ints{1}));
}

TEST(QAvgPoolRef, CountIncludePadDividesByTheKernelSize) {
  // 3x3 image of 9s, 3x3 kernel, pads 1, stride 2: every window sees 4 input positions.
  const std::vector<int8_t> x(9, 9);
  std::vector<int8_t> y(4);
  const Pool2dShape s = pool(3, 3, 3, 2, 1, 2);
  q8_avgpool2d_nhwc__ref<int8_t>(s, false, x.data(), {1.0f, 0}, {1.0f, 0}, y.data());
  EXPECT_EQ(ints(y), (Ints{9, 9, 9, 9}));
  q8_avgpool2d_nhwc__ref<int8_t>(s, true, x.data(), {1.0f, 0}, {1.0f, 0}, y.data());
  EXPECT_EQ(ints(y), (Ints{4, 4, 4, 4}));  // 36 / 9
}

TEST(QAvgPoolRef, ChannelsAreIndependentAndZeroPointsApply) {
  // 2 channels, x scale 0.5 zp 100, y scale 0.25 zp 3; 1x2 image, 1x2 window.
  // ch0: real {1, 2} -> 1.5 / 0.25 = 6 + 3 = 9; ch1: real {-1, -2} -> -6 + 3 = -3 -> 0.
  Pool2dShape s;
  s.in_w = 2;
  s.channels = 2;
  s.kernel_w = 2;
  s.in_h = 2;  // not global: a 1x2 window over a 2x2 image
  s.out_h = 2;
  const std::vector<uint8_t> x = {102, 98, 104, 96, 102, 98, 104, 96};
  std::vector<uint8_t> y(4);
  q8_avgpool2d_nhwc__ref<uint8_t>(s, false, x.data(), {0.5f, 100}, {0.25f, 3}, y.data());
  EXPECT_EQ(ints(y), (Ints{9, 0, 9, 0}));
}

TEST(QAvgPoolRef, MatchesFloat32StepByStep) {
  // 3x3 windows with pads over random data: every float32 step recomputed so that no
  // compiler flag can change it (float * small int and float + float are exact in double).
  std::mt19937 rng(11);
  const int h = 40, w = 40, out = 40;  // 3x3, stride 1, pads 1
  const Pool2dShape s = pool(h, w, 3, 1, 1, out);
  std::vector<uint8_t> x(h * w);
  for (uint8_t& v : x) v = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
  std::uniform_real_distribution<float> log2_scale(-9.0f, -3.0f);
  for (int trial = 0; trial < 200; ++trial) {
    const QuantParams xq{std::exp2(log2_scale(rng)),
                         std::uniform_int_distribution<int>(0, 255)(rng)};
    const QuantParams yq{std::exp2(log2_scale(rng)),
                         std::uniform_int_distribution<int>(0, 255)(rng)};
    for (bool include_pad : {false, true}) {
      std::vector<uint8_t> y(out * out);
      q8_avgpool2d_nhwc__ref<uint8_t>(s, include_pad, x.data(), xq, yq, y.data());
      for (int oy = 0; oy < out; ++oy)
        for (int ox = 0; ox < out; ++ox) {
          float sum = 0.0f;
          int inside = 0;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy - 1 + ky, ix = ox - 1 + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const float fx = static_cast<float>(static_cast<double>(xq.scale) *
                                                  (x[iy * w + ix] - xq.zero_point));
              sum = static_cast<float>(static_cast<double>(sum) + fx);
              ++inside;
            }
          const float average = sum / static_cast<float>(include_pad ? 9 : inside);
          const float shifted =
              static_cast<float>(static_cast<double>(average / yq.scale) + yq.zero_point);
          const int want = std::clamp(static_cast<int>(std::nearbyint(shifted)), 0, 255);
          ASSERT_EQ(y[oy * out + ox], want) << "trial " << trial << " output " << oy << "," << ox;
        }
    }
  }
}

TEST(QAvgPoolRef, WindowEntirelyOutsideTheInputGivesTheZeroPoint) {
  // ceil_mode-style geometry: a 1x1 kernel with stride 2 over a 2x2 image, 2x2 output;
  // windows at row or column 2 see nothing (ORT would divide 0 by 0 here).
  const std::vector<uint8_t> x = {50, 60, 70, 80};
  std::vector<uint8_t> y(4);
  q8_avgpool2d_nhwc__ref<uint8_t>(pool(2, 2, 1, 2, 0, 2), false, x.data(), {1.0f, 0}, {1.0f, 7},
                                  y.data());
  EXPECT_EQ(ints(y), (Ints{57, 7, 7, 7}));
}

}  // namespace
}  // namespace octet::kernels
