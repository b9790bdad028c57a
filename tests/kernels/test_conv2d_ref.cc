#include <gtest/gtest.h>

#include <ostream>
#include <vector>

#include "kernels/ref/conv2d.h"
#include "kernels/ref/gemm.h"
#include "tests/kernels/ref_test_util.h"

namespace octet::kernels {
namespace {

using testing::all_near;
using testing::ramp;
using testing::random_floats;

std::vector<float> conv(const Conv2dShape& s, const std::vector<float>& in,
                        const std::vector<float>& w, const float* bias = nullptr,
                        Activation act = {}) {
  std::vector<float> out(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.out_c, -999.0f);
  f32_conv2d_nhwc__ref(s, in.data(), w.data(), bias, act, out.data());
  return out;
}


TEST(Conv2dRef, Kernel3x3On4x4NoPadding) {
  Conv2dShape s;
  s.in_h = s.in_w = 4;
  s.kernel_h = s.kernel_w = 3;
  s.out_h = s.out_w = 2;
  // in[r][c] = 4r + c + 1, w[ky][kx] = 3ky + kx + 1. By hand:
  // out(oy, ox) = sum w * (4ky + kx + 1) + (4oy + ox) * sum w = 348 + 45 (4oy + ox).
  EXPECT_TRUE(all_near(conv(s, ramp(4, 4), ramp(3, 3)), {348, 393, 528, 573}));
}

TEST(Conv2dRef, PaddingOneWithBiasAndClip) {
  Conv2dShape s;
  s.in_h = s.in_w = 4;
  s.kernel_h = s.kernel_w = 3;
  s.out_h = s.out_w = 4;
  s.pad_top = s.pad_left = 1;
  const float bias = -100.0f;
  auto out = conv(s, ramp(4, 4), ramp(3, 3), &bias);
  // Corner (0,0) sees only w[1..2][1..2] over in[0..1][0..1]: 5*1 + 6*2 + 8*5 + 9*6 = 111.
  EXPECT_FLOAT_EQ(out[0], 111.0f - 100.0f);
  // (1,1) is the full window of the unpadded case: 348.
  EXPECT_FLOAT_EQ(out[1 * 4 + 1], 348.0f - 100.0f);
  // Corner (3,3) sees w[0..1][0..1] over in[2..3][2..3]: 1*11 + 2*12 + 4*15 + 5*16 = 175.
  EXPECT_FLOAT_EQ(out[3 * 4 + 3], 175.0f - 100.0f);

  auto clipped = conv(s, ramp(4, 4), ramp(3, 3), &bias, Activation::clip(0.0f, 100.0f));
  EXPECT_FLOAT_EQ(clipped[0], 11.0f);
  EXPECT_FLOAT_EQ(clipped[1 * 4 + 1], 100.0f);
  const float big_bias = -200.0f;
  auto relu = conv(s, ramp(4, 4), ramp(3, 3), &big_bias, Activation::relu());
  EXPECT_FLOAT_EQ(relu[0], 0.0f);
  EXPECT_FLOAT_EQ(relu[1 * 4 + 1], 148.0f);
}

TEST(Conv2dRef, PointwiseMixesChannelsInOnnxWeightOrder) {
  Conv2dShape s;
  s.in_w = 2;
  s.out_w = 2;
  s.in_c = 2;
  s.out_c = 3;
  // NHWC pixels [1,2] and [3,4]; weights [oc][ic].
  const std::vector<float> in = {1, 2, 3, 4};
  const std::vector<float> w = {1, 0, 0, 1, 2, -1};
  const float bias[] = {0.5f, 0.0f, -1.0f};
  EXPECT_TRUE(all_near(conv(s, in, w, bias), {1.5f, 2, -1, 3.5f, 4, 1}));
}

TEST(Conv2dRef, DepthwiseKeepsChannelsApart) {
  Conv2dShape s;
  s.in_h = s.in_w = 3;
  s.in_c = s.out_c = s.groups = 2;
  s.kernel_h = s.kernel_w = 2;
  s.out_h = s.out_w = 2;
  // Channel 0 holds v = 3r + c + 1, channel 1 holds 10 v.
  std::vector<float> in;
  for (float v : ramp(3, 3)) {
    in.push_back(v);
    in.push_back(10 * v);
  }
  // ch0: [[1,2],[3,4]] -> 10v + 27; ch1: [[1,0],[0,2]] on 10v -> 30v + 80.
  const std::vector<float> w = {1, 2, 3, 4, 1, 0, 0, 2};
  EXPECT_TRUE(all_near(conv(s, in, w), {37, 110, 47, 140, 67, 200, 77, 230}));
}

TEST(Conv2dRef, Dilation2) {
  Conv2dShape s;
  s.in_h = s.in_w = 5;
  s.kernel_h = s.kernel_w = 3;
  s.dilation_h = s.dilation_w = 2;
  s.out_h = s.out_w = 1;
  // in[r][c] = 5r + c + 1 sampled at r, c in {0, 2, 4}: sum w[ky][kx] * (10ky + 2kx + 1)
  // = (1+6+15) + (44+65+90) + (147+184+225) = 777.
  EXPECT_TRUE(all_near(conv(s, ramp(5, 5), ramp(3, 3)), {777}));
}

TEST(Conv2dRef, Stride2WithPaddingOnlyBottomRight) {
  Conv2dShape s;
  s.in_h = s.in_w = 4;
  s.kernel_h = s.kernel_w = 3;
  s.stride_h = s.stride_w = 2;
  s.pad_top = s.pad_left = 0;  // pad_bottom = pad_right = 1
  s.out_h = (4 + 0 + 1 - 3) / 2 + 1;
  s.out_w = s.out_h;
  ASSERT_EQ(s.out_h, 2);
  // Windows start at rows/cols 0 and 2; the second one runs into the bottom/right pad.
  // (0,1): 1*3+2*4 + 4*7+5*8 + 7*11+8*12 = 252; (1,0): 1*9+2*10+3*11 + 4*13+5*14+6*15 = 274;
  // (1,1): 1*11+2*12 + 4*15+5*16 = 175.
  EXPECT_TRUE(all_near(conv(s, ramp(4, 4), ramp(3, 3)), {348, 252, 274, 175}));
}

TEST(Conv2dRef, AccumulatesInDouble) {
  Conv2dShape s;
  s.in_c = 3;
  const std::vector<float> in = {1e8f, 1.0f, -1e8f};
  const std::vector<float> w = {1, 1, 1};
  // float accumulation in this order gives 0.
  EXPECT_TRUE(all_near(conv(s, in, w), {1.0f}));
}

// ---- Independent cross-checks ------------------------------------------------------------


// Dense conv as im2col followed by the reference GEMM:
// patches [batch*out_h*out_w][in_c*k_h*k_w] x weights^T, bias broadcast along rows via C.
std::vector<float> conv_by_im2col_gemm(const Conv2dShape& s, const std::vector<float>& in,
                                       const std::vector<float>& w, const std::vector<float>& bias) {
  const int m = s.batch * s.out_h * s.out_w;
  const int k = s.in_c * s.kernel_h * s.kernel_w;
  std::vector<float> patches(static_cast<size_t>(m) * k, 0.0f);
  for (int n = 0; n < s.batch; ++n)
    for (int oy = 0; oy < s.out_h; ++oy)
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int row = (n * s.out_h + oy) * s.out_w + ox;
        for (int ic = 0; ic < s.in_c; ++ic)
          for (int ky = 0; ky < s.kernel_h; ++ky)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
              const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
              const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
              if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
              const int col = (ic * s.kernel_h + ky) * s.kernel_w + kx;
              patches[static_cast<size_t>(row) * k + col] =
                  in[((static_cast<size_t>(n) * s.in_h + iy) * s.in_w + ix) * s.in_c + ic];
            }
      }
  GemmShape g;
  g.m = m;
  g.n = s.out_c;
  g.k = k;
  g.trans_b = true;  // ONNX conv weights are [out_c][in_c*k_h*k_w]
  std::vector<float> out(static_cast<size_t>(m) * s.out_c);
  f32_gemm__ref(g, 1.0f, patches.data(), w.data(), 1.0f, bias.data(), 0, 1, Activation{},
                out.data());
  return out;
}

