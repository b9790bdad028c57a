// Q8Conv (the INT8 IGEMM microkernels of kernels/gemm/q8_gemm_list.h) against q8_conv2d_nhwc__ref:
// bit-exact, for every microkernel this CPU runs, on random and adversarial shapes and data.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <array>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/conv/q8_conv.h"
#include "kernels/ref/qconv2d.h"
#include "tests/simd/q8_test_data.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::describe;
using testing::Fill;

// Which microkernels ran how often (printed once at exit, so a log shows the paths covered).
std::map<std::string, int>& q8_conv_kernels_ran() {
  static std::map<std::string, int> counts;
  return counts;
}

class Q8ConvTester {
 public:
  Q8ConvTester& shape(const Conv2dShape& s) {
    s_ = s;
    return *this;
  }
  Q8ConvTester& x_type(Q8 t) {
    x_type_ = t;
    return *this;
  }
  Q8ConvTester& y_type(Q8 t) {
    y_type_ = t;
    return *this;
  }
  Q8ConvTester& x_zero_point(int32_t zp) {
    x_zero_point_ = zp;
    return *this;
  }
  Q8ConvTester& y_zero_point(int32_t zp) {
    y_zero_point_ = zp;
    return *this;
  }
  Q8ConvTester& fill(Fill f) {
    fill_ = f;
    return *this;
  }
  Q8ConvTester& per_channel(bool v) {
    per_channel_ = v;
    return *this;
  }
  Q8ConvTester& power_of_two_multipliers(bool v) {
    pow2_ = v;
    return *this;
  }
  Q8ConvTester& bias(bool v) {
    bias_ = v;
    return *this;
  }
  Q8ConvTester& narrow_clamp(bool v) {
    narrow_ = v;
    return *this;
  }
  Q8ConvTester& pool(pthreadpool_t p) {
    pool_ = p;
    return *this;
  }

