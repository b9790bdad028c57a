// F32NarrowGroupConv on every row of kernels/conv/f32_gconv_list.h this CPU runs (the portable
// scalar rows included) against f32_conv2d_nhwc__ref: groups of 2 and 4 channels, every channel
// tail below two vectors of the widest level, 1x1 / 3x3 / 1x7 / 7x1 / 5x5 kernels, strides,
// dilations, asymmetric pads, 1-pixel maps, batches, fused activations and residuals, NaN
// inputs, two threads; and the cost rule that chooses it.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/f32_gconv_list.h"
#include "kernels/conv/f32_narrow_group_conv.h"
#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_gconv_test {

using testing::absolute;
using testing::fill_uniform;

std::vector<const F32GconvKernel*> runnable_kernels() {
  return testing::runnable_entries(kF32GconvKernels);
}

struct Case {
  Conv2dShape s;
  Activation act;
  bool bias = true, residual = false;
};

// The output size of s's input, kernel, strides, dilations and pads (bottom / right given).
void set_output(Conv2dShape& s, int pad_bottom, int pad_right) {
  s.out_h = (s.in_h + s.pad_top + pad_bottom - s.dilation_h * (s.kernel_h - 1) - 1) / s.stride_h + 1;
  s.out_w = (s.in_w + s.pad_left + pad_right - s.dilation_w * (s.kernel_w - 1) - 1) / s.stride_w + 1;
}

Case shape(int groups, int g, int hw, int kh, int kw, int stride, int pad) {
  Case c;
  Conv2dShape& s = c.s;
  s.groups = groups;
  s.in_c = s.out_c = groups * g;
  s.in_h = s.in_w = hw;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = pad;
  set_output(s, pad, pad);
  return c;
}

// Runs the case on kernel k and on the ref, output by output within 1e-5 of sum|x*w| + |b| (the
// tolerance of the other FP32 conv tests); x may be given (NaN inputs). Returns outputs compared.
size_t check(const Case& c, const F32GconvKernel& k, uint32_t seed, pthreadpool_t pool = nullptr,
             const std::vector<float>* given_x = nullptr) {
  const Conv2dShape& s = c.s;
  const testing::F32ConvCheck d = testing::f32_conv_check(s, c.act, c.bias, c.residual, seed, given_x);
  const size_t n = d.expected.size();
  std::vector<float> y(n, std::nanf(""));
  F32NarrowGroupConv conv(s, d.w.data(), c.bias ? d.b.data() : nullptr, c.act, k);
  conv.bind(d.x.data());
  conv.run(d.x.data(), y.data(), pool, c.residual ? d.r.data() : nullptr);
  for (size_t i = 0; i < n; ++i) {
    const float expected = d.expected[i], tol = d.tolerance[i];
    const bool same_nan = std::isnan(y[i]) && std::isnan(expected);
    if (!same_nan && !(std::fabs(y[i] - expected) <= tol)) {
      ADD_FAILURE() << conv.kernel_name() << " " << testing::describe(s) << " groups " << s.groups
                    << (c.residual ? " + residual" : "") << ": output " << i << " (pixel " << i / s.out_c
                    << ", channel " << i % s.out_c << ") is " << y[i] << ", expected " << expected << " +- "
                    << tol;
      break;
    }
  }
  return n;
}

Case random_case(std::mt19937& rng, int g) {
  Case c;
  Conv2dShape& s = c.s;
  s.groups = 2 + int(rng() % 40);  // channels 4 .. 164: every tail of 4, 8 and 16 lanes
  s.in_c = s.out_c = s.groups * g;
  const int kernel_sizes[][2] = {{1, 1}, {3, 3}, {1, 7}, {7, 1}, {5, 5}, {2, 3}};
  const auto& ks = kernel_sizes[rng() % 6];
  s.kernel_h = ks[0];
  s.kernel_w = ks[1];
  s.stride_h = 1 + int(rng() % 2);
  s.stride_w = rng() % 4 == 0 ? 3 - s.stride_h : s.stride_h;
  s.dilation_h = rng() % 4 == 0 ? 2 : 1;
  s.dilation_w = rng() % 4 == 0 ? 2 : 1;
  s.pad_top = int(rng() % ks[0]);
  s.pad_left = int(rng() % ks[1]);
  const int pad_bottom = int(rng() % ks[0]), pad_right = int(rng() % ks[1]);
  s.in_h = std::max(1, s.dilation_h * (ks[0] - 1) + 1 - s.pad_top - pad_bottom) + int(rng() % 6);
  s.in_w = std::max(1, s.dilation_w * (ks[1] - 1) + 1 - s.pad_left - pad_right) + int(rng() % 12);
  set_output(s, pad_bottom, pad_right);
  s.batch = 1 + (rng() % 4 == 0 ? int(rng() % 3) : 0);
  c.act = testing::random_activation(rng);
  c.bias = rng() % 4 != 0;
  c.residual = rng() % 3 == 0;
  return c;
}

