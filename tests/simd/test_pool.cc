// Max- and average-pooling microkernels (kernels/pool/pool_list.h) through their drivers
// (kernels/pool/pool2d.h) against the scalar ref kernels, for every entry this CPU
// supports: bit-exact for max (FP32 with -inf, -FLT_MAX, NaN and signed zeros; uint8 / int8 at
// the ends of their ranges) and for average (the kernels sum in double in the ref's order), on
// random shapes: kernels 1..7, strides 1..3, dilations 1..2, asymmetric pads, ceil_mode windows
// that run past the pads, windows with no position inside the input, channels around every
// vector width, batch 1..3, with and without a 2-thread pool.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/pool/pool2d.h"
#include "kernels/pool/pool_list.h"
#include "kernels/ref/pool2d.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Pool;

template <class Fn>
std::vector<const PoolUkernel<Fn>*> runnable(std::span<const PoolUkernel<Fn>> list) {
  return testing::runnable_entries(list);
}

std::string describe(const Pool2dShape& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "N%d %dx%dx%d -> %dx%d k%dx%d s%dx%d d%dx%d pad(t%d,l%d,b%d,r%d)", s.batch, s.in_h,
                s.in_w, s.channels, s.out_h, s.out_w, s.kernel_h, s.kernel_w, s.stride_h, s.stride_w, s.dilation_h,
                s.dilation_w, s.pad_top, s.pad_left, s.pad_bottom, s.pad_right);
  return buf;
}

// Output extent as ONNX computes it; with ceil_mode a last window that would start past the
// input and the leading pad is dropped (ONNX Runtime's rule). 0 when the window does not fit.
int out_extent(int in, int pad_begin, int pad_end, int kernel, int stride, int dilation, bool ceil_mode) {
  const int span = dilation * (kernel - 1) + 1, room = in + pad_begin + pad_end - span;
  if (room < 0) return 0;
  int out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

// Whether the last window of an axis runs past the trailing pad.
bool overruns(int in, int pad_begin, int pad_end, int kernel, int stride, int dilation, int out) {
  return (out - 1) * stride + dilation * (kernel - 1) + 1 > in + pad_begin + pad_end;
}

const int kChannels[] = {1, 3, 17, 31, 64, 100};

Pool2dShape random_shape(std::mt19937& rng, bool ceil_mode) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    Pool2dShape s;
    s.batch = uni(0, 4) == 0 ? uni(2, 3) : 1;
    s.channels = kChannels[uni(0, 5)];
    if (uni(0, 4) == 0) s.channels = uni(1, 300);  // every tail, and the 4-vector blocks of bytes
    s.kernel_h = uni(1, 7);
    s.kernel_w = uni(0, 2) == 0 ? uni(1, 7) : s.kernel_h;
    s.stride_h = uni(1, 3);
    s.stride_w = uni(0, 3) == 0 ? uni(1, 3) : s.stride_h;
    s.dilation_h = uni(0, 3) == 0 ? 2 : 1;
    s.dilation_w = uni(0, 3) == 0 ? 2 : 1;
    s.in_h = uni(0, 9) == 0 ? 1 : uni(1, 13);
    s.in_w = uni(0, 9) == 0 ? 1 : uni(1, 13);
    // Pads up to the kernel extent: a pad of a whole kernel leaves windows with no input.
    s.pad_top = uni(0, s.kernel_h - 1 + (uni(0, 9) == 0));
    s.pad_bottom = uni(0, s.kernel_h - 1);
    s.pad_left = uni(0, s.kernel_w - 1 + (uni(0, 9) == 0));
    s.pad_right = uni(0, s.kernel_w - 1);
    s.out_h = out_extent(s.in_h, s.pad_top, s.pad_bottom, s.kernel_h, s.stride_h, s.dilation_h, ceil_mode);
    s.out_w = out_extent(s.in_w, s.pad_left, s.pad_right, s.kernel_w, s.stride_w, s.dilation_w, ceil_mode);
    if (s.out_h >= 1 && s.out_w >= 1) return s;
  }
}