  // Runs every given microkernel (and the scalar fallback) on the same data and compares each
  // with the reference, byte for byte.
  void test(std::mt19937& rng, const std::vector<const Q8GemmKernel*>& kernels) const {
    const Conv2dShape& s = s_;
    const size_t taps = static_cast<size_t>(s.kernel_d) * s.kernel_h * s.kernel_w;
    const size_t x_size = static_cast<size_t>(s.batch) * s.in_d * s.in_h * s.in_w * s.in_c;
    const size_t y_size = static_cast<size_t>(s.batch) * s.out_d * s.out_h * s.out_w * s.out_c;
    std::vector<uint8_t> x =
        testing::random_activations(rng, x_size, x_type_, x_zero_point_, fill_);
    std::vector<int8_t> w =
        testing::random_weights(rng, static_cast<size_t>(s.out_c) * s.in_c * taps, fill_);
    if (fill_ == Fill::extreme)
      testing::make_channels_one_signed(w, static_cast<size_t>(s.out_c), true);
    std::vector<int32_t> b =
        bias_ ? testing::random_bias(rng, static_cast<size_t>(s.out_c)) : std::vector<int32_t>();
    const int32_t* bias = bias_ ? b.data() : nullptr;
    const int32_t w_zero_point[] = {0};

    std::vector<int32_t> acc(y_size);
    testing::with_q8_types(x_type_, x_type_, [&](auto x_tag, auto) {
      using X = decltype(x_tag);
      q8_conv2d_nhwc_acc__ref<X, int8_t>(s, reinterpret_cast<const X*>(x.data()), x_zero_point_,
                                         w.data(), w_zero_point, bias, acc.data());
    });
    const std::vector<float> multiplier =
        testing::fitted_multipliers(rng, acc, static_cast<size_t>(s.out_c), per_channel_, pow2_);
    Requantization rq{multiplier, y_zero_point_, q8_min(y_type_), q8_max(y_type_)};
    if (narrow_) testing::narrow_clamp(rng, rq, y_type_);

    std::vector<uint8_t> expected(y_size);
    reference(x.data(), w.data(), bias, rq, expected.data());

    auto check = [&](Q8Conv& conv, const char* how) {
      // Bind to one buffer and run on a copy at another address: the offset path is exercised.
      std::vector<uint8_t> bound(x.size() + 1);
      conv.bind(bound.data());
      std::vector<uint8_t> y(y_size + 1, 0x5A);  // one guard byte past the end
      conv.run(x.data(), y.data(), pool_);
      ASSERT_EQ(y[y_size], 0x5A) << conv.kernel_name() << " wrote past the output, " << describe(s);
      for (size_t i = 0; i < y_size; ++i) {
        ASSERT_EQ(static_cast<int>(y[i]), static_cast<int>(expected[i]))
            << conv.kernel_name() << " (" << how << ") at output " << i << " (channel "
            << i % s.out_c << "), " << describe(s) << ", x " << q8_name(x_type_) << " zp "
            << x_zero_point_ << ", y " << q8_name(y_type_) << " zp " << rq.zero_point << " clamp ["
            << rq.qmin << ", " << rq.qmax << "], acc " << acc[i] << " multiplier "
            << rq.multiplier_of(i % s.out_c);
      }
      ++q8_conv_kernels_ran()[conv.kernel_name()];
    };
    for (const Q8GemmKernel* k : kernels) {
      Q8Conv conv(s, x_type_, x_zero_point_, w.data(), bias, rq, y_type_, *k);
      check(conv, "forced");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  void reference(const uint8_t* x, const int8_t* w, const int32_t* bias, const Requantization& rq,
                 uint8_t* y) const {
    const int32_t w_zero_point[] = {0};
    testing::with_q8_types(x_type_, y_type_, [&](auto x_tag, auto y_tag) {
      using X = decltype(x_tag);
      using Y = decltype(y_tag);
      q8_conv2d_nhwc__ref<X, int8_t, Y>(s_, reinterpret_cast<const X*>(x), x_zero_point_, w,
                                        w_zero_point, bias, rq, reinterpret_cast<Y*>(y));
    });
  }

 private:
  Conv2dShape s_;
  Q8 x_type_ = Q8::u8, y_type_ = Q8::u8;
  int32_t x_zero_point_ = 0, y_zero_point_ = 0;
  Fill fill_ = Fill::random;
  bool per_channel_ = true, pow2_ = false, bias_ = true, narrow_ = false;
  pthreadpool_t pool_ = nullptr;
};

// 3-D convs (NDHWC, the depth fields): every row against the reference, byte for byte, on
// video-ResNet layers (3x3x3, 1x3x3, 3x1x1, the 3x7x7 stem over 3 channels, a 1x1x1 shortcut)
// and random shapes with depth 1, pads past the kernel, strides past it and dilation in depth;
// random and saturating values, zero points at the ends of the types, two threads.
TEST(Q8Conv, ThreeDimensionalEveryKernel) {
  std::mt19937 rng(20261129);
  testing::Pool pool(pthreadpool_create(2));
  auto extent = [](int in, int k, int st, int dil, int p0, int p1) {
    return std::array<int, 7>{in, k, st, dil, p0, p1, (in + p0 + p1 - dil * (k - 1) - 1) / st + 1};
  };
  auto shape = [](int batch, int in_c, int out_c, std::array<int, 7> d, std::array<int, 7> h, std::array<int, 7> w) {
    Conv2dShape s;
    s.batch = batch, s.in_c = in_c, s.out_c = out_c;
    s.in_d = d[0], s.kernel_d = d[1], s.stride_d = d[2], s.dilation_d = d[3], s.pad_front = d[4], s.out_d = d[6];
    s.in_h = h[0], s.kernel_h = h[1], s.stride_h = h[2], s.dilation_h = h[3], s.pad_top = h[4], s.out_h = h[6];
    s.in_w = w[0], s.kernel_w = w[1], s.stride_w = w[2], s.dilation_w = w[3], s.pad_left = w[4], s.out_w = w[6];
    return s;
  };
  std::vector<Conv2dShape> shapes = {
      shape(1, 3, 16, extent(4, 3, 1, 1, 1, 1), extent(14, 7, 2, 1, 3, 3), extent(14, 7, 2, 1, 3, 3)),
      shape(1, 32, 32, extent(4, 3, 1, 1, 1, 1), extent(6, 3, 1, 1, 1, 1), extent(6, 3, 1, 1, 1, 1)),
      shape(2, 24, 40, extent(3, 1, 1, 1, 0, 0), extent(6, 3, 2, 1, 1, 1), extent(5, 3, 2, 1, 1, 1)),
      shape(1, 40, 24, extent(5, 3, 2, 1, 1, 1), extent(4, 1, 1, 1, 0, 0), extent(4, 1, 1, 1, 0, 0)),
      shape(1, 16, 33, extent(4, 1, 2, 1, 0, 0), extent(8, 1, 2, 1, 0, 0), extent(8, 1, 2, 1, 0, 0)),
      shape(1, 8, 8, extent(1, 3, 1, 1, 1, 1), extent(5, 3, 1, 1, 1, 1), extent(5, 3, 1, 1, 1, 1)),
      shape(1, 5, 7, extent(3, 2, 1, 1, 4, 3), extent(4, 2, 3, 1, 2, 2), extent(4, 3, 1, 2, 2, 2)),
      shape(1, 9, 17, extent(9, 2, 4, 3, 0, 1), extent(7, 1, 3, 1, 0, 0), extent(5, 3, 1, 1, 0, 0)),
  };
  for (int i = 0; i < 12; ++i) {  // random ones
    auto pick = [&](int lo, int hi) { return lo + int(rng() % uint32_t(hi - lo + 1)); };
    auto random_extent = [&] {
      const int k = pick(1, 3), st = pick(1, 3), dil = pick(1, 4) == 1 ? 2 : 1, p0 = pick(0, k), p1 = pick(0, k - 1);
      return extent(std::max(1, dil * (k - 1) + 1 - p0 - p1) + pick(0, 4), k, st, dil, p0, p1);
    };
    shapes.push_back(shape(pick(1, 2), pick(1, 40), pick(1, 40), random_extent(), random_extent(), random_extent()));
  }
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Conv2dShape& s = shapes[i];
      ASSERT_TRUE(Q8Conv::supports(s, x_type, x_type)) << describe(s);
      Q8ConvTester t;
      t.shape(s).x_type(x_type).y_type(i % 3 == 0 ? Q8::s8 : Q8::u8).pool(i % 2 ? pool.get() : nullptr);
      t.x_zero_point(testing::random_zero_point(rng, x_type)).y_zero_point(i % 3 == 0 ? -3 : 100);
      t.fill(i % 4 == 1 ? Fill::extreme : Fill::random).per_channel(i % 5 != 0);
      t.test(rng, kernels);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Q8Conv, RandomShapesEveryKernel) {
  std::mt19937 rng(20261122);
  int shapes = 0;
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int iter = 0; iter < 600; ++iter, ++shapes) {
      // Mostly tiny; every 20th around a real layer's channel counts.
      const bool large = iter % 20 == 0;
      const Conv2dShape s = large ? testing::random_conv_shape(rng, 10, 72, 80) : testing::random_conv_shape(rng, 6, 33, 40);
      std::bernoulli_distribution coin(0.5);
      const Q8 y_type = coin(rng) ? Q8::u8 : Q8::s8;
      Q8ConvTester()
          .shape(s)
          .x_type(x_type)
          .y_type(y_type)
          .x_zero_point(testing::random_zero_point(rng, x_type))
          .y_zero_point(testing::random_zero_point(rng, y_type))
          .per_channel(coin(rng))
          .power_of_two_multipliers(iter % 5 == 0)
          .bias(iter % 7 != 0)
          .narrow_clamp(iter % 4 == 0)
          .test(rng, kernels);
      if (HasFatalFailure()) return;
    }
  }
  for (const auto& [name, count] : q8_conv_kernels_ran())
    std::printf("ran %s on %d convolutions\n", name.c_str(), count);
  RecordProperty("shapes", shapes);
}

