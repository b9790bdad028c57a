// Depthwise conv kernels (kernels/conv/dwconv_list.h) against the scalar ref convs: FP32 within a
// tolerance scaled by sum|x*w|, INT8 bit-exact, for every list entry this CPU supports, on
// random shapes (channels around the tile, 1x1 / 3x3 / 5x5 / 1x3 / 3x1 / 2x2 / 7x7 / 1x7 / 7x1
// / 9x9 / 11x11 kernels, pads up to the kernel's extent (more than a small image),
// strides 1-3, dilation 2, asymmetric pads, 1x1 spatial, batch 1-3), the depthwise layers of
// the bundled models, and adversarial INT8 values.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench/layer_shapes.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/q8_dwconv.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qconv2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

std::string describe(const Conv2dShape& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "N%d %dx%dx%d -> %dx%d k%dx%d s%dx%d d%dx%d pad(t%d,l%d)", s.batch, s.in_h,
                s.in_w, s.in_c, s.out_h, s.out_w, s.kernel_h, s.kernel_w, s.stride_h, s.stride_w, s.dilation_h,
                s.dilation_w, s.pad_top, s.pad_left);
  return buf;
}

// out_h / out_w from the pads on all four sides; false when the window does not fit.
bool finish_shape(Conv2dShape& s, int pad_bottom, int pad_right) {
  const int span_h = s.dilation_h * (s.kernel_h - 1) + 1, span_w = s.dilation_w * (s.kernel_w - 1) + 1;
  const int h = s.in_h + s.pad_top + pad_bottom - span_h, w = s.in_w + s.pad_left + pad_right - span_w;
  if (h < 0 || w < 0) return false;
  s.out_h = h / s.stride_h + 1;
  s.out_w = w / s.stride_w + 1;
  s.out_c = s.in_c;
  s.groups = s.in_c;
  return true;
}

// A random depthwise shape: mostly tiny, channels 1..2*tile+1 (tile 16 covers the ymm tile 8),
// sometimes 64..140 (the VNNI kernel's 64-channel blocks).
Conv2dShape random_shape(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  static const int kKernels[][2] = {{1, 1}, {3, 3}, {3, 3}, {3, 3}, {5, 5}, {1, 3}, {3, 1},
                                    {2, 2}, {7, 7}, {1, 7}, {7, 1}, {9, 9}, {11, 11}};
  for (;;) {
    Conv2dShape s;
    s.batch = uni(1, 10) == 1 ? uni(2, 3) : 1;
    s.in_c = uni(0, 3) == 0 ? 16 * uni(1, 3) : uni(1, 33);
    if (uni(0, 7) == 0) s.in_c = uni(0, 1) ? 64 * uni(1, 2) : uni(65, 140);  // 64-channel blocks
    const auto& k = kKernels[uni(0, static_cast<int>(std::size(kKernels)) - 1)];
    s.kernel_h = k[0];
    s.kernel_w = k[1];
    s.stride_h = s.stride_w = uni(0, 9) < 6 ? 1 : (uni(0, 5) ? 2 : 3);
    if (uni(0, 7) == 0) s.stride_w = uni(1, 2);
    s.dilation_h = s.dilation_w = uni(0, 5) == 0 ? 2 : 1;
    if (uni(0, 7) == 0) s.dilation_h = uni(1, 2);
    s.in_h = uni(0, 9) == 0 ? 1 : uni(1, 12);
    s.in_w = uni(0, 9) == 0 ? 1 : uni(1, 14);
    s.pad_top = uni(0, s.kernel_h - 1);
    s.pad_left = uni(0, s.kernel_w - 1);
    int pad_bottom = uni(0, s.kernel_h - 1), pad_right = uni(0, s.kernel_w - 1);
    if (uni(0, 5) == 0) {  // bottom/right only, like MLPerf ResNet8's stride-2 convs
      s.pad_top = s.pad_left = 0;
      pad_bottom = s.kernel_h - 1;
      pad_right = s.kernel_w - 1;
    }
    if (finish_shape(s, pad_bottom, pad_right)) return s;
  }
}

std::vector<Conv2dShape> model_dw_shapes() {
  std::vector<Conv2dShape> out;
  for (const auto& layer : bench::conv_layers()) {
    if (layer.shape.groups > 1) out.push_back(layer.shape);
  }
  return out;
}

// ---------------------------------------------------------------------------------------- FP32

class F32DwConvTester {
 public:
  F32DwConvTester& shape(const Conv2dShape& s) { s_ = s; return *this; }
  F32DwConvTester& activation(const Activation& a) { act_ = a; return *this; }
  F32DwConvTester& with_bias(bool b) { bias_ = b; return *this; }
  F32DwConvTester& pool(pthreadpool_t p) { pool_ = p; return *this; }
  // Runs the bound conv this many times, with new data in the same input buffer each time.
  F32DwConvTester& runs(int n) { runs_ = n; return *this; }