size_t in_count(const Pool2dShape& s) { return size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.channels; }
size_t out_count(const Pool2dShape& s) { return size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.channels; }

// A random 2-D shape given a depth (3-D pools: video CNNs): kernels 1..4 deep, strides 1..3,
// dilation 2 now and then, pads up to a whole kernel (planes with no input), depth 1.
Pool2dShape random_shape_3d(std::mt19937& rng, bool ceil_mode) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    Pool2dShape s = random_shape(rng, ceil_mode);
    s.kernel_d = uni(1, 4);
    s.stride_d = uni(1, 3);
    s.dilation_d = uni(0, 3) == 0 ? 2 : 1;
    s.in_d = uni(0, 5) == 0 ? 1 : uni(1, 6);
    s.pad_front = uni(0, s.kernel_d - 1 + (uni(0, 9) == 0));
    s.pad_back = uni(0, s.kernel_d - 1);
    s.out_d = out_extent(s.in_d, s.pad_front, s.pad_back, s.kernel_d, s.stride_d, s.dilation_d, ceil_mode);
    if (s.out_d >= 1 && in_count(s) < 60000) return s;
  }
}

std::string describe3d(const Pool2dShape& s) {
  return describe(s) + " depth " + std::to_string(s.in_d) + "->" + std::to_string(s.out_d) + " kd" +
         std::to_string(s.kernel_d) + " sd" + std::to_string(s.stride_d) + " dd" + std::to_string(s.dilation_d) +
         " pad(f" + std::to_string(s.pad_front) + ",b" + std::to_string(s.pad_back) + ")";
}

// FP32 values for max pooling: mostly uniform, with the values that decide a max's edge cases.
std::vector<float> max_inputs(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float specials[] = {-INFINITY, -FLT_MAX, -1e38f, -3e38f, -0.0f, 0.0f, NAN, -NAN, INFINITY, FLT_MAX};
  std::vector<float> v(n);
  const int mode = int(rng() % 4);  // 0: all specials, 1: all -inf, else a mix
  for (float& e : v) {
    if (mode == 1) e = -INFINITY;
    else if (mode == 0 || rng() % 6 == 0) e = specials[rng() % std::size(specials)];
    else e = u(rng);
  }
  return v;
}

// FP32 values for average pooling: uniform, sometimes large, with signed zeros.
std::vector<float> avg_inputs(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& e : v) {
    const uint32_t r = rng() % 16;
    e = r == 0 ? -0.0f : r == 1 ? 0.0f : r == 2 ? u(rng) * 3e38f : u(rng) * (r == 3 ? 1e-30f : 1.0f);
  }
  return v;
}

template <class T>
std::vector<T> q8_inputs(std::mt19937& rng, size_t n) {
  const int lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  std::vector<T> v(n);
  const int mode = int(rng() % 4);  // 0: all lowest, 1: only the two extremes, else a mix
  for (T& e : v) {
    const int r = int(rng() % 256);
    if (mode == 0) e = T(lo);
    else if (mode == 1) e = T(r & 1 ? hi : lo);
    else e = T(r < 32 ? lo : r < 64 ? hi : lo + r);
  }
  return v;
}