class Conv2dCrossCheck : public ::testing::TestWithParam<testing::ConvGeometry> {};

TEST_P(Conv2dCrossCheck, DenseMatchesIm2colGemm) {
  testing::ConvGeometry g = GetParam();
  g.groups = 1;
  const Conv2dShape s = testing::conv_shape(g);
  const auto in = random_floats(static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c, 1);
  const auto w = random_floats(static_cast<size_t>(s.out_c) * s.in_c * s.kernel_h * s.kernel_w, 2);
  const auto bias = random_floats(s.out_c, 3);
  EXPECT_TRUE(all_near(conv(s, in, w, bias.data()), conv_by_im2col_gemm(s, in, w, bias), 1e-5, 1e-6));
}

TEST_P(Conv2dCrossCheck, GroupedMatchesPerGroupDense) {
  const Conv2dShape s = testing::conv_shape(GetParam());
  const int icg = s.in_c / s.groups;
  const int ocg = s.out_c / s.groups;
  const auto in = random_floats(static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c, 4);
  const auto w = random_floats(static_cast<size_t>(s.out_c) * icg * s.kernel_h * s.kernel_w, 5);
  const auto bias = random_floats(s.out_c, 6);
  const auto grouped = conv(s, in, w, bias.data());

  const int pixels_in = s.batch * s.in_h * s.in_w;
  const int pixels_out = s.batch * s.out_h * s.out_w;
  const int w_per_oc = icg * s.kernel_h * s.kernel_w;
  std::vector<float> expected(grouped.size());
  for (int gi = 0; gi < s.groups; ++gi) {
    Conv2dShape d = s;
    d.groups = 1;
    d.in_c = icg;
    d.out_c = ocg;
    std::vector<float> in_g(static_cast<size_t>(pixels_in) * icg);
    for (int p = 0; p < pixels_in; ++p)
      for (int c = 0; c < icg; ++c) in_g[p * icg + c] = in[p * s.in_c + gi * icg + c];
    const std::vector<float> w_g(w.begin() + gi * ocg * w_per_oc, w.begin() + (gi + 1) * ocg * w_per_oc);
    const auto out_g = conv(d, in_g, w_g, bias.data() + gi * ocg);
    for (int p = 0; p < pixels_out; ++p)
      for (int c = 0; c < ocg; ++c) expected[p * s.out_c + gi * ocg + c] = out_g[p * ocg + c];
  }
  EXPECT_TRUE(all_near(grouped, expected));
}