  // Runs `kernel` and the ref on the same random data; returns false (with a test failure)
  // on the first mismatch. padded_copy (optional) receives whether the conv copied its input
  // into a padded buffer.
  bool test(const F32DwConvKernel& kernel, std::mt19937& rng, bool* padded_copy = nullptr) const {
    const size_t C = s_.in_c, taps = static_cast<size_t>(s_.kernel_h) * s_.kernel_w;
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(s_.batch) * s_.in_h * s_.in_w * C), w(C * taps), b(C);
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const size_t out_size = static_cast<size_t>(s_.batch) * s_.out_h * s_.out_w * C;
    const float* bias = bias_ ? b.data() : nullptr;
    F32DwConv conv(s_, w.data(), bias, act_, kernel);
    EXPECT_EQ(conv.kernel_name().substr(0, std::string(kernel.name).size()), kernel.name);
    if (padded_copy) *padded_copy = conv.copies_padded_input();
    conv.bind(x.data());
    for (int run = 0; run < runs_; ++run) {
      if (run > 0)
        for (float& v : x) v = dist(rng);
      std::vector<float> expected(out_size), magnitude(out_size), y(out_size, std::nanf(""));
      f32_conv2d_nhwc__ref(s_, x.data(), w.data(), bias, act_, expected.data());
      // sum |x| |w| per output, the scale of the rounding error of any summation order.
      std::vector<float> ax(x.size()), aw(w.size());
      std::transform(x.begin(), x.end(), ax.begin(), [](float v) { return std::fabs(v); });
      std::transform(w.begin(), w.end(), aw.begin(), [](float v) { return std::fabs(v); });
      f32_conv2d_nhwc__ref(s_, ax.data(), aw.data(), nullptr, Activation{}, magnitude.data());
      conv.run(x.data(), y.data(), pool_);
      for (size_t i = 0; i < out_size; ++i) {
        const float tol = 1e-5f * (magnitude[i] + 1.0f) + 1e-6f;
        if (!(std::fabs(y[i] - expected[i]) <= tol)) {
          ADD_FAILURE() << kernel.name << " " << describe(s_) << " act " << static_cast<int>(act_.kind) << " run "
                        << run << ": y[" << i << "] (channel " << i % C << ") = " << y[i] << ", expected "
                        << expected[i];
          return false;
        }
      }
    }
    return true;
  }

 private:
  Conv2dShape s_;
  Activation act_;
  bool bias_ = true;
  pthreadpool_t pool_ = nullptr;
  int runs_ = 1;
};

// Relu / Clip are the microkernels' clamp; the others run on the driver's per-row epilogue.
Activation random_activation(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0: return Activation{};
    case 1: return Activation::relu();
    case 2: return Activation::clip(0.0f, 6.0f);
    case 3: return Activation::hard_swish();
    case 4: return Activation::hard_sigmoid(1.0f / 6.0f, 0.5f);
    case 5: return Activation::silu();
    case 6: return Activation::sigmoid();
    default: return Activation::clip(-0.5f, 0.25f);
  }
}

TEST(F32DwConv, RandomShapesEveryKernel) {
  testing::Pool threads(pthreadpool_create(2));
  for (const F32DwConvKernel* entry : testing::runnable_entries(kF32DwConvKernels)) {
    const F32DwConvKernel& kernel = *entry;
    std::mt19937 rng(1234);
    int ran = 0;
    for (int i = 0; i < 1000; ++i) {
      const Conv2dShape s = random_shape(rng);
      F32DwConvTester t;
      t.shape(s).activation(random_activation(rng)).with_bias(rng() % 4 != 0);
      if (i % 10 == 0) t.pool(threads.get());
      if (!t.test(kernel, rng)) return;
      ++ran;
    }
    std::printf("%s: %d random shapes\n", kernel.name, ran);
    RecordProperty(kernel.name, ran);
  }
}

TEST(F32DwConv, ModelLayersEveryKernel) {
  testing::Pool threads(pthreadpool_create(2));
  for (const F32DwConvKernel* entry : testing::runnable_entries(kF32DwConvKernels)) {
    const F32DwConvKernel& kernel = *entry;
    std::mt19937 rng(99);
    for (Conv2dShape s : model_dw_shapes()) {
      for (int batch : {1, 2}) {
        s.batch = batch;
        ASSERT_TRUE(F32DwConvTester().shape(s).activation(Activation::clip(0, 6)).pool(batch == 2 ? threads.get() : nullptr).test(kernel, rng));
      }
    }
  }
}

// Two images of hw x hw with c channels, a k x k depthwise kernel "same"-padded at this
// stride and dilation; false when the shape has no output.
bool square_depthwise(int hw, int c, int k, int stride, int dilation, Conv2dShape& s) {
  s = Conv2dShape{};
  s.batch = 2;
  s.in_h = s.in_w = hw;
  s.in_c = s.out_c = s.groups = c;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = dilation * (k / 2);
  return finish_shape(s, s.pad_top, s.pad_left);
}