// All activations at the end of the range farthest from the zero point, every weight +-127
// with one sign per channel, K up to 5x5x128: products and int16 pair sums at their largest.
TEST(Q8Conv, ExtremeValuesAndZeroPoints) {
  std::mt19937 rng(7);
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (int32_t x_zp : testing::extreme_zero_points(x_type)) {
      for (int in_c : {1, 3, 17, 64, 128}) {
        Conv2dShape s = testing::random_conv_shape(rng, 5, 1, 33);
        s.in_c = in_c;
        if (in_c == 128) {
          s.kernel_h = s.kernel_w = 5;
          s.dilation_h = s.dilation_w = 1;
          s.stride_h = s.stride_w = 1;
          s.in_h = s.in_w = 5;
          s.pad_top = s.pad_left = 2;
          s.out_h = s.out_w = 5;
        }
        for (Q8 y_type : {Q8::u8, Q8::s8}) {
          Q8ConvTester()
              .shape(s)
              .x_type(x_type)
              .y_type(y_type)
              .x_zero_point(x_zp)
              .y_zero_point(testing::extreme_zero_point(rng, y_type))
              .fill(Fill::extreme)
              .per_channel(in_c % 2 == 1)
              .test(rng, kernels);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The layers of the bundled models, each once per x type, with a 2-thread pool.
TEST(Q8Conv, ModelLayersWithTwoThreads) {
  testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::mt19937 rng(11);
  struct Layer {
    int hw, in_c, out_c, kernel, stride, pad_tl, pad_br;
  };
  const Layer layers[] = {{32, 3, 16, 3, 1, 1, 1},  {32, 16, 16, 3, 1, 1, 1},
                          {32, 16, 32, 3, 2, 0, 1}, {32, 16, 32, 1, 2, 0, 0},
                          {16, 32, 64, 3, 2, 0, 1}, {8, 64, 64, 3, 1, 1, 1},
                          {28, 1, 16, 3, 1, 1, 1},  {7, 48, 128, 1, 1, 0, 0},
                          // 3x3 x 256 -> 160: ~370 KB packed, run in chunks of column blocks
                          // (kernels/gemm/q8_weight_chunks.h), the last block partial.
                          {5, 256, 160, 3, 1, 1, 1}};
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (const Layer& l : layers) {
      Conv2dShape s;
      s.in_h = s.in_w = l.hw;
      s.in_c = l.in_c;
      s.out_c = l.out_c;
      s.kernel_h = s.kernel_w = l.kernel;
      s.stride_h = s.stride_w = l.stride;
      s.pad_top = s.pad_left = l.pad_tl;
      s.out_h = s.out_w = (l.hw + l.pad_tl + l.pad_br - l.kernel) / l.stride + 1;
      s.batch = l.hw <= 8 ? 2 : 1;
      Q8ConvTester()
          .shape(s)
          .x_type(x_type)
          .y_type(x_type)
          .x_zero_point(testing::random_zero_point(rng, x_type))
          .y_zero_point(testing::random_zero_point(rng, x_type))
          .pool(pool.get())
          .test(rng, kernels);
      if (HasFatalFailure()) return;
    }
  }
}

// The constructor that takes an Isa picks the highest level <= it, and the reference kernel
// below every microkernel; all of them agree with the reference.
TEST(Q8Conv, IsaChoiceDownToThePortableRow) {
  std::mt19937 rng(3);
  const Conv2dShape s = testing::random_conv_shape(rng, 6, 20, 40);
  const size_t taps = static_cast<size_t>(s.kernel_h) * s.kernel_w;
  std::vector<uint8_t> x = testing::random_activations(
      rng, static_cast<size_t>(s.batch) * s.in_h * s.in_w * s.in_c, Q8::u8, 3, Fill::random);
  std::vector<int8_t> w =
      testing::random_weights(rng, static_cast<size_t>(s.out_c) * s.in_c * taps, Fill::random);
  const float multiplier[] = {0.001f};
  const Requantization rq{multiplier, 5, 0, 255};
  std::vector<uint8_t> expected(static_cast<size_t>(s.batch) * s.out_h * s.out_w * s.out_c);
  const int32_t w_zero_point[] = {0};
  q8_conv2d_nhwc__ref<uint8_t, int8_t, uint8_t>(s, x.data(), 3, w.data(), w_zero_point, nullptr, rq,
                                                expected.data());
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    Q8Conv conv(s, Q8::u8, 3, w.data(), nullptr, rq, Q8::u8, isa);
    // Every level runs a row, the portable one at scalar: one driver path everywhere.
    EXPECT_LE(conv.kernel().isa, isa) << conv.kernel_name();
    EXPECT_EQ(conv.kernel_id().scalar, isa == Isa::scalar) << conv.kernel_name();
    if (isa == Isa::scalar) {
      EXPECT_TRUE(conv.kernel_name().ends_with("__scalar")) << conv.kernel_name();
    }
    std::printf("Isa %s -> %s\n", isa_name(isa), conv.kernel_name().c_str());
    conv.bind(x.data());
    std::vector<uint8_t> y(expected.size());
    conv.run(x.data(), y.data(), nullptr);
    EXPECT_EQ(y, expected) << conv.kernel_name();
  }
}


// First layers (kernel_h * kernel_w * in_c <= 64): Q8Conv packs each pixel's window into one
// row and runs a plain GEMM. Every microkernel, u8 and s8 activations, zero points at the ends
// of the type, extreme data, stride 2, asymmetric and no pads, dilation, batch 3, 2 threads.
bool takes_im2col(const Conv2dShape& s, Q8 x_type, const Q8GemmKernel& kernel) {
  std::vector<int8_t> w(static_cast<size_t>(s.out_c) * s.in_c * s.kernel_h * s.kernel_w, 1);
  const float multiplier[] = {0.01f};
  const Requantization rq{multiplier, 0, q8_min(x_type), q8_max(x_type)};
  return Q8Conv(s, x_type, 0, w.data(), nullptr, rq, x_type, kernel).im2col();
}

Conv2dShape first_layer_shape(int hw, int in_c, int out_c, int kh, int kw, int stride, int pad_t,
                              int pad_l, int pad_b, int pad_r, int dilation, int batch) {
  Conv2dShape s;
  s.batch = batch;
  s.in_h = s.in_w = hw;
  s.in_c = in_c;
  s.out_c = out_c;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = pad_t;
  s.pad_left = pad_l;
  s.out_h = (hw + pad_t + pad_b - dilation * (kh - 1) - 1) / stride + 1;
  s.out_w = (hw + pad_l + pad_r - dilation * (kw - 1) - 1) / stride + 1;
  return s;
}

TEST(Q8Conv, Im2colFirstLayersEveryKernel) {
  testing::Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  std::mt19937 rng(64);
  // hw, in_c, out_c, kh, kw, stride, pads t l b r, dilation, batch
  const Conv2dShape shapes[] = {
      first_layer_shape(32, 3, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1),  // MLPerf ResNet8
      first_layer_shape(28, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1),  // ResNet8
      first_layer_shape(9, 3, 17, 3, 3, 2, 0, 0, 1, 1, 1, 3),   // bottom / right only, batch 3
      first_layer_shape(8, 2, 33, 3, 3, 2, 2, 0, 0, 2, 1, 1),   // asymmetric, stride 2
      first_layer_shape(7, 7, 5, 3, 3, 1, 0, 0, 0, 0, 1, 2),    // K = 63, no pads
      first_layer_shape(6, 5, 40, 3, 3, 1, 1, 2, 2, 1, 1, 1),   // K = 45
      first_layer_shape(7, 1, 16, 5, 5, 1, 2, 2, 2, 2, 1, 1),   // 5x5, K = 25
      first_layer_shape(9, 2, 9, 5, 5, 2, 1, 2, 0, 1, 1, 3),    // 5x5, K = 50
      first_layer_shape(10, 1, 8, 7, 7, 2, 3, 3, 3, 3, 1, 1),   // 7x7, K = 49
      first_layer_shape(9, 3, 12, 3, 3, 1, 2, 2, 2, 2, 2, 2),   // dilation 2: 9 taps of in_c
      first_layer_shape(6, 4, 7, 3, 1, 1, 1, 0, 1, 0, 1, 1),    // 3x1, K = 12
      first_layer_shape(5, 16, 20, 2, 2, 1, 0, 0, 1, 1, 1, 1),  // K = 64
  };
  int runs = 0;
  for (Q8 x_type : {Q8::u8, Q8::s8}) {
    const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(x_type);
    if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
    for (const Conv2dShape& s : shapes) {
      for (const Q8GemmKernel* k : kernels)
        ASSERT_TRUE(takes_im2col(s, x_type, *k)) << k->name << ", " << describe(s);
      // The two layer-sized shapes (slow in the reference) at the outermost zero points only.
      const bool large = s.in_h >= 28;
      std::vector<int32_t> zero_points = testing::extreme_zero_points(x_type);
      if (large) zero_points = {zero_points.front(), zero_points.back()};
      for (int32_t x_zp : zero_points) {
        for (Fill fill : {Fill::random, Fill::extreme}) {
          if (large && fill == (x_zp == zero_points.front() ? Fill::extreme : Fill::random))
            continue;
          std::bernoulli_distribution coin(0.5);
          const Q8 y_type = coin(rng) ? Q8::u8 : Q8::s8;
          Q8ConvTester()
              .shape(s)
              .x_type(x_type)
              .y_type(y_type)
              .x_zero_point(x_zp)
              .y_zero_point(testing::extreme_zero_point(rng, y_type))
              .fill(fill)
              .per_channel(coin(rng))
              .narrow_clamp(fill == Fill::random && coin(rng))
              .pool(large || s.batch == 3 ? pool.get() : nullptr)  // a pool wake costs
              .test(rng, kernels);
          if (HasFatalFailure()) return;
          runs += static_cast<int>(kernels.size());
        }
      }
    }
  }
  RecordProperty("convolutions", runs);
}

// Windows larger than 64 bytes, or a single tap already, keep the IGEMM over taps.
TEST(Q8Conv, Im2colOnlyForSmallWindows) {
  const std::vector<const Q8GemmKernel*> kernels = testing::runnable_q8_kernels(Q8::u8);
  if (kernels.empty()) return;  // skipped (testing::skip_when_none_run)
  for (const Q8GemmKernel* k : kernels) {
    EXPECT_FALSE(takes_im2col(first_layer_shape(8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), Q8::u8, *k))
        << k->name << ": 3x3x8 is 72 bytes";
    EXPECT_FALSE(takes_im2col(first_layer_shape(8, 16, 16, 1, 1, 1, 0, 0, 0, 0, 1, 1), Q8::u8, *k))
        << k->name << ": 1x1 is one tap";
    EXPECT_FALSE(takes_im2col(first_layer_shape(8, 3, 16, 1, 3, 1, 0, 1, 0, 1, 1, 1), Q8::u8, *k))
        << k->name << ": 1x3 is one merged tap";
  }
}

}  // namespace
}  // namespace octet::kernels
