// Q8NarrowGroupConv on every row of kernels/conv/q8_gconv_list.h this CPU runs, against
// q8_conv2d_nhwc__ref byte for byte (requantized) and the reference accumulators through the float
// epilogue exactly (dynamic quantization): groups of 4, 8, 16, 32 and 48 channels, every channel tail of a
// 16-channel block, 1x1 / 3x3 / 5x5 / 1x7 / 7x1 kernels, strides, dilations, asymmetric pads,
// 1-pixel maps, batches, u8 and s8 on both sides, per-tensor and per-channel multipliers, extreme
// values and zero points, two threads; and that the plan takes it where a kernel runs. The VEX
// AVX-VNNI rows run here through their emulated copy (q8_gconv__avxvnni_emulated.cc) on any AVX2
// CPU, and as themselves where the CPU has AVX-VNNI.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/q8_gconv_list.h"
#include "kernels/conv/q8_narrow_group_conv.h"
#include "kernels/fallback.h"
#include "kernels/ref/qconv2d.h"
#include "tests/simd/q8_gconv_avxvnni_emulated.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace q8_gconv_test {

using testing::Fill;

#if OCTET_ARCH_X86
namespace emulated = x86::avxvnni_emulated;

struct EmulatedRow {
  const char* name;
  Q8GconvFn fn, fn_f32;
};
constexpr EmulatedRow kEmulated[] = {
    {"qu8s8_gconv_g4__avxvnni", &emulated::qu8s8_gconv_g4, &emulated::qu8s8_gconv_g4_f32},
    {"qu8s8_gconv_g8__avxvnni", &emulated::qu8s8_gconv_g8, &emulated::qu8s8_gconv_g8_f32},
    {"qu8s8_gconv_g16__avxvnni", &emulated::qu8s8_gconv_g16, &emulated::qu8s8_gconv_g16_f32},
    {"qs8s8_gconv_g4__avxvnni", &emulated::qs8s8_gconv_g4, &emulated::qs8s8_gconv_g4_f32},
    {"qs8s8_gconv_g8__avxvnni", &emulated::qs8s8_gconv_g8, &emulated::qs8s8_gconv_g8_f32},
    {"qs8s8_gconv_g16__avxvnni", &emulated::qs8s8_gconv_g16, &emulated::qs8s8_gconv_g16_f32},
};

// Each avxvnni row of the list with its emulated functions in place of the real ones, at level
// avx2 (what the emulated copy runs on; the driver refuses a level the CPU lacks).
const std::vector<Q8GconvKernel>& emulated_rows() {
  static const std::vector<Q8GconvKernel> rows = [] {
    std::vector<Q8GconvKernel> out;
    for (const EmulatedRow& e : kEmulated)
      for (const Q8GconvKernel& k : kQ8GconvKernels)
        if (std::string(k.name) == e.name) {
          Q8GconvKernel row = k;
          row.fn = e.fn;
          row.fn_f32 = e.fn_f32;
          row.isa = Isa::avx2;
          out.push_back(row);
        }
    return out;
  }();
  return rows;
}
#endif

// Every row this CPU runs, and on x86 with AVX2 the emulated avxvnni rows too: each test below
// runs on all of them.
std::vector<const Q8GconvKernel*> runnable_kernels() {
  std::vector<const Q8GconvKernel*> rows = testing::runnable_entries(kQ8GconvKernels);
#if OCTET_ARCH_X86
  if (isa_supported(Isa::avx2))
    for (const Q8GconvKernel& k : emulated_rows()) rows.push_back(&k);
#endif
  return rows;
}

// groups of g channels; kernel kh x kw, stride, dilation, pads top/left/bottom/right.
Conv2dShape shape(int groups, int g, int h, int w, int kh, int kw, int stride, int dilation, int pt, int pl, int pb,
                  int pr, int batch = 1) {
  Conv2dShape s;
  s.groups = groups;
  s.in_c = s.out_c = groups * g;
  s.in_h = h;
  s.in_w = w;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = pt;
  s.pad_left = pl;
  s.out_h = (h + pt + pb - dilation * (kh - 1) - 1) / stride + 1;
  s.out_w = (w + pl + pr - dilation * (kw - 1) - 1) / stride + 1;
  s.batch = batch;
  return s;
}