// Map sides and (kernel, stride, dilation) of the small-map tests: 7 and 9 take FP32's padded
// copy for the 5x5 and 7x7 kernels, 16 reads every 3x3 in place.
constexpr int kSmallMapSides[] = {7, 9, 16};
constexpr std::array<int, 3> kSmallMapKernels[] = {{3, 1, 1}, {3, 2, 1}, {5, 1, 1}, {5, 2, 1}, {7, 1, 1}, {3, 1, 2}};

// Many channel blocks with a tail (163 channels: the row kernel's chunks of blocks end
// mid-row of the packed weights), on small maps whose input the driver copies into a
// horizontally padded buffer and on larger ones it reads in place; each conv runs three
// times on new data at the same address.
TEST(F32DwConv, ChannelChunksTailsAndPaddedCopies) {
  testing::Pool threads(pthreadpool_create(2));
  for (const F32DwConvKernel* entry : testing::runnable_entries(kF32DwConvKernels)) {
    const F32DwConvKernel& kernel = *entry;
    std::mt19937 rng(7);
    int padded = 0, in_place = 0;
    for (int hw : kSmallMapSides) {
      for (auto [k, stride, dilation] : kSmallMapKernels) {
        Conv2dShape s{};
        ASSERT_TRUE(square_depthwise(hw, 163, k, stride, dilation, s));
        bool copied = false;
        ASSERT_TRUE(F32DwConvTester().shape(s).activation(Activation::hard_swish()).pool(threads.get()).runs(3).test(
            kernel, rng, &copied));
        (copied ? padded : in_place)++;
      }
    }
    EXPECT_GT(padded, 0) << kernel.name;
    EXPECT_GT(in_place, 0) << kernel.name;
  }
}

// Maps small enough for the L2 whose kernel rows over all the channels are not for the L1D:
// the driver runs them a slice of channels at a time (163 channels: a tail block in the last
// slice), padded copies and in place, strided and dilated, with the epilogue's activations
// applied per slice, on one thread and two. At 13x13 eight or more of the twelve shapes slice
// under every cache octet assumes or has met (L1D 32 or 48 KiB, L2 512 KiB to 2 MiB; the rule
// in F32DwConv::fitting_slice), whether or not the driver takes the padded copy.
TEST(F32DwConv, ChannelSlicesOfSmallMaps) {
  testing::Pool threads(pthreadpool_create(2));
  for (const F32DwConvKernel* entry : testing::runnable_entries(kF32DwConvKernels)) {
    const F32DwConvKernel& kernel = *entry;
    std::mt19937 rng(11);
    int sliced = 0;
    for (int c : {163, 96}) {
      for (auto [k, stride, dilation] : {std::array{3, 1, 1}, {5, 1, 1}, {3, 2, 1}, {5, 2, 1}, {7, 1, 1}, {3, 1, 2}}) {
        Conv2dShape s{};
        ASSERT_TRUE(square_depthwise(13, c, k, stride, dilation, s));
        for (const Activation& act : {Activation::relu(), Activation::hard_swish()}) {
          for (pthreadpool_t pool : {static_cast<pthreadpool_t>(nullptr), threads.get()}) {
            ASSERT_TRUE(F32DwConvTester().shape(s).activation(act).pool(pool).runs(2).test(kernel, rng));
          }
        }
        std::vector<float> w(static_cast<size_t>(c) * k * k, 0.5f);
        F32DwConv conv(s, w.data(), nullptr, Activation{}, kernel);
        if (conv.channels_per_slice() != 0) {
          EXPECT_EQ(conv.channels_per_slice() % kernel.channel_tile, 0u) << kernel.name;
          EXPECT_LT(conv.channels_per_slice(), static_cast<size_t>(c)) << kernel.name;
          ++sliced;
        }
      }
    }
    EXPECT_GE(sliced, 6) << kernel.name << ": the 13x13 maps should run in slices";
  }
}

