// The linear-resize microkernels (kernels/resize/resize_list.h) against resize_linear_nhwc__ref, bit
// for bit, for every entry this CPU runs: FP32, uint8 and int8, enlarging and shrinking by odd
// factors with every coordinate transform, channel counts around each vector width (tails),
// single-pixel axes (both taps on one pixel, weights 0.5), extreme values, two threads. And
// nearest resize (a copy of pixels and rows) against resize_nearest_nhwc__ref.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cfloat>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/resize/resize.h"
#include "kernels/ref/resize.h"
#include "kernels/resize/resize_list.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace resize_test {

const CoordinateTransform kTransforms[] = {CoordinateTransform::half_pixel, CoordinateTransform::half_pixel_symmetric,
                                           CoordinateTransform::pytorch_half_pixel, CoordinateTransform::align_corners,
                                           CoordinateTransform::asymmetric, CoordinateTransform::tf_half_pixel_for_nn};

struct ResizeCase {
  Resize2dShape s;
  Resize2dParams p;
};

ResizeCase random_setup(std::mt19937& rng, ResizeMode mode) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int channels[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65};
  ResizeCase u;
  u.s.batch = uni(1, 2);
  u.s.channels = channels[uni(0, 13)];
  u.s.in_h = uni(1, 9);
  u.s.in_w = uni(1, 9);
  const float factors[] = {0.3f, 0.5f, 0.75f, 1.0f, 1.3f, 2.0f, 2.5f, 3.0f};
  u.p.mode = mode;
  u.p.transform = kTransforms[uni(0, 5)];
  u.p.rounding = NearestRounding(uni(0, 4));
  u.p.scale_h = factors[uni(0, 7)];
  u.p.scale_w = factors[uni(0, 7)];
  u.s.out_h = std::max(1, int(u.p.scale_h * float(u.s.in_h)));
  u.s.out_w = std::max(1, int(u.p.scale_w * float(u.s.in_w)));
  return u;
}

template <class T>
std::vector<T> random_data(std::mt19937& rng, size_t n) {
  std::vector<T> x(n);
  if constexpr (std::is_same_v<T, float>) {
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int> pick(0, 19);
    const float extremes[] = {FLT_MAX / 4, -FLT_MAX / 4, 1e-38f, -0.0f, 1e7f};
    for (float& v : x) v = pick(rng) == 0 ? extremes[pick(rng) % 5] : normal(rng);
  } else {
    std::uniform_int_distribution<int> byte(0, 255), pick(0, 7);
    for (T& v : x) {
      const int b = pick(rng) == 0 ? (pick(rng) % 2 ? 255 : 0) : byte(rng);  // the ends of the range, often
      v = static_cast<T>(std::is_same_v<T, int8_t> ? b - 128 : b);
    }
  }
  return x;
}


template <class T>
void check(std::mt19937& rng, const ResizeCase& u, ResizeElement e, const ResizeUkernel& k, pthreadpool_t pool = nullptr) {
  const Resize2dShape& s = u.s;
  const auto x = random_data<T>(rng, size_t(s.batch) * s.in_h * s.in_w * s.channels);
  const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.channels;
  std::vector<T> expected(n);
  const LinearTaps rows = linear_taps({s.in_h, s.out_h, u.p.scale_h}, u.p.transform);
  const LinearTaps cols = linear_taps({s.in_w, s.out_w, u.p.scale_w}, u.p.transform);
  resize_linear_nhwc__ref(s, rows, cols, x.data(), expected.data());
  std::vector<T> y(n + 1, T(0x5A));
  Resize2d driver(s, u.p, e, k);
  driver.run(x.data(), y.data(), pool);
  EXPECT_EQ(y[n], T(0x5A)) << k.name << " wrote past the output";
  EXPECT_EQ(std::memcmp(y.data(), expected.data(), n * sizeof(T)), 0)
      << k.name << ": " << s.in_h << "x" << s.in_w << "x" << s.channels << " -> " << s.out_h << "x" << s.out_w
      << ", transform " << int(u.p.transform);
}

TEST(ResizeLinear, RandomShapesEveryKernelIsBitExact) {
  std::mt19937 rng(20261128);
  const auto f32 = testing::runnable_entries(kF32ResizeLinearUkernels);
  const auto u8 = testing::runnable_entries(kQu8ResizeLinearUkernels);
  const auto s8 = testing::runnable_entries(kQs8ResizeLinearUkernels);
  for (int i = 0; i < 300 && !HasFailure(); ++i) {
    const ResizeCase u = random_setup(rng, ResizeMode::linear);
    for (const auto* k : f32) check<float>(rng, u, ResizeElement::f32, *k);
    for (const auto* k : u8) check<uint8_t>(rng, u, ResizeElement::u8, *k);
    for (const auto* k : s8) check<int8_t>(rng, u, ResizeElement::s8, *k);
  }
}

