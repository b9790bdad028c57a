// The float-output twins of the INT8 IGEMM microkernels (dynamic quantization: the activation's
// scale and zero point arrive per run) through Q8Conv and Q8Gemm, against the reference
// integer conv / GEMM followed by dequantize_accumulators__ref: bit-exact floats, for every
// microkernel this CPU runs, u8 and s8 activations, zero points that change between runs of
// one object (the padding frame must follow), per-tensor and per-channel scales, bias and a
// fused Relu. Every other run also gathers the output's range (OutputRange, what a following
// DynamicQuantizeLinear reads), which must equal f32_range__ref of the expected output.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/dequantized_epilogue.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/conv/q8_dwconv_dequantized.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/ref/qconv2d.h"
#include "kernels/ref/qgemm.h"
#include "kernels/ref/qlinear.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::describe;
using testing::Fill;

std::map<std::string, int>& dequantized_kernels_ran() {
  static std::map<std::string, int> counts;
  return counts;
}

DequantizedOutput random_output(std::mt19937& rng, size_t n, bool per_channel, bool bias, bool relu) {
  std::uniform_real_distribution<float> scale(1e-4f, 2e-2f);
  std::normal_distribution<float> value(0.0f, 3.0f);
  DequantizedOutput out;
  out.w_scale.resize(per_channel ? n : 1);
  for (float& s : out.w_scale) s = scale(rng);
  if (bias) {
    out.bias.resize(n);
    for (float& b : out.bias) b = value(rng);
  }
  if (relu) out.lo = 0.0f;
  return out;
}

// The range gathered while writing y against the reference range of the whole output.
void expect_range(const OutputRange& r, const std::vector<float>& expected, const std::string& what) {
  const F32Range want = f32_range__ref(static_cast<int64_t>(expected.size()), expected.data());
  const F32Range got = r.get();
  // Values, not bits: which of -0.0 and 0.0 a min keeps depends on the order, and either
  // gives DynamicQuantizeLinear the same scale and zero point.
  EXPECT_EQ(got.min, want.min) << what;
  EXPECT_EQ(got.max, want.max) << what;
}

// Compares float bit patterns: -0.0 vs 0.0 or a different rounding is a failure.
void expect_same_bits(const std::vector<float>& y, const std::vector<float>& expected, size_t n,
                      const std::string& what) {
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(expected[i]))
        << what << " at output " << i << " (column " << i % n << "): " << y[i] << " vs "
        << expected[i];
  }
}

struct ConvCase {
  Conv2dShape s;
  Q8 x_type = Q8::u8;
  Fill fill = Fill::random;
  bool per_channel = true, bias = true, relu = false;
};

void test_conv(std::mt19937& rng, const ConvCase& c, const std::vector<const Q8GemmKernel*>& kernels,
               pthreadpool_t pool) {
  const Conv2dShape& s = c.s;
  const size_t out_c = static_cast<size_t>(s.out_c);
  const size_t x_size = static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c;
  const size_t y_size = static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.out_c;
  std::vector<int8_t> w = testing::random_weights(
      rng, out_c * s.in_c * s.kernel_h * s.kernel_w, c.fill);
  const DequantizedOutput out = random_output(rng, out_c, c.per_channel, c.bias, c.relu);
  const std::vector<int32_t> zero_points = {testing::random_zero_point(rng, c.x_type),
                                            testing::extreme_zero_point(rng, c.x_type)};
  std::vector<Q8Conv> convs;
  for (const Q8GemmKernel* k : kernels) convs.emplace_back(s, c.x_type, w.data(), out, *k);
  std::uniform_real_distribution<float> x_scale_dist(1e-3f, 0.1f);
  OutputRange range(Isa::avx512vnni);
  // Two runs per object with different zero points and data; the second gathers the range.
  for (int32_t x_zp : zero_points) {
    const bool with_range = x_zp == zero_points.back();
    const float x_scale = x_scale_dist(rng);
    std::vector<uint8_t> x = testing::random_activations(rng, x_size, c.x_type, x_zp, c.fill);
    std::vector<int32_t> acc(y_size);
    const int32_t w_zp[] = {0};
    testing::with_q8_types(c.x_type, c.x_type, [&](auto x_tag, auto) {
      using X = decltype(x_tag);
      q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(x.data()), x_zp, w.data(),
                                         w_zp, nullptr, acc.data());
    });
    std::vector<float> expected(y_size);
    dequantize_accumulators__ref(static_cast<int64_t>(y_size / out_c), s.out_c, acc.data(), x_scale,
                                 out.w_scale, out.bias, out.lo, out.hi, expected.data());
    for (Q8Conv& conv : convs) {
      std::vector<uint8_t> bound(x.size() + 1);
      conv.bind(bound.data());
      std::vector<float> y(y_size, -7.0f);
      range.reset();
      conv.run_dequantized(x.data(), x_scale, x_zp, y.data(), pool, with_range ? &range : nullptr);
      const std::string what =
          conv.kernel_name() + ", " + describe(s) + ", x " + q8_name(c.x_type) + " zp " + std::to_string(x_zp);
      expect_same_bits(y, expected, out_c, what);
      if (with_range) expect_range(range, expected, what);
      if (::testing::Test::HasFatalFailure()) return;
      ++dequantized_kernels_ran()[conv.kernel_name()];
    }
  }
}

