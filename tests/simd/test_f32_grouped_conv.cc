// F32Conv on grouped convolutions (ResNeXt's 32 groups, RegNet's group widths, a channel
// multiplier of a depthwise conv) against f32_conv2d_nhwc__ref, for every entry of
// kernels/gemm/f32_gemm_list.h this CPU runs: random shapes, group widths around the tile, a fused
// residual, and two threads.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/f32_conv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace f32_grouped_conv_test {

using testing::absolute;
using testing::fill_uniform;

// The list entries this run tests; none skips the calling test (testing::skip_when_none_run).
std::vector<const F32GemmKernel*> runnable_kernels() {
  return testing::runnable_entries(f32_gemm_kernels(), [](const F32GemmKernel& k) { return k.igemm_name; }, "FP32 IGEMM");
}

struct GroupedCase {
  Conv2dShape s;
  Activation act;
  bool bias = true, residual = false;
};

// Runs the case on kernel k (on `pool`) and on the ref, output by output within 1e-5 of
// sum|x*w| + |b|. Returns the number of outputs compared.
size_t check(const GroupedCase& c, const F32GemmKernel& k, uint32_t seed, pthreadpool_t pool = nullptr) {
  const Conv2dShape& s = c.s;
  const testing::F32ConvCheck d = testing::f32_conv_check(s, c.act, c.bias, c.residual, seed);
  const size_t n = d.expected.size();
  std::vector<float> y(n, std::nanf(""));
  F32Conv conv(s, d.w.data(), c.bias ? d.b.data() : nullptr, c.act, k);
  conv.bind(d.x.data());
  conv.run(d.x.data(), y.data(), pool, c.residual ? d.r.data() : nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!(std::fabs(y[i] - d.expected[i]) <= d.tolerance[i])) {
      ADD_FAILURE() << conv.kernel_name() << " " << testing::describe(s) << (c.residual ? " + residual" : "")
                    << ": output " << i << " (channel " << i % s.out_c << ", group "
                    << i % s.out_c / (s.out_c / s.groups) << ") is " << y[i] << ", expected " << d.expected[i]
                    << " +- " << d.tolerance[i];
      break;
    }
  }
  return n;
}

GroupedCase random_case(std::mt19937& rng) {
  GroupedCase c;
  Conv2dShape& s = c.s;
  const int groups[] = {2, 3, 4, 8, 13, 32};
  s.groups = groups[rng() % 6];
  const int widths[] = {1, 2, 3, 4, 7, 8, 16, 17, 24, 33};  // channels per group, around every NR
  s.in_c = s.groups * widths[rng() % 10];
  s.out_c = s.groups * widths[rng() % 10];
  const int kernel_sizes[][2] = {{1, 1}, {3, 3}, {1, 3}, {3, 1}, {5, 5}};
  const auto& ks = kernel_sizes[rng() % 5];
  s.kernel_h = ks[0];
  s.kernel_w = ks[1];
  s.stride_h = s.stride_w = 1 + int(rng() % 2);
  s.dilation_h = s.dilation_w = rng() % 4 == 0 ? 2 : 1;
  s.pad_top = int(rng() % ks[0]);
  s.pad_left = int(rng() % ks[1]);
  const int pad_bottom = int(rng() % ks[0]), pad_right = int(rng() % ks[1]);
  s.in_h = std::max(1, s.dilation_h * (ks[0] - 1) + 1 - s.pad_top - pad_bottom) + int(rng() % 7);
  s.in_w = std::max(1, s.dilation_w * (ks[1] - 1) + 1 - s.pad_left - pad_right) + int(rng() % 7);
  s.out_h = (s.in_h + s.pad_top + pad_bottom - s.dilation_h * (s.kernel_h - 1) - 1) / s.stride_h + 1;
  s.out_w = (s.in_w + s.pad_left + pad_right - s.dilation_w * (s.kernel_w - 1) - 1) / s.stride_w + 1;
  s.batch = 1 + (rng() % 4 == 0 ? int(rng() % 3) : 0);
  c.act = testing::random_activation(rng);
  c.bias = rng() % 4 != 0;
  c.residual = rng() % 3 == 0;
  return c;
}

TEST(F32GroupedConv, RandomShapesEveryKernel) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  std::mt19937 rng(20261128);
  size_t compared = 0;
  for (int i = 0; i < 150 && !HasFailure(); ++i) {
    const GroupedCase c = random_case(rng);
    ASSERT_TRUE(F32Conv::supports(c.s, c.act)) << testing::describe(c.s);
    for (const F32GemmKernel* k : kernels) compared += check(c, *k, uint32_t(i));
  }
  EXPECT_GT(compared, 0u);
}

// ResNeXt-50's 3x3 grouped conv (32 groups of 4 channels, at its second stage's 28x28) and
// RegNetX-400MF's (groups of 16), one image.
TEST(F32GroupedConv, LayerSizedShapes) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  for (const auto& [c, groups, hw] : {std::tuple{128, 32, 28}, std::tuple{64, 4, 28}, std::tuple{160, 10, 14}}) {
    GroupedCase g;
    g.s.in_c = g.s.out_c = c;
    g.s.groups = groups;
    g.s.in_h = g.s.in_w = g.s.out_h = g.s.out_w = hw;
    g.s.kernel_h = g.s.kernel_w = 3;
    g.s.pad_top = g.s.pad_left = 1;
    g.act = Activation::relu();
    for (const F32GemmKernel* k : kernels) check(g, *k, 7);
  }
}

TEST(F32GroupedConv, TwoThreadsMatchTheRef) {
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(5);
  for (int i = 0; i < 40 && !HasFailure(); ++i) {
    const GroupedCase c = random_case(rng);
    for (const F32GemmKernel* k : kernels) check(c, *k, uint32_t(i), pool.get());
  }
}

// A group count that does not divide the channels is not a conv this driver takes.
TEST(F32GroupedConv, ChannelsTheGroupsDoNotDivideAreUnsupported) {
  Conv2dShape s;
  s.in_c = 6;
  s.out_c = 4;
  s.groups = 4;
  EXPECT_FALSE(F32Conv::supports(s, Activation{}));
}

}  // namespace f32_grouped_conv_test
}  // namespace octet::kernels
