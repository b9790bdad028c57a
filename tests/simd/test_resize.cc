// The linear-resize microkernels (kernels/resize/resize_list.h) against resize_linear_nhwc__ref, bit
// for bit, for every entry this CPU runs: FP32, uint8 and int8, enlarging and shrinking by odd
// factors with every coordinate transform, channel counts around each vector width (tails),
// single-pixel axes (both taps on one pixel, weights 0.5), extreme values, two threads. The
// cubic microkernels against resize_cubic_nhwc__ref likewise (a of -0.5 and -0.75, with and
// without exclude_outside). And nearest resize (a copy of pixels and rows) against
// resize_nearest_nhwc__ref. tf_crop_and_resize (random regions reaching outside the input,
// extrapolated) in every mode.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cfloat>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/fallback.h"
#include "kernels/resize/resize.h"
#include "kernels/ref/resize.h"
#include "kernels/resize/resize_list.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace resize_test {

const CoordinateTransform kTransforms[] = {CoordinateTransform::half_pixel, CoordinateTransform::half_pixel_symmetric,
                                           CoordinateTransform::pytorch_half_pixel, CoordinateTransform::align_corners,
                                           CoordinateTransform::asymmetric, CoordinateTransform::tf_half_pixel_for_nn,
                                           CoordinateTransform::tf_crop_and_resize};

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
  u.p.transform = kTransforms[uni(0, 6)];
  u.p.rounding = NearestRounding(uni(0, 4));
  u.p.scale_h = factors[uni(0, 7)];
  u.p.scale_w = factors[uni(0, 7)];
  // Regions inside the input, and reaching past either end (extrapolated there).
  const float roi[] = {-0.3f, 0.0f, 0.2f, 0.5f, 0.8f, 1.0f, 1.4f};
  u.p.roi_h[0] = roi[uni(0, 3)], u.p.roi_h[1] = roi[uni(3, 6)];
  u.p.roi_w[0] = roi[uni(0, 3)], u.p.roi_w[1] = roi[uni(3, 6)];
  u.p.extrapolation_value = uni(0, 1) ? 10.0f : -300.5f;
  u.p.cubic_coeff_a = uni(0, 1) ? -0.75f : -0.5f;
  u.p.exclude_outside = uni(0, 1) == 1;
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


ResizeAxis axis_h(const ResizeCase& u) { return {u.s.in_h, u.s.out_h, u.p.scale_h, u.p.roi_h[0], u.p.roi_h[1]}; }
ResizeAxis axis_w(const ResizeCase& u) { return {u.s.in_w, u.s.out_w, u.p.scale_w, u.p.roi_w[0], u.p.roi_w[1]}; }

template <class T>
void check(std::mt19937& rng, const ResizeCase& u, ResizeElement e, const ResizeUkernel& k, pthreadpool_t pool = nullptr) {
  const Resize2dShape& s = u.s;
  const auto x = random_data<T>(rng, size_t(s.batch) * s.in_h * s.in_w * s.channels);
  const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.channels;
  std::vector<T> expected(n);
  const LinearTaps rows = linear_taps(axis_h(u), u.p.transform);
  const LinearTaps cols = linear_taps(axis_w(u), u.p.transform);
  resize_linear_nhwc__ref(s, rows, cols, x.data(), expected.data(), u.p.extrapolation_value);
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
    const auto rows = nearest_source_indices(axis_h(u), u.p.transform, u.p.rounding);
    const auto cols = nearest_source_indices(axis_w(u), u.p.transform, u.p.rounding);
    std::vector<float> expected(n), y(n + 1, 7.0f);
    const float fill = u.p.extrapolation_value;
    resize_nearest_nhwc__ref(s, rows.data(), cols.data(), sizeof(float), x.data(), expected.data(), &fill);
    Resize2d driver(s, u.p, ResizeElement::f32, Isa::avx512vnni);
    EXPECT_EQ(driver.kernel_name(), "resize_nearest_nhwc__copy");
    driver.run(x.data(), y.data(), i % 2 ? pool.get() : nullptr);
    EXPECT_EQ(y[n], 7.0f) << "wrote past the output";
    EXPECT_EQ(std::memcmp(y.data(), expected.data(), n * sizeof(float)), 0)
        << s.in_h << "x" << s.in_w << "x" << s.channels << " -> " << s.out_h << "x" << s.out_w;
  }
}

void check_cubic(std::mt19937& rng, const ResizeCase& u, const ResizeCubicEntry& k, pthreadpool_t pool = nullptr) {
  const Resize2dShape& s = u.s;
  const auto x = random_data<float>(rng, size_t(s.batch) * s.in_h * s.in_w * s.channels);
  const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.channels;
  std::vector<float> expected(n);
  const CubicTaps rows = cubic_taps(axis_h(u), u.p.transform, u.p.cubic_coeff_a, u.p.exclude_outside);
  const CubicTaps cols = cubic_taps(axis_w(u), u.p.transform, u.p.cubic_coeff_a, u.p.exclude_outside);
  resize_cubic_nhwc__ref(s, rows, cols, x.data(), expected.data(), u.p.extrapolation_value);
  std::vector<float> y(n + 1, 7.0f);
  Resize2d driver(s, u.p, k);
  EXPECT_EQ(driver.kernel_name(), k.name);
  driver.run(x.data(), y.data(), pool);
  EXPECT_EQ(y[n], 7.0f) << k.name << " wrote past the output";
  EXPECT_EQ(std::memcmp(y.data(), expected.data(), n * sizeof(float)), 0)
      << k.name << ": " << s.in_h << "x" << s.in_w << "x" << s.channels << " -> " << s.out_h << "x" << s.out_w
      << ", transform " << int(u.p.transform) << ", a " << u.p.cubic_coeff_a << ", exclude_outside "
      << u.p.exclude_outside;
}