TEST(Q8DequantizedConv, RandomShapesEveryKernel) {
  std::mt19937 rng(20261125);
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int iter = 0; iter < 150; ++iter) {
      std::bernoulli_distribution coin(0.5);
      ConvCase c;
      c.s = iter % 15 == 0 ? testing::random_conv_shape(rng, 9, 70, 80)
                           : testing::random_conv_shape(rng, 6, 33, 40);
      c.x_type = x_type;
      c.per_channel = coin(rng);
      c.bias = iter % 5 != 0;
      c.relu = iter % 3 == 0;
      test_conv(rng, c, kernels, nullptr);
      if (HasFatalFailure()) return;
    }
  }
  for (const auto& [name, count] : dequantized_kernels_ran()) std::printf("ran %s %d times\n", name.c_str(), count);
}

// Activations at the far end from the zero point and weights +-127: the largest accumulators;
// the first-layer (im2col) and padded paths with a 2-thread pool.
TEST(Q8DequantizedConv, ExtremeValuesAndLayerShapes) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(5);
  const Conv2dShape layers[] = {
      testing::random_conv_shape(rng, 5, 128, 33),
  };
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    // 32x32x3 -> 16 3x3 (im2col), 16x16x16 -> 32 3x3 stride 2 with bottom/right pads, 1x1.
    Conv2dShape first{};
    first.batch = 1, first.in_h = first.in_w = 32, first.in_c = 3, first.out_c = 16;
    first.kernel_h = first.kernel_w = 3, first.stride_h = first.stride_w = 1;
    first.dilation_h = first.dilation_w = 1, first.pad_top = first.pad_left = 1;
    first.out_h = first.out_w = 32;
    Conv2dShape down = first;
    down.in_h = down.in_w = 16, down.in_c = 16, down.out_c = 32, down.stride_h = down.stride_w = 2;
    down.pad_top = down.pad_left = 0, down.out_h = down.out_w = 8, down.batch = 2;
    Conv2dShape pointwise = down;
    pointwise.kernel_h = pointwise.kernel_w = 1, pointwise.in_c = 64, pointwise.out_c = 70;
    for (const Conv2dShape& s : {first, down, pointwise, layers[0]}) {
      for (Fill fill : {Fill::random, Fill::extreme}) {
        ConvCase c;
        c.s = s;
        c.x_type = x_type;
        c.fill = fill;
        c.relu = fill == Fill::random;
        test_conv(rng, c, kernels, pool.get());
        if (HasFatalFailure()) return;
      }
    }
  }
}