TEST(F32DwConv, PicksTheHighestAllowedKernelDownToThePortableRow) {
  Conv2dShape s{1, 5, 5, 8, 0, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1};
  ASSERT_TRUE(finish_shape(s, 1, 1));
  std::vector<float> w(8 * 9, 0.5f);
  for (Isa isa : runnable_isas()) {
    const F32DwConvKernel* expected = nullptr;
    for (const F32DwConvKernel& k : kF32DwConvKernels) {
      if (isa_runs(k.isa, isa)) {
        expected = &k;
        break;
      }
    }
    ASSERT_NE(expected, nullptr) << "no row at " << isa_name(isa) << ": every level has one, the portable row included";
    EXPECT_EQ(choose_f32_dwconv_kernel(isa), expected);
    F32DwConv conv(s, w.data(), nullptr, Activation{}, isa);
    EXPECT_EQ(conv.kernel_name(), expected->name) << isa_name(isa);
    EXPECT_EQ(conv.kernel_id().scalar, isa == Isa::scalar) << conv.kernel_name();
    std::vector<float> x(5 * 5 * 8, 1.0f), y(5 * 5 * 8);
    conv.bind(x.data());
    conv.run(x.data(), y.data(), nullptr);
    EXPECT_FLOAT_EQ(y[0], 4 * 0.5f) << conv.kernel_name();           // corner: 2x2 taps inside
    EXPECT_FLOAT_EQ(y[(2 * 5 + 2) * 8], 4.5f) << conv.kernel_name();  // centre: 9 taps
  }
}

TEST(F32DwConv, RejectsWhatItCannotRun) {
  Conv2dShape dense;
  dense.in_c = dense.out_c = 4;
  EXPECT_FALSE(F32DwConv::supports(dense, Activation{}));
  Conv2dShape dw = dense;
  dw.groups = 4;
  EXPECT_TRUE(F32DwConv::supports(dw, Activation::relu()));
  EXPECT_TRUE(F32DwConv::supports(dw, Activation::sigmoid()));  // on the per-row epilogue
  std::vector<float> w(4);
  EXPECT_THROW(F32DwConv(dense, w.data(), nullptr, Activation{}, Isa::avx512), std::invalid_argument);
  F32DwConv conv(dw, w.data(), nullptr, Activation{}, active_isa());
  std::vector<float> x(4), y(4);
  EXPECT_THROW(conv.run(x.data(), y.data(), nullptr), std::invalid_argument);  // not bound
}

// ---------------------------------------------------------------------------------------- INT8

enum class Fill { random, max_magnitude };

class Q8DwConvTester {
 public:
  Q8DwConvTester& shape(const Conv2dShape& s) { s_ = s; return *this; }
  Q8DwConvTester& types(Q8 x, Q8 y) { x_type_ = x; y_type_ = y; return *this; }
  Q8DwConvTester& x_zero_point(int32_t zp) { x_zp_ = zp; return *this; }
  Q8DwConvTester& y_zero_point(int32_t zp) { y_zp_ = zp; return *this; }
  Q8DwConvTester& clamp(int32_t lo, int32_t hi) { qmin_ = lo; qmax_ = hi; narrowed_ = true; return *this; }
  Q8DwConvTester& fill(Fill f) { fill_ = f; return *this; }
  // Multipliers 2^-10 .. 2^2 instead of ones fitted to the accumulator range.
  Q8DwConvTester& power_of_two_multipliers(bool on) { pow2_ = on; return *this; }
  Q8DwConvTester& per_tensor_multiplier(bool on) { per_tensor_ = on; return *this; }
  Q8DwConvTester& with_bias(bool b) { bias_ = b; return *this; }
  Q8DwConvTester& pool(pthreadpool_t p) { pool_ = p; return *this; }
  // Runs the bound conv this many times, with new activations in the same buffer each time.
  Q8DwConvTester& runs(int n) { runs_ = n; return *this; }