TEST(ResizeCubic, RandomShapesEveryKernelIsBitExact) {
  testing::Pool pool(pthreadpool_create(2));
  std::mt19937 rng(20261129);
  const auto kernels = testing::runnable_entries(kF32ResizeCubicUkernels);
  for (int i = 0; i < 300 && !HasFailure(); ++i) {
    const ResizeCase u = random_setup(rng, ResizeMode::cubic);
    for (const auto* k : kernels) check_cubic(rng, u, *k, i % 3 ? nullptr : pool.get());
  }
}

// The driver's pick at every level it may cap to, and the reference at scalar: one answer.
TEST(ResizeCubic, EveryCapAgrees) {
  std::mt19937 rng(11);
  ResizeCase u;
  u.s = {2, 5, 6, 11, 13, 19};
  u.p.mode = ResizeMode::cubic;
  u.p.scale_h = 2.2f, u.p.scale_w = 2.2f;
  u.p.exclude_outside = true;
  u.p.cubic_coeff_a = -0.5f;
  const auto x = random_data<float>(rng, size_t(2) * 5 * 6 * 19);
  const size_t n = size_t(2) * 11 * 13 * 19;
  std::vector<float> want(n);
  Resize2d(u.s, u.p, ResizeElement::f32, Isa::scalar).run(x.data(), want.data(), nullptr);
  EXPECT_EQ(Resize2d(u.s, u.p, ResizeElement::f32, Isa::scalar).kernel_name(), "resize_cubic_nhwc__ref");
  for (const auto* k : testing::runnable_entries(kF32ResizeCubicUkernels)) {
    std::vector<float> y(n);
    Resize2d(u.s, u.p, ResizeElement::f32, k->isa).run(x.data(), y.data(), nullptr);
    EXPECT_EQ(std::memcmp(y.data(), want.data(), n * sizeof(float)), 0) << k->name;
  }
  EXPECT_THROW(Resize2d(u.s, u.p, ResizeElement::u8, active_isa()), Unsupported);
}

TEST(ResizeLinear, ExtrapolatesOutsideTheRegion) {
  // A 1-D region from -0.5 to 1.5 of a 3-pixel row, 5 outputs: -1, 0, 1, 2, 3; the ends are
  // outside and take the extrapolation value, the rest read pixels 0, 1, 2.
  ResizeCase u;
  u.s = {1, 1, 3, 1, 5, 2};
  u.p.mode = ResizeMode::linear;
  u.p.transform = CoordinateTransform::tf_crop_and_resize;
  u.p.scale_h = 1.0f, u.p.scale_w = 5.0f / 3.0f;
  u.p.roi_w[0] = -0.5f, u.p.roi_w[1] = 1.5f;
  u.p.extrapolation_value = 9.5f;
  const std::vector<float> x = {1, -1, 2, -2, 3, -3};
  std::vector<float> y(10);
  Resize2d(u.s, u.p, ResizeElement::f32, active_isa()).run(x.data(), y.data(), nullptr);
  EXPECT_EQ(y, (std::vector<float>{9.5f, 9.5f, 1, -1, 2, -2, 3, -3, 9.5f, 9.5f}));
  std::vector<uint8_t> xq = {1, 200, 2, 201, 3, 202}, yq(10);
  Resize2d(u.s, u.p, ResizeElement::u8, active_isa()).run(xq.data(), yq.data(), nullptr);
  EXPECT_EQ(yq, (std::vector<uint8_t>{9, 9, 1, 200, 2, 201, 3, 202, 9, 9}));
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
  // Keys' weights: on a pixel (s = 0) the pixel alone; half way, a = -0.75: -3/32, 19/32, 19/32, -3/32.
  float c[4];
  cubic_coefficients(0.0f, -0.75f, c);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{0, 1, 0, 0}));
  cubic_coefficients(0.5f, -0.75f, c);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{-0.09375f, 0.59375f, 0.59375f, -0.09375f}));
  // Cubic taps of half_pixel 2x on 3 pixels: output 0 at -0.25 reads pixels -2..1 clamped; with
  // exclude_outside the two outside get 0 and the sum is what is left.
  const CubicTaps ct = cubic_taps({3, 6, 2.0f}, CoordinateTransform::half_pixel, -0.75f, true);
  EXPECT_EQ(std::vector<int32_t>(ct.index.begin(), ct.index.begin() + 4), (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(ct.coeff[0], 0.0f);
  EXPECT_EQ(ct.coeff[1], 0.0f);
  EXPECT_EQ(ct.sum[0], ct.coeff[2] + ct.coeff[3]);
  EXPECT_EQ(ct.coeff[4 * 3 + 3], 0.0f);  // output 3 at 1.25 reads pixels 0..3: 3 is outside
  EXPECT_EQ(ct.sum[3], ct.coeff[12] + ct.coeff[13] + ct.coeff[14]);
  EXPECT_EQ(cubic_taps({3, 6, 2.0f}, CoordinateTransform::half_pixel, -0.75f, false).sum[0], 1.0f);
  // tf_crop_and_resize: the region [0.5, 1] of 5 pixels, 3 outputs: 2, 3, 4; [-0.5, 1]: -2 is outside.
  EXPECT_EQ(nearest_source_indices({5, 3, 0.6f, 0.5f, 1.0f}, CoordinateTransform::tf_crop_and_resize,
                                   NearestRounding::round_prefer_floor),
            (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(nearest_source_indices({5, 3, 0.6f, -0.5f, 1.0f}, CoordinateTransform::tf_crop_and_resize,
                                   NearestRounding::round_prefer_floor),
            (std::vector<int32_t>{-1, 1, 4}));
}

}  // namespace resize_test
}  // namespace octet::kernels