// A YOLO neck's 2x upsample and a segmentation head's 8x, at their channel counts, two threads.
TEST(ResizeLinear, ModelLayersTwoThreads) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(7);
  ResizeCase neck;
  neck.s = {1, 20, 20, 40, 40, 256};
  neck.p = {ResizeMode::linear, CoordinateTransform::half_pixel, NearestRounding::round_prefer_floor, 2.0f, 2.0f};
  ResizeCase head;
  head.s = {2, 7, 9, 56, 72, 21};
  head.p = {ResizeMode::linear, CoordinateTransform::align_corners, NearestRounding::round_prefer_floor, 8.0f, 8.0f};
  for (const auto* k : testing::runnable_entries(kF32ResizeLinearUkernels))
    for (const ResizeCase& u : {neck, head}) check<float>(rng, u, ResizeElement::f32, *k, pool.get());
  for (const auto* k : testing::runnable_entries(kQu8ResizeLinearUkernels))
    for (const ResizeCase& u : {neck, head}) check<uint8_t>(rng, u, ResizeElement::u8, *k, pool.get());
}

// Nearest copies: every rounding and transform, runs of repeated rows, two threads.
TEST(ResizeNearest, CopiesWhatTheReferenceCopies) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(3);
  for (int i = 0; i < 300 && !HasFailure(); ++i) {
    const ResizeCase u = random_setup(rng, ResizeMode::nearest);
    const Resize2dShape& s = u.s;
    const auto x = random_data<float>(rng, size_t(s.batch) * s.in_h * s.in_w * s.channels);
    const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.channels;
    const auto rows = nearest_source_indices({s.in_h, s.out_h, u.p.scale_h}, u.p.transform, u.p.rounding);
    const auto cols = nearest_source_indices({s.in_w, s.out_w, u.p.scale_w}, u.p.transform, u.p.rounding);
    std::vector<float> expected(n), y(n + 1, 7.0f);
    resize_nearest_nhwc__ref(s, rows.data(), cols.data(), sizeof(float), x.data(), expected.data());
    Resize2d driver(s, u.p, ResizeElement::f32, Isa::avx512vnni);
    EXPECT_EQ(driver.kernel_name(), "resize_nearest_nhwc__copy");
    driver.run(x.data(), y.data(), i % 2 ? pool.get() : nullptr);
    EXPECT_EQ(y[n], 7.0f) << "wrote past the output";
    EXPECT_EQ(std::memcmp(y.data(), expected.data(), n * sizeof(float)), 0)
        << s.in_h << "x" << s.in_w << "x" << s.channels << " -> " << s.out_h << "x" << s.out_w;
  }
}

// The coordinate arithmetic on cases whose answers are known by hand.
TEST(ResizeTaps, KnownValues) {
  // half_pixel 2x: output 0 -> -0.25 clamps to 0 (both taps pixel 0... i1 = 1, weights 1, 0).
  const LinearTaps t = linear_taps({4, 8, 2.0f}, CoordinateTransform::half_pixel);
  EXPECT_EQ(t.i0[0], 0);
  EXPECT_EQ(t.w0[0], 1.0f);
  EXPECT_EQ(t.w1[0], 0.0f);
  EXPECT_EQ(t.i0[1], 0);  // 0.25
  EXPECT_EQ(t.w0[1], 0.75f);
  EXPECT_EQ(t.w1[1], 0.25f);
  EXPECT_EQ(t.i0[7], 3);  // 3.25 clamps to 3, the last pixel: both taps on it, 0.5 each
  EXPECT_EQ(t.i1[7], 3);
  EXPECT_EQ(t.w0[7], 0.5f);
  // asymmetric 2x with floor: 0 0 1 1 2 2; Resize-10's simple rounding when shrinking: ceil.
  EXPECT_EQ(nearest_source_indices({3, 6, 2.0f}, CoordinateTransform::asymmetric, NearestRounding::floor),
            (std::vector<int32_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(nearest_source_indices({5, 2, 0.4f}, CoordinateTransform::asymmetric, NearestRounding::simple),
            (std::vector<int32_t>{0, 3}));
  // round_prefer_floor on a tie (half_pixel 0.5x of 4: 0.5 and 2.5) goes down.
  EXPECT_EQ(nearest_source_indices({4, 2, 0.5f}, CoordinateTransform::half_pixel, NearestRounding::round_prefer_floor),
            (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(nearest_source_indices({4, 2, 0.5f}, CoordinateTransform::half_pixel, NearestRounding::round_prefer_ceil),
            (std::vector<int32_t>{1, 3}));
}

}  // namespace resize_test
}  // namespace octet::kernels