TEST(F32Gconv, RandomShapesEveryKernel) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  std::mt19937 rng(20261130);
  size_t compared = 0;
  for (int i = 0; i < 120 && !HasFailure(); ++i) {
    for (const F32GconvKernel* k : kernels) {
      const Case c = random_case(rng, k->group_width);
      ASSERT_TRUE(F32NarrowGroupConv::supports(c.s, c.act)) << testing::describe(c.s);
      compared += check(c, *k, uint32_t(i));
    }
  }
  EXPECT_GT(compared, 0u);
}

// Every channel count up to two vectors of 16 lanes and one group more, on a 3x3 over a map
// with a border on every side, and on 1x1 and 1-pixel maps.
TEST(F32Gconv, EveryChannelTail) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  for (const F32GconvKernel* k : kernels) {
    const int g = k->group_width;
    for (int groups = 2; groups * g <= 32 + g && !HasFailure(); ++groups) {
      check(shape(groups, g, 5, 3, 3, 1, 1), *k, uint32_t(groups));
      check(shape(groups, g, 1, 1, 1, 1, 0), *k, uint32_t(groups));
      check(shape(groups, g, 1, 3, 3, 1, 1), *k, uint32_t(groups));
      check(shape(groups, g, 9, 1, 7, 2, 0), *k, uint32_t(groups));
    }
  }
}

// ResNeXt-50 32x4d's stage-1 3x3 conv (32 groups of 4 at 56x56, and its stride-2 form), with
// ReLU; and 64 groups of 2, two images.
TEST(F32Gconv, LayerSizedShapes) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  for (const F32GconvKernel* k : kernels) {
    for (const int stride : {1, 2}) {
      Case c = shape(128 / k->group_width, k->group_width, 56, 3, 3, stride, 1);
      c.act = Activation::relu();
      c.s.batch = k->group_width == 2 ? 2 : 1;
      set_output(c.s, 1, 1);
      check(c, *k, 11);
    }
  }
}

TEST(F32Gconv, TwoThreadsMatchTheRef) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(5);
  for (int i = 0; i < 30 && !HasFailure(); ++i)
    for (const F32GconvKernel* k : kernels) check(random_case(rng, k->group_width), *k, uint32_t(i), pool.get());
}

// A NaN input reaches exactly the outputs whose windows read it, through ReLU and Clip as in the
// ref (the clamp keeps NaN); a residual is added before the clamp.
TEST(F32Gconv, NaNInputsAndClampOrder) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  for (const F32GconvKernel* k : kernels) {
    for (const Activation act : {Activation::relu(), Activation::clip(-0.5f, 0.5f)}) {
      Case c = shape(9, k->group_width, 6, 3, 3, 1, 1);
      c.act = act;
      c.residual = true;
      std::mt19937 rng(3);
      std::vector<float> x(size_t(c.s.in_h) * c.s.in_w * c.s.in_c);
      fill_uniform(rng, x);
      x[(2 * c.s.in_w + 3) * c.s.in_c + 5] = std::nanf("");
      check(c, *k, 3, nullptr, &x);
    }
    // c + r > 0 only where the ReLU comes after the residual.
    Case c = shape(5, k->group_width, 4, 3, 3, 1, 1);
    const testing::ClampOrderData d = testing::clamp_order_data(c.s);
    std::vector<float> y(d.c.size());
    F32NarrowGroupConv conv(c.s, d.w.data(), d.b.data(), Activation::relu(), *k);
    conv.bind(d.x.data());
    conv.run(d.x.data(), y.data(), nullptr, d.r.data());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], std::max(0.0f, d.c[i] + d.r[i])) << k->name << " output " << i;
  }
}