  bool test(const Q8DwConvKernel& kernel, std::mt19937& rng) const {
    const size_t C = s_.in_c, taps = static_cast<size_t>(s_.kernel_h) * s_.kernel_w;
    const size_t in_size = static_cast<size_t>(s_.batch) * s_.in_h * s_.in_w * C;
    const size_t out_size = static_cast<size_t>(s_.batch) * s_.out_h * s_.out_w * C;
    std::vector<uint8_t> x(in_size);
    std::vector<int8_t> w(C * taps);
    std::vector<int32_t> b(C);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int xmin = q8_min(x_type_), xmax = q8_max(x_type_);
    auto fill_x = [&] {
      if (fill_ == Fill::max_magnitude) {
        const int xv = uni(0, 1) ? xmax : xmin;
        for (uint8_t& v : x) v = static_cast<uint8_t>(xv);
      } else {
        for (uint8_t& v : x) v = static_cast<uint8_t>(uni(xmin, xmax));
      }
    };
    fill_x();
    if (fill_ == Fill::max_magnitude) {
      // Every activation at one end of its range, every weight +-127 (or -128): the largest
      // products, where an int16 pair sum would saturate.
      const int wsign = uni(0, 2);
      for (int8_t& v : w) v = static_cast<int8_t>(wsign == 0 ? 127 : wsign == 1 ? -127 : (uni(0, 1) ? 127 : -128));
      for (int32_t& v : b) v = uni(-100000, 100000);
    } else {
      for (int8_t& v : w) v = static_cast<int8_t>(uni(-127, 127));
      for (int32_t& v : b) v = uni(-20000, 20000);
    }
    const int32_t* bias = bias_ ? b.data() : nullptr;
    const int32_t w_zero_point = 0;

    // Multipliers: fitted so the outputs use the whole output range, or powers of two.
    std::vector<int32_t> acc(out_size);
    if (x_type_ == Q8::u8) {
      q8_conv2d_nhwc_acc__ref<uint8_t, int8_t>(s_, x.data(), x_zp_, w.data(), {&w_zero_point, 1}, bias, acc.data());
    } else {
      q8_conv2d_nhwc_acc__ref<int8_t, int8_t>(s_, reinterpret_cast<const int8_t*>(x.data()), x_zp_, w.data(),
                                              {&w_zero_point, 1}, bias, acc.data());
    }
    std::vector<float> multiplier(per_tensor_ ? 1 : C);
    for (size_t c = 0; c < multiplier.size(); ++c) {
      if (pow2_) {
        multiplier[c] = std::ldexp(1.0f, uni(-10, 2));
      } else {
        int64_t lo = 0, hi = 0;
        for (size_t i = c; i < out_size; i += C) {
          lo = std::min<int64_t>(lo, acc[i]);
          hi = std::max<int64_t>(hi, acc[i]);
        }
        multiplier[c] = 255.0f / static_cast<float>(std::max<int64_t>(hi - lo, 1)) *
                        std::uniform_real_distribution<float>(0.7f, 1.3f)(rng);
      }
    }
    Requantization rq{multiplier, y_zp_, narrowed_ ? qmin_ : q8_min(y_type_), narrowed_ ? qmax_ : q8_max(y_type_)};

    Q8DwConv conv(s_, x_type_, x_zp_, w.data(), bias, rq, y_type_, kernel);
    EXPECT_EQ(conv.kernel_name(), kernel.name);
    conv.bind(x.data());
    for (int run = 0; run < runs_; ++run) {
      if (run > 0) fill_x();
      std::vector<uint8_t> expected(out_size), y(out_size, 0x5A);
      run_ref(x.data(), w.data(), bias, rq, expected.data());
      conv.run(x.data(), y.data(), pool_);
      for (size_t i = 0; i < out_size; ++i) {
        if (y[i] != expected[i]) {
          ADD_FAILURE() << kernel.name << " " << describe(s_) << " x " << q8_name(x_type_) << " zp " << x_zp_
                        << ", y " << q8_name(y_type_) << " zp " << y_zp_ << " clamp [" << rq.qmin << ", " << rq.qmax
                        << "] run " << run << ": y[" << i << "] (channel " << i % C
                        << (run == 0 ? ", acc " + std::to_string(acc[i]) : std::string()) << ") = " << int{y[i]}
                        << ", expected " << int{expected[i]} << " (as bytes)";
          return false;
        }
      }
    }
    return true;
  }

 private:
  void run_ref(const uint8_t* x, const int8_t* w, const int32_t* bias, const Requantization& rq, uint8_t* y) const {
    const int32_t wz = 0;
    const std::span<const int32_t> w_zero_point(&wz, 1);
    const auto* xs = reinterpret_cast<const int8_t*>(x);
    auto* ys = reinterpret_cast<int8_t*>(y);
    if (x_type_ == Q8::u8 && y_type_ == Q8::u8) q8_conv2d_nhwc__ref(s_, x, x_zp_, w, w_zero_point, bias, rq, y);
    if (x_type_ == Q8::u8 && y_type_ == Q8::s8) q8_conv2d_nhwc__ref(s_, x, x_zp_, w, w_zero_point, bias, rq, ys);
    if (x_type_ == Q8::s8 && y_type_ == Q8::u8) q8_conv2d_nhwc__ref(s_, xs, x_zp_, w, w_zero_point, bias, rq, y);
    if (x_type_ == Q8::s8 && y_type_ == Q8::s8) q8_conv2d_nhwc__ref(s_, xs, x_zp_, w, w_zero_point, bias, rq, ys);
  }

  Conv2dShape s_;
  Q8 x_type_ = Q8::u8, y_type_ = Q8::u8;
  int32_t x_zp_ = 0, y_zp_ = 0, qmin_ = 0, qmax_ = 0;
  bool narrowed_ = false, pow2_ = false, per_tensor_ = false, bias_ = true;
  Fill fill_ = Fill::random;
  pthreadpool_t pool_ = nullptr;
  int runs_ = 1;
};

int32_t random_zero_point(Q8 t, std::mt19937& rng) {
  static const int32_t kU8[] = {0, 1, 127, 128, 255};
  static const int32_t kS8[] = {-128, -1, 0, 127};
  if (rng() % 3 == 0) return std::uniform_int_distribution<int32_t>(q8_min(t), q8_max(t))(rng);
  return t == Q8::u8 ? kU8[rng() % 5] : kS8[rng() % 4];
}