void test_gemm(std::mt19937& rng, int64_t m, int64_t k, int64_t n, Q8 a_type, bool trans_b,
               Fill fill, const std::vector<const Q8GemmKernel*>& kernels, pthreadpool_t pool) {
  std::vector<int8_t> b = testing::random_weights(rng, static_cast<size_t>(k * n), fill);
  std::bernoulli_distribution coin(0.5);
  const DequantizedOutput out = random_output(rng, static_cast<size_t>(n), coin(rng), coin(rng), coin(rng));
  std::vector<Q8Gemm> gemms;
  for (const Q8GemmKernel* kernel : kernels) gemms.emplace_back(k, n, a_type, b.data(), trans_b, out, *kernel);
  // B as [k][n] for the reference.
  std::vector<int8_t> b_kn(b.size());
  for (int64_t p = 0; p < k; ++p)
    for (int64_t c = 0; c < n; ++c) b_kn[p * n + c] = trans_b ? b[c * k + p] : b[p * n + c];
  for (int32_t a_zp : {testing::random_zero_point(rng, a_type), testing::extreme_zero_point(rng, a_type)}) {
    const float a_scale = std::uniform_real_distribution<float>(1e-3f, 0.1f)(rng);
    std::vector<uint8_t> a = testing::random_activations(rng, static_cast<size_t>(m * k), a_type, a_zp, fill);
    GemmShape s;
    s.m = static_cast<int>(m);
    s.n = static_cast<int>(n);
    s.k = static_cast<int>(k);
    std::vector<int32_t> acc(static_cast<size_t>(m * n));
    const int32_t a_zps[] = {a_zp};
    const int32_t b_zps[] = {0};
    testing::with_q8_types(a_type, a_type, [&](auto a_tag, auto) {
      using A = decltype(a_tag);
      q8_gemm_int32__ref<A, int8_t>(s, reinterpret_cast<const A*>(a.data()), a_zps, b_kn.data(), b_zps,
                                    nullptr, 0, 0, acc.data());
    });
    std::vector<float> expected(acc.size());
    dequantize_accumulators__ref(m, n, acc.data(), a_scale, out.w_scale, out.bias, out.lo, out.hi,
                                 expected.data());
    for (Q8Gemm& gemm : gemms) {
      std::vector<float> y(expected.size(), -7.0f);
      OutputRange range(Isa::avx512vnni);
      gemm.run_dequantized(m, a.data(), a_scale, a_zp, y.data(), pool, &range);
      const std::string what = gemm.kernel_name() + ", m " + std::to_string(m) + " k " + std::to_string(k) +
                               " n " + std::to_string(n) + (trans_b ? " trans_b" : "");
      expect_same_bits(y, expected, static_cast<size_t>(n), what);
      expect_range(range, expected, what);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(Q8DequantizedGemm, RandomShapesEveryKernel) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> dim(1, 70);
  for (Q8 a_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(a_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int iter = 0; iter < 60; ++iter) {
      test_gemm(rng, dim(rng), dim(rng), dim(rng), a_type, iter % 2 == 0,
                iter % 4 == 3 ? Fill::extreme : Fill::random, kernels, iter % 6 == 0 ? pool.get() : nullptr);
      if (HasFatalFailure()) return;
    }
    // The ResNet8 classifier and a wide layer.
    test_gemm(rng, 1, 64, 10, a_type, true, Fill::random, kernels, nullptr);
    test_gemm(rng, 64, 512, 1000, a_type, true, Fill::random, kernels, pool.get());
    if (HasFatalFailure()) return;
  }
}

// Depthwise: the exact integer sums on the FP32 depthwise microkernels of every ISA level,
// against the integer reference; random shapes (1x1 to 5x5, strides, dilation, pads), extreme
// values (|x - zp| = 255 with weights +-127), zero points changing between runs.
TEST(Q8DequantizedDwConv, EveryIsaMatchesTheIntegerReference) {
  std::mt19937 rng(31);
  int ran = 0;
  for (int iter = 0; iter < 120; ++iter) {
    Conv2dShape s = testing::random_conv_shape(rng, 9, 40, 1);
    s.in_c = std::max(s.in_c, 2);
    s.out_c = s.groups = s.in_c;
    const Q8 x_type = iter % 2 ? Q8::s8 : Q8::u8;
    const Fill fill = iter % 5 == 4 ? Fill::extreme : Fill::random;
    const size_t channels = static_cast<size_t>(s.in_c);
    std::vector<int8_t> w = testing::random_weights(rng, channels * s.kernel_h * s.kernel_w, fill);
    std::bernoulli_distribution coin(0.5);
    const DequantizedOutput out = random_output(rng, channels, coin(rng), coin(rng), coin(rng));
    for (Isa isa : kAllIsas) {
      if (!isa_supported(isa) || isa == Isa::scalar) continue;
      Q8DequantizedDwConv conv(s, x_type, w.data(), out, isa);
      if (!conv.has_kernel()) continue;
      for (int32_t x_zp : {testing::random_zero_point(rng, x_type), testing::extreme_zero_point(rng, x_type)}) {
        const float x_scale = std::uniform_real_distribution<float>(1e-3f, 0.1f)(rng);
        std::vector<uint8_t> x = testing::random_activations(
            rng, static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c, x_type, x_zp, fill);
        const size_t y_size = static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.out_c;
        std::vector<int32_t> acc(y_size);
        const int32_t w_zp[] = {0};
        testing::with_q8_types(x_type, x_type, [&](auto x_tag, auto) {
          using X = decltype(x_tag);
          q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(x.data()), x_zp, w.data(), w_zp, nullptr,
                                             acc.data());
        });
        std::vector<float> expected(y_size), y(y_size, -7.0f);
        dequantize_accumulators__ref(static_cast<int64_t>(y_size / channels), s.out_c, acc.data(), x_scale,
                                     out.w_scale, out.bias, out.lo, out.hi, expected.data());
        OutputRange range(isa);
        conv.run(x.data(), x_scale, x_zp, y.data(), nullptr, &range);
        const std::string what = conv.kernel_name() + ", " + describe(s) + ", zp " + std::to_string(x_zp);
        expect_same_bits(y, expected, channels, what);
        expect_range(range, expected, what);
        if (HasFatalFailure()) return;
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 0) << "no FP32 depthwise microkernel runs on this CPU";
}

// The passes around the FP32 depthwise conv, alone: every channel count up to 40 (tails),
// NaN / infinities / signed zeros in y, bounds that cut or not, u8 and s8 codes at the ends.
TEST(Q8DequantizedDwConv, EpilogueKernelsMatchTheRefBitForBit) {
  std::mt19937 rng(41);
  std::normal_distribution<float> value(0.0f, 50.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
  int ran = 0;
  for (const DequantizedEpilogueKernel& k : kDequantizedEpilogueKernels) {
    if (!isa_supported(k.isa)) continue;
    for (size_t channels = 1; channels <= 40; ++channels) {
      const size_t pixels = 1 + rng() % 5, n = pixels * channels;
      std::vector<float> y(n), scale(channels), bias(channels);
      for (float& v : y) v = rng() % 8 == 0 ? specials[rng() % 5] : value(rng);
      for (float& v : scale) v = std::uniform_real_distribution<float>(1e-4f, 0.1f)(rng);
      for (float& v : bias) v = value(rng) * 0.01f;
      const bool with_bias = channels % 2 == 0;
      const float lo = channels % 3 == 0 ? 0.0f : -std::numeric_limits<float>::infinity();
      const float hi = channels % 5 == 0 ? 1.5f : std::numeric_limits<float>::infinity();
      std::vector<float> got = y, want = y;
      k.epilogue(pixels, channels, got.data(), scale.data(), with_bias ? bias.data() : nullptr, lo, hi);
      f32_scale_bias_clamp__ref(pixels, channels, want.data(), scale.data(), with_bias ? bias.data() : nullptr, lo, hi);
      expect_same_bits(got, want, channels, std::string(k.name) + " epilogue, " + std::to_string(channels) + " channels");
      for (bool is_signed : {false, true}) {
        std::vector<uint8_t> x(n + channels);
        for (auto& b : x) b = rng() % 4 == 0 ? (rng() % 2 ? 0 : 255) : uint8_t(rng());
        const int32_t zp = is_signed ? int32_t(rng() % 256) - 128 : int32_t(rng() % 256);
        std::vector<float> c(x.size()), c_ref(x.size());
        k.center(x.size(), x.data(), is_signed, zp, c.data());
        q8_center__ref(x.size(), x.data(), is_signed, zp, c_ref.data());
        expect_same_bits(c, c_ref, 1, std::string(k.name) + " center, " + std::to_string(x.size()) + " values");
      }
      if (HasFatalFailure()) return;
      ++ran;
    }
  }
  EXPECT_GT(ran, 40) << "only the ref kernel ran";
}

TEST(Q8Dequantized, RunOnTheWrongOutputThrows) {
  const int8_t w[4] = {1, 2, 3, 4};
  DequantizedOutput out;
  out.w_scale = {0.5f};
  Q8Gemm gemm(2, 2, Q8::u8, w, false, out, Isa::scalar);
  uint8_t a[2] = {1, 2};
  uint8_t y8[2];
  EXPECT_THROW(gemm.run(1, a, y8, nullptr), std::logic_error);
  float y[2];
  EXPECT_THROW(gemm.run_dequantized(1, a, 0.1f, 256, y, nullptr), std::invalid_argument);
  out.w_scale = {0.5f, 0.5f, 0.5f};
  EXPECT_THROW(Q8Gemm(2, 2, Q8::u8, w, false, out, Isa::scalar), std::invalid_argument);
}

}  // namespace
}  // namespace octet::kernels