// A group width the row runs: its own, or for the g16 rows 16, 32 or 48.
int width_for(std::mt19937& rng, const Q8GconvKernel& k) {
  return k.group_width == 16 ? 16 * (1 + int(rng() % 3)) : k.group_width;
}

Conv2dShape random_shape(std::mt19937& rng, int g) {
  const int kernels[][2] = {{1, 1}, {3, 3}, {3, 3}, {5, 5}, {1, 7}, {7, 1}, {2, 2}};
  const auto& k = kernels[rng() % 7];
  const int dilation = rng() % 4 == 0 ? 2 : 1, stride = 1 + int(rng() % 2);
  const int h = 1 + int(rng() % 9), w = 1 + int(rng() % 11);
  auto pad = [&](int kernel) { return int(rng() % unsigned(kernel)); };
  Conv2dShape s = shape(1 + int(rng() % 13), g, h, w, k[0], k[1], stride, dilation, pad(k[0]), pad(k[1]), pad(k[0]),
                        pad(k[1]), 1 + int(rng() % 3));
  if (s.out_h < 1 || s.out_w < 1) s = shape(s.groups, g, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, s.batch);
  if (s.groups == 1) s = shape(2, g, s.in_h, s.in_w, 1, 1, 1, 1, 0, 0, 0, 0, s.batch);
  return s;
}

struct Data {
  int32_t x_zp;
  std::vector<uint8_t> x;
  std::vector<int8_t> w;
  std::vector<int32_t> b;
};

Data random_data(std::mt19937& rng, const Conv2dShape& s, Q8 x_type, Fill fill) {
  Data d;
  d.x_zp = fill == Fill::extreme ? testing::extreme_zero_point(rng, x_type) : testing::random_zero_point(rng, x_type);
  d.x = testing::random_activations(rng, size_t(s.batch) * s.in_h * s.in_w * s.in_c, x_type, d.x_zp, fill);
  d.w = testing::random_weights(rng, size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_h * s.kernel_w, fill);
  d.b = testing::random_bias(rng, size_t(s.out_c));
  return d;
}

std::vector<int32_t> reference_accumulators(const Conv2dShape& s, Q8 x_type, const Data& d, bool bias) {
  std::vector<int32_t> acc(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  const int32_t w_zero_point[] = {0};
  testing::with_q8_types(x_type, x_type, [&](auto x_tag, auto) {
    using X = decltype(x_tag);
    q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(d.x.data()), d.x_zp, d.w.data(), w_zero_point,
                                       bias ? d.b.data() : nullptr, acc.data());
  });
  return acc;
}

// Requantized output of kernel k against the reference; returns the outputs compared.
size_t check(std::mt19937& rng, const Conv2dShape& s, Q8 y_type, Fill fill, bool per_channel, const Q8GconvKernel& k,
             pthreadpool_t pool = nullptr) {
  const Q8 x_type = k.x_type;
  const Data d = random_data(rng, s, x_type, fill);
  const std::vector<int32_t> acc = reference_accumulators(s, x_type, d, true);
  const std::vector<float> multiplier = testing::fitted_multipliers(rng, acc, size_t(s.out_c), per_channel, false);
  const int32_t y_zp = testing::random_zero_point(rng, y_type);
  // A narrower clamp than the type's now and then (a fused Relu6-like bound).
  const int32_t qmin = rng() % 4 == 0 ? y_zp : q8_min(y_type), qmax = q8_max(y_type);
  const Requantization rq{multiplier, y_zp, qmin, qmax};
  const size_t n = acc.size();
  std::vector<uint8_t> expected(n), y(n + 1, 0x5A);
  testing::with_q8_types(x_type, y_type, [&](auto x_tag, auto y_tag) {
    using X = decltype(x_tag);
    using Y = decltype(y_tag);
    const int32_t w_zero_point[] = {0};
    q8_conv2d_nhwc__ref<X, int8_t, Y>(s, reinterpret_cast<const X*>(d.x.data()), d.x_zp, d.w.data(), w_zero_point,
                                      d.b.data(), rq, reinterpret_cast<Y*>(expected.data()));
  });
  Q8NarrowGroupConv conv(s, x_type, d.x_zp, d.w.data(), d.b.data(), &rq, nullptr, y_type, k);
  conv.bind(d.x.data());
  conv.run(d.x.data(), y.data(), pool);
  EXPECT_EQ(y[n], 0x5A) << k.name << " wrote past the output";
  for (size_t i = 0; i < n; ++i)
    if (y[i] != expected[i]) {
      ADD_FAILURE() << k.name << " " << testing::describe(s) << " groups " << s.groups << ", x zp " << d.x_zp
                    << ", y " << q8_name(y_type) << ": output " << i << " (pixel " << i / s.out_c << ", channel "
                    << i % s.out_c << ") is " << int(y[i]) << ", expected " << int(expected[i]);
      break;
    }
  return n;
}