// Applies the random INT8 options every test shares: types, zero points, clamps, multipliers.
Q8DwConvTester random_q8_tester(const Conv2dShape& s, int i, std::mt19937& rng) {
  Q8DwConvTester t;
  const Q8 x_type = (i & 1) ? Q8::s8 : Q8::u8, y_type = (i & 2) ? Q8::s8 : Q8::u8;
  t.shape(s).types(x_type, y_type).x_zero_point(random_zero_point(x_type, rng));
  t.y_zero_point(random_zero_point(y_type, rng));
  if (rng() % 4 == 0) {
    const int32_t a = std::uniform_int_distribution<int32_t>(q8_min(y_type), q8_max(y_type))(rng);
    const int32_t b = std::uniform_int_distribution<int32_t>(q8_min(y_type), q8_max(y_type))(rng);
    t.clamp(std::min(a, b), std::max(a, b));
  }
  t.power_of_two_multipliers(rng() % 4 == 0).per_tensor_multiplier(rng() % 5 == 0).with_bias(rng() % 5 != 0);
  return t;
}

TEST(Q8DwConv, RandomShapesEveryKernel) {
  testing::Pool threads(pthreadpool_create(2));
  for (const Q8DwConvKernel* entry : testing::runnable_entries(kQ8DwConvKernels)) {
    const Q8DwConvKernel& kernel = *entry;
    std::mt19937 rng(4321);
    int ran = 0, unfit = 0;
    for (int i = 0; i < 1200; ++i) {
      const Conv2dShape s = random_shape(rng);
      Q8DwConvTester t = random_q8_tester(s, i, rng);
      if (!kernel.fits(s)) {
        ++unfit;
        continue;
      }
      if (i % 10 == 0) t.pool(threads.get());
      if (!t.test(kernel, rng)) return;
      ++ran;
    }
    std::printf("%s: %d random shapes (%d others it does not run)\n", kernel.name, ran, unfit);
    RecordProperty(kernel.name, ran);
  }
}

TEST(Q8DwConv, AdversarialValuesEveryKernel) {
  for (const Q8DwConvKernel* entry : testing::runnable_entries(kQ8DwConvKernels)) {
    const Q8DwConvKernel& kernel = *entry;
    std::mt19937 rng(777);
    for (int i = 0; i < 300; ++i) {
      Conv2dShape s = random_shape(rng);
      if (i % 3 == 0) {  // many taps: large sums of maximal products
        s = Conv2dShape{};
        s.in_c = 1 + static_cast<int>(rng() % 33);
        s.in_h = s.in_w = 17;
        const bool tall = rng() % 2;  // 16x3 / 15x4 / 7x7 fit the kw4 kernels, 9x9 the others
        s.kernel_h = tall ? 15 + static_cast<int>(rng() % 2) : 7 + 2 * static_cast<int>(rng() % 2);
        s.kernel_w = tall ? 19 - s.kernel_h : s.kernel_h;
        s.pad_top = s.pad_left = static_cast<int>(rng() % 4);
        ASSERT_TRUE(finish_shape(s, 3, 3));
      }
      if (i % 4 == 1) s.in_c = s.out_c = s.groups = 32 + static_cast<int>(rng() % 100);  // wide chunks
      Q8DwConvTester t = random_q8_tester(s, i, rng);
      if (!kernel.fits(s)) continue;
      t.fill(Fill::max_magnitude);
      if (i % 2) t.power_of_two_multipliers(true);
      if (!t.test(kernel, rng)) return;
    }
  }
}

TEST(Q8DwConv, ModelLayersEveryKernel) {
  testing::Pool threads(pthreadpool_create(2));
  for (const Q8DwConvKernel* entry : testing::runnable_entries(kQ8DwConvKernels)) {
    const Q8DwConvKernel& kernel = *entry;
    std::mt19937 rng(55);
    int i = 0, unfit = 0;
    for (Conv2dShape s : model_dw_shapes()) {
      // The kw4 kernels take kernels up to 8 wide (dw_kw4_fits); a layer they refuse must go
      // to another SIMD kernel of the same level, never to the scalar ref.
      if (!kernel.fits(s)) {
        ASSERT_GT(s.kernel_w, 4) << kernel.name << " refuses a layer it should run";
        const Q8DwConvKernel* other = choose_q8_dwconv_kernel(kernel.isa, s);
        ASSERT_NE(other, nullptr) << kernel.name << ": a " << s.kernel_h << "x" << s.kernel_w << " layer falls to the ref";
        EXPECT_EQ(other->isa, kernel.isa) << other->name;
        ++unfit;
        continue;
      }
      for (int batch : {1, 2}) {
        s.batch = batch;
        Q8DwConvTester t = random_q8_tester(s, i++, rng);
        ASSERT_TRUE(t.pool(batch == 2 ? threads.get() : nullptr).test(kernel, rng));
      }
    }
    std::printf("%s: %d model layers (%d go to another kernel)\n", kernel.name, i / 2, unfit);
  }
}

