// Q8GroupedConv (one dense Q8Conv per group) against q8_conv2d_nhwc__ref, byte for byte, at
// every ISA level this CPU runs: random grouped shapes with u8 and s8 activations, per-tensor
// and per-channel multipliers, extreme values and zero points, and two threads.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/q8_grouped_conv.h"
#include "kernels/ref/qconv2d.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace q8_grouped_conv_test {

using testing::Fill;

// The SIMD levels this run tests; none skips the calling test (testing::skip_when_none_run).
std::vector<Isa> simd_levels() {
  std::vector<Isa> out;
  bool tested_before = false;
  for (Isa isa : runnable_isas()) {
    if (isa == Isa::scalar) continue;
    if (testing::untested_reason(isa) == nullptr) out.push_back(isa);
    else tested_before = true;
  }
  testing::skip_when_none_run(out.size(), "INT8 grouped conv", tested_before);
  return out;
}

Conv2dShape random_grouped_shape(std::mt19937& rng) {
  Conv2dShape s;
  const int groups[] = {2, 3, 4, 8, 32};
  const int widths[] = {1, 2, 4, 5, 8, 16, 24};
  s.groups = groups[rng() % 5];
  s.in_c = s.groups * widths[rng() % 7];
  s.out_c = s.groups * widths[rng() % 7];
  s.kernel_h = s.kernel_w = rng() % 3 == 0 ? 1 : 3;
  s.stride_h = s.stride_w = 1 + int(rng() % 2);
  s.pad_top = s.pad_left = s.kernel_h / 2;
  s.in_h = 1 + int(rng() % 9);
  s.in_w = 1 + int(rng() % 9);
  s.out_h = (s.in_h + 2 * s.pad_top - s.kernel_h) / s.stride_h + 1;
  s.out_w = (s.in_w + 2 * s.pad_left - s.kernel_w) / s.stride_w + 1;
  s.batch = 1 + int(rng() % 2);
  return s;
}

// Runs the grouped conv at `isa` and the reference on the same data; returns the outputs checked.
size_t check(std::mt19937& rng, const Conv2dShape& s, Q8 x_type, Q8 y_type, Fill fill, bool per_channel, Isa isa,
             pthreadpool_t pool = nullptr) {
  const size_t taps = size_t(s.kernel_h) * s.kernel_w;
  const size_t x_size = size_t(s.batch) * s.in_h * s.in_w * s.in_c;
  const size_t y_size = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
  const int32_t x_zp = fill == Fill::extreme ? testing::extreme_zero_point(rng, x_type) : testing::random_zero_point(rng, x_type);
  const std::vector<uint8_t> x = testing::random_activations(rng, x_size, x_type, x_zp, fill);
  const std::vector<int8_t> w = testing::random_weights(rng, size_t(s.out_c) * (s.in_c / s.groups) * taps, fill);
  const std::vector<int32_t> b = testing::random_bias(rng, size_t(s.out_c));
  const int32_t w_zero_point[] = {0};
  std::vector<int32_t> acc(y_size);
  testing::with_q8_types(x_type, x_type, [&](auto x_tag, auto) {
    using X = decltype(x_tag);
    q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(x.data()), x_zp, w.data(), w_zero_point,
                                       b.data(), acc.data());
  });
  const std::vector<float> multiplier = testing::fitted_multipliers(rng, acc, size_t(s.out_c), per_channel, false);
  const int32_t y_zp = testing::random_zero_point(rng, y_type);
  const Requantization rq{multiplier, y_zp, q8_min(y_type), q8_max(y_type)};
  std::vector<uint8_t> expected(y_size), y(y_size + 1, 0x5A);
  testing::with_q8_types(x_type, y_type, [&](auto x_tag, auto y_tag) {
    using X = decltype(x_tag);
    using Y = decltype(y_tag);
    q8_conv2d_nhwc__ref<X, int8_t, Y>(s, reinterpret_cast<const X*>(x.data()), x_zp, w.data(), w_zero_point, b.data(),
                                      rq, reinterpret_cast<Y*>(expected.data()));
  });
  Q8GroupedConv conv(s, x_type, x_zp, w.data(), b.data(), rq, y_type, isa);
  conv.bind(x.data());
  conv.run(x.data(), y.data(), pool);
  EXPECT_EQ(y[y_size], 0x5A) << conv.kernel_name() << " wrote past the output";
  for (size_t i = 0; i < y_size; ++i)
    if (y[i] != expected[i]) {
      ADD_FAILURE() << conv.kernel_name() << " " << testing::describe(s) << ", x " << q8_name(x_type) << " zp " << x_zp
                    << ": output " << i << " (channel " << i % s.out_c << ") is " << int(y[i]) << ", expected "
                    << int(expected[i]);
      break;
    }
  return y_size;
}