// Float output: y = clamp(float(acc) * (x_scale * w_scale[c]) + bias[c], lo, hi), exactly, and the
// range of what it wrote.
size_t check_float(std::mt19937& rng, const Conv2dShape& s, Fill fill, int variant, const Q8GconvKernel& k,
                   pthreadpool_t pool = nullptr) {
  const Q8 x_type = k.x_type;
  const Data d = random_data(rng, s, x_type, fill);
  const std::vector<int32_t> acc = reference_accumulators(s, x_type, d, false);
  DequantizedOutput out;
  std::uniform_real_distribution<float> unit(0.001f, 0.02f);
  for (int c = 0; c < (variant % 3 ? s.out_c : 1); ++c) out.w_scale.push_back(unit(rng));
  if (variant % 2) out.bias.assign(size_t(s.out_c), 0.25f);
  if (variant % 4 == 0) out.lo = 0.0f;  // a fused Relu
  const float x_scale = 0.05f;
  Q8NarrowGroupConv conv(s, x_type, 0, d.w.data(), nullptr, nullptr, &out, x_type, k);
  conv.bind(d.x.data());
  std::vector<float> y(acc.size() + 1, std::nanf(""));
  OutputRange range(k.isa);
  range.reset();
  conv.run_dequantized(d.x.data(), x_scale, d.x_zp, y.data(), pool, &range);
  EXPECT_TRUE(std::isnan(y.back())) << k.name << " wrote past the output";
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t c = i % size_t(s.out_c);
    const float scale = x_scale * out.w_scale[out.w_scale.size() == 1 ? 0 : c];
    const float product = float(acc[i]) * scale;
    const float expected = std::clamp(out.bias.empty() ? product : product + out.bias[c], out.lo, out.hi);
    lo = std::min(lo, expected);
    hi = std::max(hi, expected);
    if (y[i] != expected) {
      ADD_FAILURE() << k.name << " (float out) " << testing::describe(s) << " groups " << s.groups << ", x zp "
                    << d.x_zp << ": output " << i << " is " << y[i] << ", expected " << expected << " (acc " << acc[i]
                    << ")";
      break;
    }
  }
  EXPECT_EQ(range.get().min, lo) << k.name;
  EXPECT_EQ(range.get().max, hi) << k.name;
  return acc.size();
}

TEST(Q8NarrowGroupConv, RandomShapesEveryKernel) {
  std::mt19937 rng(20261201);
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  size_t checked = 0;
  for (const Q8GconvKernel* k : kernels)
    for (int i = 0; i < 60 && !HasFailure(); ++i)
      checked += check(rng, random_shape(rng, width_for(rng, *k)), i % 3 ? Q8::u8 : Q8::s8, Fill::random, i % 4 != 0, *k);
  EXPECT_GT(checked, 0u);
}

