// The INT8 average-pool microkernels (QLinearAveragePool) against q8_avgpool2d_nhwc__ref, byte
// for byte, for every entry of kernels/pool/pool_list.h this CPU runs: random windows, strides,
// dilations and pads (windows past the trailing pad, windows with no input), count_include_pad
// both ways, uint8 and int8 with zero points at the ends, scales that make sums round either
// way, two threads.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/pool/pool2d.h"
#include "kernels/pool/pool_list.h"
#include "kernels/ref/qpool2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace q8_avgpool_test {

Pool2dShape random_shape(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    Pool2dShape s;
    s.batch = uni(1, 2);
    const int channels[] = {1, 3, 16, 17, 64, 65, 130, 256};
    s.channels = channels[uni(0, 7)];
    s.kernel_h = uni(1, 5);
    s.kernel_w = uni(0, 2) == 0 ? uni(1, 5) : s.kernel_h;
    s.stride_h = uni(1, 3);
    s.stride_w = uni(1, 3);
    s.dilation_h = uni(0, 4) == 0 ? 2 : 1;
    s.dilation_w = uni(0, 4) == 0 ? 2 : 1;
    s.in_h = uni(1, 11);
    s.in_w = uni(1, 11);
    s.pad_top = uni(0, s.kernel_h - 1 + (uni(0, 9) == 0));  // now and then a window with no input
    s.pad_left = uni(0, s.kernel_w - 1);
    s.pad_bottom = uni(0, s.kernel_h - 1);
    s.pad_right = uni(0, s.kernel_w - 1);
    const bool ceil = uni(0, 1) == 1;  // windows that run past the trailing pad
    auto extent = [&](int in, int a, int b, int k, int stride, int dilation) {
      const int span = in + a + b - dilation * (k - 1) - 1;
      if (span < 0) return 0;
      return (ceil ? (span + stride - 1) / stride : span / stride) + 1;
    };
    s.out_h = extent(s.in_h, s.pad_top, s.pad_bottom, s.kernel_h, s.stride_h, s.dilation_h);
    s.out_w = extent(s.in_w, s.pad_left, s.pad_right, s.kernel_w, s.stride_w, s.dilation_w);
    if (s.out_h >= 1 && s.out_w >= 1) return s;
  }
}

// Runs `ukernel` through the driver and the reference on the same data; returns outputs checked.
size_t check(std::mt19937& rng, const Pool2dShape& s, Q8 type, bool include_pad, const PoolUkernel<Q8PoolUkernel>& k,
             pthreadpool_t pool = nullptr) {
  std::uniform_int_distribution<int> byte(0, 255), pick(0, 3);
  const int32_t lo = q8_min(type), hi = q8_max(type);
  const int32_t ends[] = {lo, hi, (lo + hi) / 2, lo + byte(rng) % (hi - lo + 1)};
  const int32_t x_zp = ends[pick(rng)], y_zp = ends[pick(rng)];
  std::uniform_real_distribution<float> scale(0.002f, 0.2f);
  const Q8AvgPoolParams params{scale(rng), x_zp, scale(rng), y_zp, lo, hi};
  std::vector<uint8_t> x(size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.channels);
  for (uint8_t& v : x) v = uint8_t(byte(rng));
  const size_t n = size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.channels;
  std::vector<uint8_t> expected(n), y(n + 1, 0x5A);
  const QuantParams xq{params.x_scale, x_zp}, yq{params.y_scale, y_zp};
  if (type == Q8::u8)
    q8_avgpool2d_nhwc__ref(s, include_pad, x.data(), xq, yq, expected.data());
  else
    q8_avgpool2d_nhwc__ref(s, include_pad, reinterpret_cast<const int8_t*>(x.data()), xq, yq,
                           reinterpret_cast<int8_t*>(expected.data()));
  Q8AvgPool2d driver(type, s, include_pad, params, k);
  driver.bind(x.data());
  driver.run(x.data(), y.data(), pool);
  EXPECT_EQ(y[n], 0x5A) << k.name << " wrote past the output";
  for (size_t i = 0; i < n; ++i)
    if (y[i] != expected[i]) {
      ADD_FAILURE() << k.name << ", count_include_pad " << include_pad << ", " << s.in_h << "x" << s.in_w << "x"
                    << s.channels << " k" << s.kernel_h << "x" << s.kernel_w << " s" << s.stride_h << "x" << s.stride_w
                    << " d" << s.dilation_h << "x" << s.dilation_w << " pads " << s.pad_top << "," << s.pad_left << ","
                    << s.pad_bottom << "," << s.pad_right << " -> " << s.out_h << "x" << s.out_w << ": output " << i
                    << " is " << int(y[i]) << ", expected " << int(expected[i]);
      break;
    }
  return n;
}

// The list entries this run tests; none skips the calling test (testing::runnable_entries).
std::vector<const PoolUkernel<Q8PoolUkernel>*> runnable(std::span<const PoolUkernel<Q8PoolUkernel>> list) {
  return testing::runnable_entries(list);
}

TEST(Q8AvgPool, RandomShapesEveryKernelIsBitExact) {
  std::mt19937 rng(20261128);
  for (const Q8 type : {Q8::u8, Q8::s8}) {
    const auto kernels = runnable(type == Q8::u8 ? kQu8AvgPoolUkernels : kQs8AvgPoolUkernels);
    for (int i = 0; i < 250 && !HasFailure(); ++i) {
      const Pool2dShape s = random_shape(rng);
      for (const auto* k : kernels) check(rng, s, type, i % 2 == 1, *k);
    }
  }
}