// batch, in_h, in_w, in_c, out_c, k_h, k_w, stride_h, stride_w, dil_h, dil_w,
// pad_top, pad_left, pad_bottom, pad_right, groups
INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dCrossCheck,
    ::testing::Values(testing::ConvGeometry{1, 5, 5, 4, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
                      testing::ConvGeometry{2, 7, 6, 6, 9, 3, 2, 2, 1, 1, 1, 1, 0, 1, 1, 3},
                      testing::ConvGeometry{1, 9, 9, 4, 4, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, 4},
                      testing::ConvGeometry{3, 1, 1, 8, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},
                      testing::ConvGeometry{1, 8, 7, 3, 6, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 3},
                      testing::ConvGeometry{2, 6, 6, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5},
                      testing::ConvGeometry{1, 6, 5, 3, 6, 5, 5, 1, 2, 1, 1, 2, 2, 2, 2, 3},
                      testing::ConvGeometry{1, 4, 4, 2, 3, 2, 2, 3, 3, 1, 1, 0, 0, 2, 2, 1}));

// 3-D: the depth fields of Conv2dShape (NDHWC, weights [out_c][in_c / groups][kd][kh][kw]).
TEST(Conv3dRef, OneWindowIsTheDotProduct) {
  Conv2dShape s;
  s.in_d = s.in_h = s.in_w = 2;
  s.kernel_d = s.kernel_h = s.kernel_w = 2;
  // in[z][y][x] = 4z + 2y + x + 1 and w alike: sum of squares 1..8 = 204, plus the bias.
  const float bias = 0.5f;
  EXPECT_TRUE(all_near(conv(s, ramp(8, 1), ramp(8, 1), &bias), {204.5f}));
  // Pads of one on every side, stride 2 in depth only: 2 x 3 x 3 windows.
  s.pad_front = s.pad_top = s.pad_left = 1;
  s.stride_d = 2;
  s.out_d = 2, s.out_h = s.out_w = 3;
  std::vector<float> out(18);
  f32_conv2d_nhwc__ref(s, ramp(8, 1).data(), ramp(8, 1).data(), nullptr, {}, out.data());
  // Window (0,0,0) sees in[0][0][0] = 1 through w[1][1][1] = 8; (1,2,2) sees in[1][1][1] = 8
  // through w[0][0][0] = 1; (0,1,1) sees plane 0 whole through w's plane 1: 5*1+6*2+7*3+8*4 = 70.
  EXPECT_FLOAT_EQ(out[0], 8.0f);
  EXPECT_FLOAT_EQ(out[17], 8.0f);
  EXPECT_FLOAT_EQ(out[4], 70.0f);
}