// 163 channels (every kernel's channel tail), 3x3 / 5x5 / 7x7 kernels, strided and dilated,
// on small maps and larger ones, batch 2 on two threads, each conv run three times on new
// activations at the same address.
TEST(Q8DwConv, ChannelTailsAndRepeatedRuns) {
  testing::Pool threads(pthreadpool_create(2));
  for (const Q8DwConvKernel* entry : testing::runnable_entries(kQ8DwConvKernels)) {
    const Q8DwConvKernel& kernel = *entry;
    std::mt19937 rng(9);
    int i = 0;
    for (int hw : kSmallMapSides) {
      for (auto [k, stride, dilation] : kSmallMapKernels) {
        Conv2dShape s{};
        ASSERT_TRUE(square_depthwise(hw, 163, k, stride, dilation, s));
        if (!kernel.fits(s)) continue;
        ASSERT_TRUE(random_q8_tester(s, i++, rng).pool(threads.get()).runs(3).test(kernel, rng));
      }
    }
  }
}

// The "kw4" kernels' tasks split the rows, the 64-channel blocks or both (dw_kw4_split): every
// split of few rows and many channels, on pools of 2 to 8 threads, against the reference.
TEST(Q8DwConv, Kw4TasksSplitRowsAndChannelBlocks) {
  std::vector<testing::Pool> pools;
  for (size_t n : {2, 3, 4, 8}) pools.emplace_back(pthreadpool_create(n));
  // (hw, channels, kernel, stride): 7x7x960 and 14x14x576 are MobileNetV2's; the others put
  // the last range on the 32-channel half, the 16-channel groups and a masked tail.
  const int kShapes[][4] = {{7, 960, 3, 1}, {14, 576, 3, 1}, {4, 200, 3, 1}, {3, 130, 3, 2},
                            {1, 257, 3, 1}, {5, 96, 2, 1},   {2, 64, 3, 1},  {6, 191, 3, 2}};
  int splits = 0;
  for (const Q8DwConvKernel* entry : testing::runnable_entries(kQ8DwConvKernels)) {
    const Q8DwConvKernel& kernel = *entry;
    if (kernel.image_rows == nullptr) continue;
    std::mt19937 rng(2024);
    int i = 0;
    for (const auto& [hw, c, k, stride] : kShapes) {
      for (int batch : {1, 2}) {
        Conv2dShape s;
        ASSERT_TRUE(square_depthwise(hw, c, k, stride, 1, s));
        s.batch = batch;
        for (const testing::Pool& pool : pools) {
          const DwKw4Split split = dw_kw4_split(s, pthreadpool_get_threads_count(pool.get()));
          splits += split.channel_parts > 1;
          Q8DwConvTester t = random_q8_tester(s, i++, rng);
          ASSERT_TRUE(t.pool(pool.get()).test(kernel, rng))
              << hw << "x" << hw << "x" << c << " batch " << batch << ", " << split.row_parts << " row parts x "
              << split.channel_parts << " channel parts";
        }
      }
    }
  }
  if (testing::runnable_entries(kQ8DwConvKernels).empty()) return;
  std::printf("%d runs split the channels\n", splits);
}

TEST(Q8DwConv, Kw4SplitKeepsEveryTaskBusy) {
  auto shape = [](int hw, int c, int k, int stride) {
    Conv2dShape s;
    EXPECT_TRUE(square_depthwise(hw, c, k, stride, 1, s));
    s.batch = 1;
    return s;
  };
  for (size_t tasks : {1, 2, 3, 4, 5, 8}) {
    for (const Conv2dShape& s : {shape(7, 960, 3, 1), shape(1, 64, 3, 1), shape(3, 130, 3, 2), shape(56, 144, 3, 1)}) {
      const DwKw4Split split = dw_kw4_split(s, tasks);
      const size_t blocks = (static_cast<size_t>(s.in_c) + kDwKw4Block - 1) / kDwKw4Block;
      EXPECT_GE(split.row_parts, 1u);
      EXPECT_GE(split.channel_parts, 1u);
      EXPECT_LE(split.row_parts * split.channel_parts, tasks);
      EXPECT_LE(split.row_parts, static_cast<size_t>(s.out_h));
      EXPECT_LE(split.channel_parts, blocks);
    }
  }
  // Few rows of many channels split the channels (7x7x960: a share of 4 rows would rebuild 2
  // of its 6 input rows); many rows split the rows; one row of one block cannot split.
  EXPECT_EQ(dw_kw4_split(shape(7, 960, 3, 1), 2).channel_parts, 2u);
  EXPECT_EQ(dw_kw4_split(shape(56, 144, 3, 1), 2).row_parts, 2u);
  // 96 channels are a block and a half: a channel split would leave one task two thirds.
  EXPECT_EQ(dw_kw4_split(shape(112, 96, 3, 2), 2).row_parts, 2u);
  const DwKw4Split one = dw_kw4_split(shape(1, 64, 3, 1), 4);
  EXPECT_EQ(one.row_parts * one.channel_parts, 1u);
}