TEST(F32Gconv, SupportsNarrowEqualGroupsOnly) {
  Case c = shape(32, 4, 8, 3, 3, 1, 1);
  EXPECT_TRUE(F32NarrowGroupConv::supports(c.s, Activation{}));
  c.s.in_c = c.s.out_c = 32 * 8;  // groups of 8: the GEMM tiles'
  EXPECT_FALSE(F32NarrowGroupConv::supports(c.s, Activation{}));
  c.s.in_c = c.s.out_c = c.s.groups = 32;  // depthwise
  EXPECT_FALSE(F32NarrowGroupConv::supports(c.s, Activation{}));
  c.s.in_c = 64;
  c.s.out_c = 128;  // 2 in, 4 out per group
  EXPECT_FALSE(F32NarrowGroupConv::supports(c.s, Activation{}));
  c.s.out_c = 64;
  EXPECT_TRUE(F32NarrowGroupConv::supports(c.s, Activation{}));
  c.s.kernel_d = c.s.in_d = c.s.out_d = 2;  // 3-D
  EXPECT_FALSE(F32NarrowGroupConv::supports(c.s, Activation{}));
  Case dense = shape(1, 4, 8, 3, 3, 1, 1);
  EXPECT_FALSE(F32NarrowGroupConv::supports(dense.s, Activation{}));
  EXPECT_THROW(F32NarrowGroupConv(dense.s, std::vector<float>(16 * 9).data(), nullptr, Activation{}, active_isa()),
               Unsupported);
}

// The cost rule: per output pixel and vector of output channels, kernel taps x G FMAs (two a
// cycle) and in-group broadcasts (one a cycle: one per FMA on the indirect kernel, 10 per 24 on
// the row kernel at 3x3 stride 1; none where a vector is one group), at the level's rate; the tile's cycles are f32_gemm_compute_cycles of the GEMM tile F32Conv takes,
// once per group. At every level this CPU runs, ResNeXt's 56x56 layer takes this driver.
TEST(F32Gconv, CostRuleCountsFmasAndShuffles) {
  const Case c = shape(32, 4, 56, 3, 3, 1, 1);
  for (const F32GconvKernel& k : kF32GconvKernels) {
    if (k.group_width != 4) continue;
    const double vectors = double((128 + k.channel_tile - 1) / k.channel_tile);
    const double fmas = 56.0 * 56 * vectors * 9 * 4;
    // The row kernel: 8 pixels' 3 taps from 10 broadcast columns per kernel row and channel.
    const double shuffles = k.channel_tile == 4 ? 0.0 : fmas * 10 / 24;
    const double expected = std::max(fmas / 2, shuffles) / vector_rate(k.isa);
    EXPECT_DOUBLE_EQ(F32NarrowGroupConv::cycles(c.s, k), expected) << k.name;
  }
  for (const Isa isa : testing::isas_under_test()) {
    if (isa == Isa::scalar) continue;
    const F32GemmKernel& tile = choose_f32_gemm_kernel(isa, 56 * 56, 4, 36);
    EXPECT_DOUBLE_EQ(F32NarrowGroupConv::tile_cycles(c.s, isa), 32 * f32_gemm_compute_cycles(tile, 56 * 56, 4, 36));
    EXPECT_TRUE(F32NarrowGroupConv::faster_than_tile(c.s, isa)) << isa_name(isa);
    EXPECT_LT(F32NarrowGroupConv::cycles(c.s, *choose_f32_gconv_kernel(isa, 4)),
              F32NarrowGroupConv::tile_cycles(c.s, isa));
  }
  // The indirect kernel (a 1x7 kernel): one broadcast per FMA.
  const Case seven = shape(32, 4, 56, 1, 7, 1, 0);
  const F32GconvKernel& k = kF32GconvKernels.front();
  const double seven_fmas = 56.0 * 50 * ((128 + k.channel_tile - 1) / k.channel_tile) * 7 * 4;
  EXPECT_DOUBLE_EQ(F32NarrowGroupConv::cycles(seven.s, k),
                   (k.channel_tile == k.group_width ? seven_fmas / 2 : seven_fmas) / vector_rate(k.isa));
  Case wide = c;
  wide.s.in_c = wide.s.out_c = 256;  // groups of 8: not this driver's
  EXPECT_FALSE(F32NarrowGroupConv::faster_than_tile(wide.s, active_isa()));
}

}  // namespace f32_gconv_test
}  // namespace octet::kernels