// A 3-D conv is, for each output plane, the sum over kd of 2-D convs of the input plane each
// depth tap reads with that tap's 2-D weights.
TEST(Conv3dRef, MatchesSumOfPlaneConvs) {
  struct Case { int batch, in_d, in_c, out_c, groups, kd, sd, dd, pad_front, pad_back, hw, k, st, pad; };
  const Case cases[] = {
      {1, 4, 3, 5, 1, 3, 1, 1, 1, 1, 5, 3, 1, 1},   // 3x3x3, same padding
      {2, 5, 4, 6, 2, 3, 2, 1, 1, 0, 6, 3, 2, 1},   // strides 2, grouped, batch 2
      {1, 7, 2, 2, 2, 2, 1, 3, 2, 2, 4, 1, 1, 0},   // depthwise, dilation 3 in depth, 2x1x1
      {1, 1, 4, 3, 1, 3, 1, 1, 1, 1, 4, 3, 1, 1},   // depth 1: only the middle tap reads
      {1, 3, 2, 3, 1, 1, 3, 1, 4, 4, 3, 2, 3, 2},   // pads past the kernel, stride past the kernel
  };
  for (const Case& c : cases) {
    Conv2dShape s;
    s.batch = c.batch;
    s.in_d = c.in_d, s.in_h = s.in_w = c.hw, s.in_c = c.in_c, s.out_c = c.out_c, s.groups = c.groups;
    s.kernel_d = c.kd, s.stride_d = c.sd, s.dilation_d = c.dd, s.pad_front = c.pad_front;
    s.kernel_h = s.kernel_w = c.k, s.stride_h = s.stride_w = c.st, s.pad_top = s.pad_left = c.pad;
    s.out_d = (c.in_d + c.pad_front + c.pad_back - c.dd * (c.kd - 1) - 1) / c.sd + 1;
    s.out_h = s.out_w = (c.hw + 2 * c.pad - c.k) / c.st + 1;
    const size_t plane_in = size_t(c.hw) * c.hw * c.in_c, plane_out = size_t(s.out_h) * s.out_w * c.out_c;
    const size_t taps2 = size_t(c.k) * c.k, per_oc = size_t(c.in_c / c.groups) * c.kd * taps2;
    const auto in = random_floats(size_t(c.batch) * c.in_d * plane_in, 11);
    const auto w = random_floats(size_t(c.out_c) * per_oc, 12);
    const auto bias = random_floats(size_t(c.out_c), 13);
    std::vector<float> got(size_t(c.batch) * s.out_d * plane_out);
    f32_conv2d_nhwc__ref(s, in.data(), w.data(), bias.data(), {}, got.data());

    Conv2dShape p = s;  // one plane
    p.batch = p.in_d = p.out_d = p.kernel_d = p.stride_d = p.dilation_d = 1;
    p.pad_front = 0;
    std::vector<float> expected(got.size()), w2(size_t(c.out_c) * per_oc / c.kd), plane(plane_out);
    for (int n = 0; n < c.batch; ++n)
      for (int oz = 0; oz < s.out_d; ++oz) {
        float* e = expected.data() + (size_t(n) * s.out_d + oz) * plane_out;
        for (size_t i = 0; i < plane_out; ++i) e[i] = bias[i % size_t(c.out_c)];
        for (int kz = 0; kz < c.kd; ++kz) {
          const int iz = oz * c.sd - c.pad_front + kz * c.dd;
          if (iz < 0 || iz >= c.in_d) continue;
          for (size_t oc_ic = 0; oc_ic < w2.size() / taps2; ++oc_ic)
            for (size_t t = 0; t < taps2; ++t) w2[oc_ic * taps2 + t] = w[(oc_ic * c.kd + size_t(kz)) * taps2 + t];
          f32_conv2d_nhwc__ref(p, in.data() + (size_t(n) * c.in_d + size_t(iz)) * plane_in, w2.data(), nullptr, {},
                               plane.data());
          for (size_t i = 0; i < plane_out; ++i) e[i] += plane[i];
        }
      }
    EXPECT_TRUE(all_near(got, expected, 1e-5, 1e-6)) << "case in_d " << c.in_d << " kd " << c.kd;
  }
}

}  // namespace
}  // namespace octet::kernels