TEST(Q8DwConv, PicksTheHighestAllowedKernelDownToThePortableRow) {
  Conv2dShape s{1, 5, 5, 8, 0, 0, 0, 3, 3, 1, 1, 1, 1, 1, 1};
  ASSERT_TRUE(finish_shape(s, 1, 1));
  std::vector<int8_t> w(8 * 9, 2);
  const float one = 1.0f;
  const Requantization rq{{&one, 1}, 10, 0, 255};
  for (Isa isa : runnable_isas()) {
    const Q8DwConvKernel* expected = nullptr;
    for (const Q8DwConvKernel& k : kQ8DwConvKernels) {
      if (isa_runs(k.isa, isa) && k.fits(s)) {
        expected = &k;
        break;
      }
    }
    ASSERT_NE(expected, nullptr) << "no row at " << isa_name(isa) << ": every level has one, the portable row included";
    EXPECT_EQ(choose_q8_dwconv_kernel(isa, s), expected);
    Q8DwConv conv(s, Q8::u8, 3, w.data(), nullptr, rq, Q8::u8, isa);
    EXPECT_EQ(conv.kernel_name(), expected->name) << isa_name(isa);
    EXPECT_EQ(conv.kernel_id().scalar, isa == Isa::scalar) << conv.kernel_name();
    // x = 5 with zero point 3: each tap inside adds (5 - 3) * 2 = 4, padding adds 0.
    std::vector<uint8_t> x(5 * 5 * 8, 5), y(5 * 5 * 8);
    conv.bind(x.data());
    conv.run(x.data(), y.data(), nullptr);
    EXPECT_EQ(y[0], 10 + 4 * 4) << conv.kernel_name();
    EXPECT_EQ(y[(2 * 5 + 2) * 8], 10 + 9 * 4) << conv.kernel_name();
  }
}

// Which shapes the kw4 kernels take past 4 wide: a second word of taps where the stride
// divides 4 * dilation and the slot's words stay in registers (dw_kw4_register_words).
TEST(Q8DwConv, Kw4TakesWideKernelsWithRegisterWordsOnly) {
  auto shape = [](int kh, int kw, int stride, int dilation) {
    Conv2dShape s{};
    s.batch = 1;
    s.in_h = s.in_w = 20;
    s.in_c = 16;
    s.kernel_h = kh;
    s.kernel_w = kw;
    s.stride_h = s.stride_w = stride;
    s.dilation_h = s.dilation_w = dilation;
    EXPECT_TRUE(finish_shape(s, 0, 0));
    return s;
  };
  for (auto [kh, kw] : {std::array{5, 5}, {7, 7}, {1, 7}, {5, 8}, {7, 6}}) {
    EXPECT_TRUE(dw_kw4_fits(shape(kh, kw, 1, 1))) << kh << "x" << kw;
    EXPECT_TRUE(dw_kw4_fits(shape(kh, kw, 2, 1))) << kh << "x" << kw << " stride 2";
    EXPECT_TRUE(dw_kw4_fits(shape(kh, kw, 1, 2))) << kh << "x" << kw << " dilation 2";
    EXPECT_FALSE(dw_kw4_fits(shape(kh, kw, 3, 1))) << kh << "x" << kw << " stride 3";
  }
  for (auto [kh, kw] : {std::array{3, 5}, {2, 5}, {6, 6}, {9, 9}, {5, 9}}) {
    EXPECT_FALSE(dw_kw4_fits(shape(kh, kw, 1, 1))) << kh << "x" << kw;
  }
  EXPECT_TRUE(dw_kw4_fits(shape(6, 3, 1, 1)));  // up to 4 wide: any height, as before
}

TEST(Q8DwConv, WideKernelsFallBackToAKernelThatRunsThem) {
  Conv2dShape s{1, 13, 13, 20, 0, 0, 0, 9, 9, 1, 1, 1, 1, 4, 4};
  ASSERT_TRUE(finish_shape(s, 4, 4));
  std::vector<int8_t> w(20 * 81, 1);
  const float one = 1.0f;
  const Requantization rq{{&one, 1}, 0, 0, 255};
  for (const Q8DwConvKernel& k : kQ8DwConvKernels) {
    if (!isa_supported(k.isa) || k.fits(s)) continue;
    EXPECT_THROW(Q8DwConv(s, Q8::u8, 0, w.data(), nullptr, rq, Q8::u8, k), std::invalid_argument) << k.name;
    const std::string picked = Q8DwConv(s, Q8::u8, 0, w.data(), nullptr, rq, Q8::u8, k.isa).kernel_name();
    EXPECT_NE(picked, k.name);
  }
}

}  // namespace
}  // namespace octet::kernels