// Bitwise, except that two NaNs are equal (their payloads are not specified).
bool same_float(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T>
void expect_same(const std::vector<T>& expected, const std::vector<T>& y, const std::string& what) {
  size_t bad = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    bool ok;
    if constexpr (std::is_same_v<T, float>) ok = same_float(expected[i], y[i]);
    else ok = expected[i] == y[i];
    if (ok) continue;
    if (++bad <= 3) {
      if constexpr (std::is_same_v<T, float>)
        ADD_FAILURE() << what << " at " << i << ": " << y[i] << " vs ref " << expected[i];
      else
        ADD_FAILURE() << what << " at " << i << ": " << int(y[i]) << " vs ref " << int(expected[i]);
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

Pool two_threads() { return Pool(pthreadpool_create(2)); }

template <class Driver, class X, class Y>
void run_driver(Driver& d, const X* x, Y* y, pthreadpool_t pool) {
  d.bind(x);
  d.run(x, y, pool);
}

constexpr int kShapes = 300;

TEST(PoolUkernels, F32MaxPoolRandomShapesEveryKernel) {
  Pool pool = two_threads();
  for (const auto* k : runnable(kF32MaxPoolUkernels)) {
    std::mt19937 rng(11);
    int overrun = 0;
    for (int i = 0; i < kShapes; ++i) {
      const bool ceil_mode = i % 2 == 1;
      const Pool2dShape s = random_shape(rng, ceil_mode);
      overrun += ceil_mode && (overruns(s.in_h, s.pad_top, s.pad_bottom, s.kernel_h, s.stride_h, s.dilation_h, s.out_h) ||
                               overruns(s.in_w, s.pad_left, s.pad_right, s.kernel_w, s.stride_w, s.dilation_w, s.out_w));
      const std::vector<float> x = max_inputs(rng, in_count(s));
      std::vector<float> expected(out_count(s)), y(out_count(s), 7.0f);
      f32_maxpool2d_nhwc__ref(s, x.data(), expected.data());
      F32MaxPool2d d(s, *k);
      run_driver(d, x.data(), y.data(), i % 3 == 0 ? pool.get() : nullptr);
      expect_same(expected, y, std::string(k->name) + " " + describe(s));
    }
    EXPECT_GT(overrun, kShapes / 10) << "too few ceil_mode windows ran past the pads";
  }
}

template <class T>
void q8_maxpool_random_shapes(Q8 type, const PoolUkernel<Q8PoolUkernel>& k) {
  Pool pool = two_threads();
  std::mt19937 rng(12);
  for (int i = 0; i < kShapes; ++i) {
    const Pool2dShape s = random_shape(rng, i % 2 == 1);
    const std::vector<T> x = q8_inputs<T>(rng, in_count(s));
    std::vector<T> expected(out_count(s)), y(out_count(s), T(0x5A));
    q8_maxpool2d_nhwc__ref(s, x.data(), expected.data());
    Q8MaxPool2d d(type, s, k);
    run_driver(d, x.data(), y.data(), i % 3 == 0 ? pool.get() : nullptr);
    expect_same(expected, y, std::string(k.name) + " " + describe(s));
  }
}

TEST(PoolUkernels, Qu8MaxPoolRandomShapesEveryKernel) {
  for (const auto* k : runnable(kQu8MaxPoolUkernels)) q8_maxpool_random_shapes<uint8_t>(Q8::u8, *k);
}

TEST(PoolUkernels, Qs8MaxPoolRandomShapesEveryKernel) {
  for (const auto* k : runnable(kQs8MaxPoolUkernels)) q8_maxpool_random_shapes<int8_t>(Q8::s8, *k);
}

TEST(PoolUkernels, F32AvgPoolRandomShapesEveryKernelIsBitExact) {
  Pool pool = two_threads();
  for (const auto* k : runnable(kF32AvgPoolUkernels)) {
    std::mt19937 rng(13);
    for (int i = 0; i < kShapes; ++i) {
      const Pool2dShape s = random_shape(rng, i % 2 == 1);
      const bool include_pad = i % 4 >= 2;
      const std::vector<float> x = avg_inputs(rng, in_count(s));
      std::vector<float> expected(out_count(s)), y(out_count(s), 7.0f);
      f32_avgpool2d_nhwc__ref(s, include_pad, x.data(), expected.data(), f32_avgpool_sum_rows(s, ort_nchwc_block()));
      F32AvgPool2d d(s, include_pad, *k);
      run_driver(d, x.data(), y.data(), i % 3 == 0 ? pool.get() : nullptr);
      expect_same(expected, y,
                  std::string(k->name) + " " + describe(s) + (include_pad ? " count_include_pad" : ""));
    }
  }
}

// Windows larger than the random shapes' 7x7 (9x9, 13x5 and 23x23: up to 529 taps a pixel), with
// padding and count_include_pad both ways, batch 2, channels with and without a tail.
TEST(PoolUkernels, F32AvgPoolLargeWindowsAreBitExact) {
  Pool pool = two_threads();
  std::mt19937 rng(15);
  const int windows[][2] = {{9, 9}, {13, 5}, {23, 23}};
  for (const auto* k : runnable(kF32AvgPoolUkernels)) {
    for (const auto& w : windows)
      for (int channels : {40, 67})
        for (bool include_pad : {false, true}) {
          Pool2dShape s;
          s.batch = 2;
          s.in_h = 15;
          s.in_w = 11;
          s.channels = channels;
          s.kernel_h = w[0];
          s.kernel_w = w[1];
          s.stride_h = s.stride_w = 2;
          s.pad_top = s.pad_bottom = w[0] / 2;
          s.pad_left = s.pad_right = w[1] / 2;
          s.out_h = out_extent(s.in_h, s.pad_top, s.pad_bottom, s.kernel_h, 2, 1, false);
          s.out_w = out_extent(s.in_w, s.pad_left, s.pad_right, s.kernel_w, 2, 1, false);
          const std::vector<float> x = avg_inputs(rng, in_count(s));
          std::vector<float> expected(out_count(s)), y(out_count(s), 7.0f);
          f32_avgpool2d_nhwc__ref(s, include_pad, x.data(), expected.data(), f32_avgpool_sum_rows(s, ort_nchwc_block()));
          F32AvgPool2d d(s, include_pad, *k);
          run_driver(d, x.data(), y.data(), pool.get());
          expect_same(expected, y, std::string(k->name) + " " + describe(s) + (include_pad ? " count_include_pad" : ""));
        }
  }
}

// The layers the engine meets: torchvision ResNet / ShuffleNet (3x3 s2 pad 1) and SqueezeNet
// (3x3 s2 ceil_mode), batch 2 so input_offset moves the pointers.
TEST(PoolUkernels, ModelLayersEveryKernel) {
  Pool pool = two_threads();
  struct Layer {
    int in, c, pad;
    bool ceil_mode;
  };
  const Layer layers[] = {{112, 64, 1, false}, {24, 24, 1, false}, {111, 64, 0, true}, {55, 128, 0, true}};
  std::mt19937 rng(14);
  for (const Layer& l : layers) {
    Pool2dShape s;
    s.batch = 2;
    s.in_h = s.in_w = l.in;
    s.channels = l.c;
    s.kernel_h = s.kernel_w = 3;
    s.stride_h = s.stride_w = 2;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = l.pad;
    s.out_h = s.out_w = out_extent(l.in, l.pad, l.pad, 3, 2, 1, l.ceil_mode);
    const std::vector<float> x = max_inputs(rng, in_count(s));
    std::vector<float> expected(out_count(s)), y(out_count(s));
    f32_maxpool2d_nhwc__ref(s, x.data(), expected.data());
    for (const auto* k : runnable(kF32MaxPoolUkernels)) {
      F32MaxPool2d d(s, *k);
      run_driver(d, x.data(), y.data(), pool.get());
      expect_same(expected, y, std::string(k->name) + " " + describe(s));
    }
    const std::vector<uint8_t> q = q8_inputs<uint8_t>(rng, in_count(s));
    std::vector<uint8_t> q_expected(out_count(s)), q_y(out_count(s));
    q8_maxpool2d_nhwc__ref(s, q.data(), q_expected.data());
    for (const auto* k : runnable(kQu8MaxPoolUkernels)) {
      Q8MaxPool2d d(Q8::u8, s, *k);
      run_driver(d, q.data(), q_y.data(), pool.get());
      expect_same(q_expected, q_y, std::string(k->name) + " " + describe(s));
    }
  }
}

// 3-D pools (NDHWC): every kernel against the ref, bit for bit, max in FP32 and both byte
// types, average in FP32 with both summation orders (sum_rows kernel_d * kernel_h, or 1).
TEST(PoolUkernels, ThreeDimensionalEveryKernel) {
  Pool pool = two_threads();
  std::mt19937 rng(16);
  int empty_planes = 0;
  for (int i = 0; i < 120; ++i) {
    const Pool2dShape s = random_shape_3d(rng, i % 2 == 1);
    empty_planes += s.pad_front >= s.kernel_d;
    pthreadpool_t threads = i % 3 == 0 ? pool.get() : nullptr;
    const std::vector<float> x = max_inputs(rng, in_count(s));
    std::vector<float> expected(out_count(s)), y(out_count(s));
    f32_maxpool2d_nhwc__ref(s, x.data(), expected.data());
    for (const auto* k : runnable(kF32MaxPoolUkernels)) {
      F32MaxPool2d d(s, *k);
      run_driver(d, x.data(), y.data(), threads);
      expect_same(expected, y, std::string(k->name) + " " + describe3d(s));
    }
    const std::vector<int8_t> q = q8_inputs<int8_t>(rng, in_count(s));
    std::vector<int8_t> q_expected(out_count(s)), q_y(out_count(s));
    q8_maxpool2d_nhwc__ref(s, q.data(), q_expected.data());
    for (const auto* k : runnable(kQs8MaxPoolUkernels)) {
      Q8MaxPool2d d(Q8::s8, s, *k);
      run_driver(d, q.data(), q_y.data(), threads);
      expect_same(q_expected, q_y, std::string(k->name) + " " + describe3d(s));
    }
    const bool include_pad = i % 4 >= 2;
    const std::vector<float> a = avg_inputs(rng, in_count(s));
    f32_avgpool2d_nhwc__ref(s, include_pad, a.data(), expected.data(), f32_avgpool_sum_rows(s, ort_nchwc_block()));
    for (const auto* k : runnable(kF32AvgPoolUkernels)) {
      F32AvgPool2d d(s, include_pad, *k);
      run_driver(d, a.data(), y.data(), threads);
      expect_same(expected, y, std::string(k->name) + " " + describe3d(s) + (include_pad ? " count_include_pad" : ""));
    }
  }
  EXPECT_GT(empty_planes, 0) << "no window started in a whole plane of padding";
}

// The 3-D refs against 2-D pools of planes: a max is the max over the depth taps of the 2-D
// maxima of the planes they read; an average with a one-plane window and the column order
// (sum_rows = kernel_h) is the 2-D average of that plane.
TEST(PoolRef, ThreeDimensionalIsPlanesOf2d) {
  std::mt19937 rng(17);
  for (int i = 0; i < 60; ++i) {
    Pool2dShape s = random_shape_3d(rng, i % 2 == 1);
    Pool2dShape p = s;  // one plane
    p.batch = 1, p.in_d = p.out_d = p.kernel_d = p.stride_d = p.dilation_d = 1, p.pad_front = p.pad_back = 0;
    const size_t plane_in = size_t(s.in_h) * s.in_w * s.channels, plane_out = size_t(s.out_h) * s.out_w * s.channels;
    const std::vector<float> x = avg_inputs(rng, in_count(s));
    std::vector<float> got(out_count(s)), plane(plane_out);
    f32_maxpool2d_nhwc__ref(s, x.data(), got.data());
    for (int n = 0; n < s.batch; ++n)
      for (int oz = 0; oz < s.out_d; ++oz) {
        std::vector<float> want(plane_out, std::numeric_limits<float>::lowest());
        for (int kz = 0; kz < s.kernel_d; ++kz) {
          const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
          if (iz < 0 || iz >= s.in_d) continue;
          f32_maxpool2d_nhwc__ref(p, x.data() + (size_t(n) * s.in_d + size_t(iz)) * plane_in, plane.data());
          for (size_t j = 0; j < plane_out; ++j) want[j] = std::max(want[j], plane[j]);
        }
        const std::vector<float> mine(got.begin() + long((size_t(n) * s.out_d + size_t(oz)) * plane_out),
                                      got.begin() + long((size_t(n) * s.out_d + size_t(oz) + 1) * plane_out));
        expect_same(want, mine, "max " + describe3d(s));
      }
    // Average, one-plane window: out plane oz reads input plane oz * stride_d - pad_front.
    s.kernel_d = 1, s.pad_front = s.pad_back = 0, s.out_d = (s.in_d - 1) / s.stride_d + 1;
    std::vector<float> avg(out_count(s));
    f32_avgpool2d_nhwc__ref(s, false, x.data(), avg.data(), s.kernel_h);
    for (int n = 0; n < s.batch; ++n)
      for (int oz = 0; oz < s.out_d; ++oz) {
        f32_avgpool2d_nhwc__ref(p, false, x.data() + (size_t(n) * s.in_d + size_t(oz) * s.stride_d) * plane_in,
                                plane.data(), p.kernel_h);
        const std::vector<float> mine(avg.begin() + long((size_t(n) * s.out_d + size_t(oz)) * plane_out),
                                      avg.begin() + long((size_t(n) * s.out_d + size_t(oz) + 1) * plane_out));
        expect_same(plane, mine, "avg " + describe3d(s));
      }
  }
}

TEST(PoolDrivers, PickTheHighestAllowedKernelAndTheRefComputes) {
  std::mt19937 rng(15);
  const Pool2dShape s = random_shape(rng, true);
  for (Isa isa : runnable_isas()) {
    F32MaxPool2d f32_max(s, isa);
    Q8MaxPool2d s8_max(Q8::s8, s, isa);
    F32AvgPool2d avg(s, true, isa);
    const auto* want = first_runnable(kF32MaxPoolUkernels, isa);
    EXPECT_EQ(f32_max.kernel_name(), want ? want->name : "f32_maxpool2d_nhwc__ref") << isa_name(isa);
    if (isa == Isa::scalar) {
      EXPECT_EQ(f32_max.kernel_name(), "f32_maxpool2d_nhwc__ref");
      EXPECT_EQ(s8_max.kernel_name(), "q8_maxpool2d_nhwc__ref");
      EXPECT_EQ(avg.kernel_name(), "f32_avgpool2d_nhwc__ref");
    } else if (want != nullptr) {  // this architecture has pooling kernels at this level
      EXPECT_NE(f32_max.kernel_name().find("f32_maxpool__"), std::string::npos);
      EXPECT_NE(s8_max.kernel_name().find("qs8_maxpool__"), std::string::npos);
      EXPECT_NE(avg.kernel_name().find("f32_avgpool__"), std::string::npos);
    }
    const std::vector<float> x = max_inputs(rng, in_count(s));
    std::vector<float> expected(out_count(s)), y(out_count(s));
    f32_maxpool2d_nhwc__ref(s, x.data(), expected.data());
    run_driver(f32_max, x.data(), y.data(), nullptr);
    expect_same(expected, y, std::string(isa_name(isa)) + " " + describe(s));
  }
}

TEST(PoolDrivers, RunRejectsAnInputItWasNotBoundTo) {
  Pool2dShape s;
  s.in_h = s.in_w = s.out_h = s.out_w = 2;
  s.channels = 4;
  std::vector<float> x(16), other(16), y(16);
  F32MaxPool2d d(s, active_isa());
  EXPECT_THROW(d.run(x.data(), y.data(), nullptr), std::invalid_argument);
  d.bind(x.data());
  EXPECT_THROW(d.run(other.data(), y.data(), nullptr), std::invalid_argument);
  EXPECT_NO_THROW(d.run(x.data(), y.data(), nullptr));
}

}  // namespace
}  // namespace octet::kernels