// 3-D windows (QDQ AveragePool of video CNNs): a random 2-D shape given a depth of 1..6 with
// kernels 1..3 deep, strides 1..3, pads up to the kernel (planes with no input), ceil_mode
// windows past the trailing pad, dilation in depth.
TEST(Q8AvgPool, ThreeDimensionalEveryKernelIsBitExact) {
  std::mt19937 rng(20261129);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  testing::Pool pool(pthreadpool_create(2));
  for (const Q8 type : {Q8::u8, Q8::s8}) {
    const auto kernels = runnable(type == Q8::u8 ? kQu8AvgPoolUkernels : kQs8AvgPoolUkernels);
    for (int i = 0; i < 80 && !HasFailure(); ++i) {
      Pool2dShape s = random_shape(rng);
      do {
        s.kernel_d = uni(1, 3), s.stride_d = uni(1, 3), s.dilation_d = uni(0, 4) == 0 ? 2 : 1;
        s.in_d = uni(1, 6), s.pad_front = uni(0, s.kernel_d), s.pad_back = uni(0, s.kernel_d - 1);
        const int span = s.in_d + s.pad_front + s.pad_back - s.dilation_d * (s.kernel_d - 1) - 1;
        s.out_d = span < 0 ? 0 : (i % 2 ? (span + s.stride_d - 1) / s.stride_d : span / s.stride_d) + 1;
      } while (s.out_d < 1);
      for (const auto* k : kernels) check(rng, s, type, i % 4 >= 2, *k, i % 3 == 0 ? pool.get() : nullptr);
    }
  }
}

// Inception's 3x3 stride-1 pools with count_include_pad and DenseNet's 2x2 stride-2
// transitions, at their channel counts, on two threads.
TEST(Q8AvgPool, ModelLayersTwoThreads) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(5);
  Pool2dShape inception;
  inception.in_h = inception.in_w = inception.out_h = inception.out_w = 17;
  inception.channels = 768;
  inception.kernel_h = inception.kernel_w = 3;
  inception.pad_top = inception.pad_left = inception.pad_bottom = inception.pad_right = 1;
  Pool2dShape transition;
  transition.in_h = transition.in_w = 28;
  transition.out_h = transition.out_w = 14;
  transition.channels = 256;
  transition.kernel_h = transition.kernel_w = transition.stride_h = transition.stride_w = 2;
  for (const auto* k : runnable(kQu8AvgPoolUkernels)) {
    check(rng, inception, Q8::u8, true, *k, pool.get());
    check(rng, transition, Q8::u8, false, *k, pool.get());
  }
}

// Round scales as quantizers write them (0.05, 0.02): the dequantized sums land on ties, where a
// multiply-add fused into one FMA (which -mfma invites) rounds differently from the reference.
TEST(Q8AvgPool, RoundScalesOfRealModels) {
  Pool2dShape s;
  s.batch = 2;
  s.in_h = 8;
  s.in_w = 7;
  s.channels = 5;
  s.kernel_h = s.kernel_w = 3;
  s.stride_h = s.stride_w = 2;
  s.pad_top = s.pad_bottom = s.pad_right = 1;
  s.out_h = 4;
  s.out_w = 3;
  const Q8AvgPoolParams params{0.05f, 128, 0.02f, 125, 0, 255};
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const auto* k : runnable(kQu8AvgPoolUkernels)) {
    for (int it = 0; it < 200 && !HasFailure(); ++it) {
      std::vector<uint8_t> x(size_t(s.batch) * s.in_h * s.in_w * s.channels);
      for (uint8_t& v : x) v = uint8_t(byte(rng));
      std::vector<uint8_t> expected(size_t(s.batch) * s.out_h * s.out_w * s.channels), y(expected.size());
      q8_avgpool2d_nhwc__ref(s, it % 2 == 1, x.data(), QuantParams{0.05f, 128}, QuantParams{0.02f, 125},
                             expected.data());
      Q8AvgPool2d driver(Q8::u8, s, it % 2 == 1, params, *k);
      driver.bind(x.data());
      driver.run(x.data(), y.data(), nullptr);
      EXPECT_EQ(y, expected) << k->name << ", iteration " << it;
    }
  }
}

TEST(Q8AvgPool, TheDriverPicksAMicrokernelAboveScalar) {
  Pool2dShape s;
  s.in_h = s.in_w = 4;
  s.out_h = s.out_w = 2;
  s.kernel_h = s.kernel_w = s.stride_h = s.stride_w = 2;
  s.channels = 8;
  const Q8AvgPoolParams params{0.1f, 128, 0.1f, 128, 0, 255};
  EXPECT_EQ(Q8AvgPool2d(Q8::u8, s, false, params, Isa::scalar).kernel_name(), "q8_avgpool2d_nhwc__ref");
  if (runnable(kQu8AvgPoolUkernels).empty()) return;  // skipped
  EXPECT_NE(Q8AvgPool2d(Q8::u8, s, false, params, active_isa()).kernel_name(), "q8_avgpool2d_nhwc__ref");
}

}  // namespace q8_avgpool_test
}  // namespace octet::kernels