// Every channel tail of a block (C % 16 = 4, 8, 12 and 0 at G = 4; 8 and 0 at G = 8), with
// pixels left over from the pixel tile (1 to 9 output columns).
TEST(Q8NarrowGroupConv, EveryChannelAndPixelTail) {
  std::mt19937 rng(5);
  for (const Q8GconvKernel* k : runnable_kernels())
    for (int groups = 2; groups <= (k->group_width == 4 ? 13 : k->group_width == 8 ? 7 : 5) && !HasFailure(); ++groups)
      for (int w = 1; w <= 9; w += 4)
        check(rng, shape(groups, width_for(rng, *k), 3, w, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Fill::random, true, *k);
}

// All-extreme activations and zero points against +-127 weights: the int32 sums and the fold
// must stay exact.
TEST(Q8NarrowGroupConv, ExtremeValuesAndZeroPoints) {
  std::mt19937 rng(7);
  for (const Q8GconvKernel* k : runnable_kernels())
    for (int i = 0; i < 20 && !HasFailure(); ++i)
      check(rng, random_shape(rng, width_for(rng, *k)), i % 2 ? Q8::u8 : Q8::s8, Fill::extreme, true, *k);
}

TEST(Q8NarrowGroupConv, FloatOutputEveryKernel) {
  std::mt19937 rng(11);
  const auto kernels = runnable_kernels();
  if (kernels.empty()) return;  // skipped
  size_t checked = 0;
  for (const Q8GconvKernel* k : kernels)
    for (int i = 0; i < 40 && !HasFailure(); ++i)
      checked += check_float(rng, random_shape(rng, width_for(rng, *k)), i % 5 == 0 ? Fill::extreme : Fill::random, i, *k);
  EXPECT_GT(checked, 0u);
}

// ResNeXt-50's first- and third-stage grouped 3x3s (32 groups of 4, of 16) and RegNetY-400MF's (6
// groups of 8) at stride 2, over two images, on two threads.
TEST(Q8NarrowGroupConv, TwoThreads) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(3);
  for (const Q8GconvKernel* k : runnable_kernels()) {
    const Conv2dShape s = k->group_width == 4   ? shape(32, 4, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 2)
                          : k->group_width == 8 ? shape(6, 8, 28, 28, 3, 3, 2, 1, 1, 1, 1, 1, 2)
                                                : shape(32, 16, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 2);
    check(rng, s, Q8::u8, Fill::random, true, *k, pool.get());
    check_float(rng, s, Fill::random, 1, *k, pool.get());
  }
}


#if OCTET_ARCH_X86
// Every avxvnni row of the list has its emulated twin (a row added to the list and not to
// kEmulated, or renamed, fails here instead of going untested); the tests above run them.
TEST(Q8NarrowGroupConv, AvxVnniRowsEmulated) {
  if (!isa_supported(Isa::avx2)) {
    GTEST_SKIP() << testing::kIsaNotOnCpu << "avx2: the emulated AVX-VNNI rows need it";
  }
  size_t listed = 0;
  for (const Q8GconvKernel& k : kQ8GconvKernels) listed += k.isa == Isa::avxvnni;
  const std::vector<Q8GconvKernel>& rows = emulated_rows();
  ASSERT_EQ(rows.size(), std::size(kEmulated));
  ASSERT_EQ(rows.size(), listed);
}
#endif

TEST(Q8NarrowGroupConv, WhatItTakes) {
  const Conv2dShape g4 = shape(32, 4, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1);
  EXPECT_TRUE(Q8NarrowGroupConv::supports(g4, Q8::u8, Q8::u8));
  EXPECT_TRUE(Q8NarrowGroupConv::supports(shape(6, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::s8, Q8::u8));
  EXPECT_TRUE(Q8NarrowGroupConv::supports(shape(8, 16, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Q8::u8));
  EXPECT_TRUE(Q8NarrowGroupConv::supports(shape(2, 64, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Q8::u8));
  EXPECT_FALSE(Q8NarrowGroupConv::supports(shape(8, 24, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Q8::u8));  // G 24
  EXPECT_FALSE(Q8NarrowGroupConv::supports(shape(8, 12, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Q8::u8));  // G 12
  EXPECT_FALSE(Q8NarrowGroupConv::supports(shape(16, 2, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1), Q8::u8, Q8::u8));  // G 2
  Conv2dShape wider = g4;
  wider.out_c = 2 * wider.in_c;  // 4 in, 8 out per group
  EXPECT_FALSE(Q8NarrowGroupConv::supports(wider, Q8::u8, Q8::u8));
  std::vector<int8_t> w(size_t(g4.out_c) * 4 * 9);
  const float m[] = {0.01f};
  const Requantization rq{m, 0, 0, 255};
  // No row at the scalar cap: the engine's other grouped driver runs.
  EXPECT_FALSE(Q8NarrowGroupConv::runs(g4, Q8::u8, Q8::u8, Isa::scalar));
  EXPECT_THROW(Q8NarrowGroupConv(g4, Q8::u8, 0, w.data(), nullptr, rq, Q8::u8, Isa::scalar), Unsupported);
}

}  // namespace q8_gconv_test
}  // namespace octet::kernels