TEST(Q8GroupedConv, RandomShapesEveryLevel) {
  const auto levels = simd_levels();
  if (levels.empty()) return;  // skipped
  std::mt19937 rng(20261128);
  size_t checked = 0;
  for (int i = 0; i < 120 && !HasFailure(); ++i) {
    const Conv2dShape s = random_grouped_shape(rng);
    const Q8 x_type = i % 2 ? Q8::u8 : Q8::s8, y_type = i % 3 ? Q8::u8 : Q8::s8;
    for (Isa isa : levels) checked += check(rng, s, x_type, y_type, Fill::random, i % 4 != 0, isa);
  }
  EXPECT_GT(checked, 0u);
}

// All-extreme activations against +-127 weights: the int16 pair sums of vpmaddubsw would
// saturate; every group's kernel must still match the reference.
TEST(Q8GroupedConv, ExtremeValuesAndZeroPoints) {
  const auto levels = simd_levels();
  if (levels.empty()) return;  // skipped
  std::mt19937 rng(7);
  for (int i = 0; i < 30 && !HasFailure(); ++i) {
    const Conv2dShape s = random_grouped_shape(rng);
    for (Isa isa : levels) check(rng, s, i % 2 ? Q8::u8 : Q8::s8, Q8::u8, Fill::extreme, true, isa);
  }
}

TEST(Q8GroupedConv, TwoThreads) {
  const auto levels = simd_levels();
  if (levels.empty()) return;  // skipped
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(3);
  Conv2dShape s;  // ResNeXt-50's first-stage grouped 3x3: 32 groups of 4 channels
  s.in_c = s.out_c = 128;
  s.groups = 32;
  s.in_h = s.in_w = s.out_h = s.out_w = 28;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  for (Isa isa : levels) check(rng, s, Q8::u8, Q8::u8, Fill::random, true, isa, pool.get());
}

// Float output (dynamic quantization's ConvInteger -> Cast -> Mul -> Add): every group's
// y = clamp(float(acc) * (x_scale * w_scale[c]) + bias[c], lo, hi), exactly.
TEST(Q8GroupedConv, FloatOutputEveryLevel) {
  const auto levels = simd_levels();
  if (levels.empty()) return;  // skipped
  std::mt19937 rng(11);
  size_t checked = 0;
  for (int i = 0; i < 40 && !HasFailure(); ++i) {
    const Conv2dShape s = random_grouped_shape(rng);
    const Q8 x_type = i % 2 ? Q8::u8 : Q8::s8;
    const int32_t x_zp = testing::random_zero_point(rng, x_type);
    const size_t y_size = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
    const auto x = testing::random_activations(rng, size_t(s.batch) * s.in_h * s.in_w * s.in_c, x_type, x_zp,
                                               Fill::random);
    const auto w = testing::random_weights(rng, size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_h * s.kernel_w,
                                           Fill::random);
    DequantizedOutput out;
    std::uniform_real_distribution<float> unit(0.001f, 0.02f);
    for (int c = 0; c < (i % 3 ? s.out_c : 1); ++c) out.w_scale.push_back(unit(rng));
    if (i % 2) out.bias.assign(size_t(s.out_c), 0.25f);
    if (i % 4 == 0) out.lo = 0.0f;  // a fused Relu
    const float x_scale = 0.05f;
    std::vector<int32_t> acc(y_size);
    const int32_t w_zero_point[] = {0};
    testing::with_q8_types(x_type, x_type, [&](auto x_tag, auto) {
      using X = decltype(x_tag);
      q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(x.data()), x_zp, w.data(), w_zero_point,
                                         nullptr, acc.data());
    });
    for (Isa isa : levels) {
      Q8GroupedConv conv(s, x_type, w.data(), out, isa);
      std::vector<float> y(y_size, std::nanf(""));
      conv.run_dequantized(x.data(), x_scale, x_zp, y.data(), nullptr);
      for (size_t k = 0; k < y_size; ++k) {
        const size_t c = k % size_t(s.out_c);
        const float scale = x_scale * out.w_scale[out.w_scale.size() == 1 ? 0 : c];
        const float product = float(acc[k]) * scale;
        const float expected = std::clamp(out.bias.empty() ? product : product + out.bias[c], out.lo, out.hi);
        if (y[k] != expected) {
          ADD_FAILURE() << conv.kernel_name() << " " << testing::describe(s) << ": output " << k << " is " << y[k]
                        << ", expected " << expected << " (acc " << acc[k] << ")";
          break;
        }
      }
      checked += y_size;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(Q8GroupedConv, WhatItTakes) {
  Conv2dShape s;
  s.in_c = 8;
  s.out_c = 12;
  s.groups = 4;
  EXPECT_TRUE(Q8GroupedConv::supports(s, Q8::u8, Q8::u8));
  s.groups = 3;  // does not divide 8
  EXPECT_FALSE(Q8GroupedConv::supports(s, Q8::u8, Q8::u8));
  s.groups = 1;  // dense: Q8Conv's
  EXPECT_FALSE(Q8GroupedConv::supports(s, Q8::u8, Q8::u8));
}

}  // namespace q8_grouped_conv_test
}  // namespace octet::kernels
