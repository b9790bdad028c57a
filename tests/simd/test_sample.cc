// The RoiAlign and GridSample microkernels (kernels/sample/sample_list.h) through their drivers
// (kernels/sample/roi_align.h, grid_sample.h) against roi_align_nhwc__ref and
// grid_sample_nhwc__ref, for every row this CPU runs, bit for bit (NaN matching NaN): channel
// counts around every vector and block width (tails of every length), maps of one pixel up,
// 1 and 2 threads; rois inside, across and outside the map, of zero and negative size, reversed,
// adaptive sampling (0) and fixed ratios, bins of more samples than the driver's chunk; grids
// across [-1, 1] and beyond, on pixel centres and corners, with NaN and infinities; and maps
// holding NaN, infinities and signed zeros. Nearest GridSample (a copy, no microkernel) is
// checked the same way.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/sample.h"
#include "kernels/sample/grid_sample.h"
#include "kernels/sample/roi_align.h"
#include "kernels/sample/sample_list.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace {

using testing::Pool;

const float kInf = std::numeric_limits<float>::infinity(), kNan = std::numeric_limits<float>::quiet_NaN();

// Bit-identical, or both NaN; reports the first difference.
bool same(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << " at " << i << ": " << got[i] << " vs " << want[i];
      return false;
    }
  }
  return true;
}

std::vector<float> uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = u(rng);
  return v;
}

void sprinkle(std::mt19937& rng, std::vector<float>& v, const std::vector<float>& special, int percent) {
  for (float& e : v)
    if (int(rng() % 100) < percent) e = special[rng() % special.size()];
}

const size_t kChannels[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65, 67};

// ---- RoiAlign

struct RoiCase {
  RoiAlignParams p;
  RoiAlignShape s;
  std::vector<float> x, rois;
  std::vector<int64_t> idx;
};

std::string describe(const RoiAlignUkernel& k, const RoiCase& c) {
  char buf[240];
  std::snprintf(buf, sizeof buf, "%s %s out %lldx%lld ratio %lld scale %g %s, map %zux%zux%zux%zu, %zu rois", k.name,
                c.p.mode == RoiAlignMode::max ? "max" : "avg", (long long)c.p.out_h, (long long)c.p.out_w,
                (long long)c.p.sampling_ratio, c.p.spatial_scale, c.p.half_pixel ? "half_pixel" : "output_half_pixel",
                c.s.batch, c.s.height, c.s.width, c.s.channels, c.s.rois);
  return buf;
}

bool check_roi(const RoiAlignUkernel& k, const RoiCase& c, pthreadpool_t pool) {
  const size_t n = c.s.rois * size_t(c.p.out_h * c.p.out_w) * c.s.channels;
  std::vector<float> want(n), got(n, 7.0f);
  roi_align_nhwc__ref(c.p, c.s, c.x.data(), c.rois.data(), c.idx.data(), want.data());
  F32RoiAlign d(c.p, c.s, k);
  d.run(c.x.data(), c.rois.data(), c.idx.data(), got.data(), pool);
  return same(got, want, describe(k, c));
}

// Random rois: inside, across the edges, outside, zero-sized, reversed.
RoiCase random_roi_case(std::mt19937& rng, RoiAlignMode mode, size_t channels) {
  RoiCase c;
  c.p.mode = mode;
  c.p.out_h = 1 + rng() % 4;
  c.p.out_w = 1 + rng() % 4;
  c.p.sampling_ratio = int64_t(rng() % 4);
  c.p.spatial_scale = rng() % 2 ? 1.0f : 0.5f;
  c.p.half_pixel = rng() % 2;
  c.s.batch = 1 + rng() % 3;
  c.s.channels = channels;
  c.s.height = 1 + rng() % 9;
  c.s.width = 1 + rng() % 9;
  c.s.rois = 1 + rng() % 5;
  c.x = uniform(rng, c.s.batch * c.s.height * c.s.width * channels, -5.0f, 5.0f);
  const float span = 2.0f * float(std::max(c.s.height, c.s.width)) / c.p.spatial_scale;
  c.rois = uniform(rng, 4 * c.s.rois, -0.3f * span, 1.2f * span);
  for (size_t r = 0; r < c.s.rois; ++r) {
    c.idx.push_back(int64_t(rng() % c.s.batch));
    if (r % 5 == 1) c.rois[4 * r + 2] = c.rois[4 * r];  // zero width
    if (r % 5 == 2) c.rois[4 * r + 3] = c.rois[4 * r + 1] - 1.5f;  // reversed
  }
  return c;
}

void roi_random(std::span<const RoiAlignUkernel> list, RoiAlignMode mode) {
  Pool pool(pthreadpool_create(2));
  for (const RoiAlignUkernel* k : testing::runnable_entries(list)) {
    std::mt19937 rng(11);
    int cases = 0;
    for (int rep = 0; rep < 6; ++rep)
      for (size_t channels : kChannels) {
        if (!check_roi(*k, random_roi_case(rng, mode, channels), rep % 2 ? pool.get() : nullptr)) return;
        ++cases;
      }
    std::printf("%s: %d random cases\n", k->name, cases);
  }
}

TEST(RoiAlignUkernels, RandomAvgEveryKernel) { roi_random(kF32RoiAlignAvgUkernels, RoiAlignMode::avg); }
TEST(RoiAlignUkernels, RandomMaxEveryKernel) { roi_random(kF32RoiAlignMaxUkernels, RoiAlignMode::max); }

void roi_adversarial(std::span<const RoiAlignUkernel> list, RoiAlignMode mode) {
  for (const RoiAlignUkernel* k : testing::runnable_entries(list)) {
    std::mt19937 rng(12);
    for (size_t channels : {size_t(3), size_t(8), size_t(33), size_t(67)}) {
      // NaN, infinities and signed zeros in the map: 0 * inf at an outside sample's taps.
      for (int percent : {2, 20}) {
        RoiCase c = random_roi_case(rng, mode, channels);
        sprinkle(rng, c.x, {kNan, kInf, -kInf, 0.0f, -0.0f, 1e30f, -1e30f}, percent);
        check_roi(*k, c, nullptr);
      }
      // Bins of more samples than one chunk (adaptive: a 1x1 output over a large roi), and a
      // roi entirely outside the map.
      RoiCase c = random_roi_case(rng, mode, channels);
      c.p.out_h = c.p.out_w = 1;
      c.p.sampling_ratio = 0;
      c.s.height = 13, c.s.width = 11;
      c.x = uniform(rng, c.s.batch * 13 * 11 * channels, -5.0f, 5.0f);
      c.rois.assign(4 * c.s.rois, 0.0f);
      for (size_t r = 0; r < c.s.rois; ++r) {
        const float off = r % 2 ? 60.0f : -2.0f;
        c.rois[4 * r] = off, c.rois[4 * r + 1] = -3.0f, c.rois[4 * r + 2] = off + 25.0f, c.rois[4 * r + 3] = 14.5f;
      }
      check_roi(*k, c, nullptr);
      c.p.sampling_ratio = 9;  // 81 samples a bin
      check_roi(*k, c, nullptr);
      // NaN rois: no samples (ORT would read at an undefined index).
      c.rois[0] = kNan;
      check_roi(*k, c, nullptr);
    }
  }
}

TEST(RoiAlignUkernels, AdversarialAvgEveryKernel) { roi_adversarial(kF32RoiAlignAvgUkernels, RoiAlignMode::avg); }
TEST(RoiAlignUkernels, AdversarialMaxEveryKernel) { roi_adversarial(kF32RoiAlignMaxUkernels, RoiAlignMode::max); }

// A hand-computed bin: the reference itself, avg and max (of the weighted taps, as ORT).
TEST(RoiAlignReference, OneBinByHand) {
  const std::vector<float> x = {1, 2, 3, 4};  // 2x2, one channel
  const float roi[4] = {0.5f, 0.5f, 1.5f, 1.5f};
  const int64_t idx = 0;
  RoiAlignParams p;
  p.sampling_ratio = 1;
  p.half_pixel = true;  // the sample sits at (0.5, 0.5): a quarter of each pixel
  float y = 0;
  roi_align_nhwc__ref(p, {1, 1, 2, 2, 1}, x.data(), roi, &idx, &y);
  EXPECT_EQ(y, 2.5f);
  p.mode = RoiAlignMode::max;
  roi_align_nhwc__ref(p, {1, 1, 2, 2, 1}, x.data(), roi, &idx, &y);
  EXPECT_EQ(y, 1.0f);  // max(0.25, 0.5, 0.75, 1.0)
}

TEST(RoiAlignDriver, RefusesABatchIndexOutsideTheBatch) {
  const std::vector<float> x(2 * 2 * 3, 1.0f);
  const float roi[4] = {0, 0, 1, 1};
  const int64_t idx = 1;
  float y[3];
  EXPECT_THROW(roi_align_nhwc__ref({}, {1, 3, 2, 2, 1}, x.data(), roi, &idx, y), std::out_of_range);
  for (const RoiAlignUkernel* k : testing::runnable_entries(kF32RoiAlignAvgUkernels))
    EXPECT_THROW(F32RoiAlign({}, {1, 3, 2, 2, 1}, *k).run(x.data(), roi, &idx, y, nullptr), std::out_of_range);
}

// ---- GridSample

struct GridCase {
  GridSampleParams p;
  GridSampleShape s;
  std::vector<float> x, grid;
};

std::string describe(const char* name, const GridCase& c) {
  static const char* modes[] = {"linear", "nearest", "cubic"};
  static const char* pads[] = {"zeros", "border", "reflection"};
  char buf[240];
  std::snprintf(buf, sizeof buf, "%s %s %s align_corners %d, map %zux%zux%zux%zu -> %zux%zu", name,
                modes[int(c.p.mode)], pads[int(c.p.padding)], int(c.p.align_corners), c.s.batch, c.s.in_h, c.s.in_w,
                c.s.channels, c.s.out_h, c.s.out_w);
  return buf;
}

bool check_grid(const GridSampleUkernel* k, const GridCase& c, pthreadpool_t pool) {
  const size_t n = c.s.batch * c.s.out_h * c.s.out_w * c.s.channels;
  std::vector<float> want(n), got(n, 7.0f);
  grid_sample_nhwc__ref(c.p, c.s, c.x.data(), c.grid.data(), want.data());
  const F32GridSample d = k ? F32GridSample(c.p, c.s, *k) : F32GridSample(c.p, c.s, Isa::scalar);
  d.run(c.x.data(), c.grid.data(), got.data(), pool);
  return same(got, want, describe(k ? k->name : "f32_gridsample_nearest_copy", c));
}

GridCase random_grid_case(std::mt19937& rng, const GridSampleParams& p, size_t channels) {
  GridCase c;
  c.p = p;
  c.s.batch = 1 + rng() % 2;
  c.s.channels = channels;
  c.s.in_h = 1 + rng() % 8;
  c.s.in_w = 1 + rng() % 8;
  c.s.out_h = 1 + rng() % 3;
  const size_t widths[] = {1, 5, 31, 32, 33, 70};
  c.s.out_w = widths[rng() % 6];
  c.x = uniform(rng, c.s.batch * c.s.in_h * c.s.in_w * channels, -5.0f, 5.0f);
  c.grid = uniform(rng, c.s.batch * c.s.out_h * c.s.out_w * 2, -1.4f, 1.4f);
  // Pixel centres and corners exactly, the ends of the range.
  for (size_t i = 0; i < c.grid.size(); ++i) {
    const size_t extent = i % 2 ? c.s.in_h : c.s.in_w;
    if (rng() % 4 == 0) c.grid[i] = -1.0f + 2.0f * float(rng() % (2 * extent + 1)) / float(2 * extent);
    if (rng() % 16 == 0) c.grid[i] = rng() % 2 ? 1.0f : -1.0f;
  }
  return c;
}

// Every padding and align_corners of `mode`; for a linear list, those its driver runs it on
// (linear4: zeros padding, align_corners 0; linear: the others).
std::vector<GridSampleParams> every_params(GridSampleMode mode, std::span<const GridSampleUkernel> list = {}) {
  std::vector<GridSampleParams> out;
  for (GridSamplePadding pad : {GridSamplePadding::zeros, GridSamplePadding::border, GridSamplePadding::reflection})
    for (bool align : {false, true}) {
      const GridSampleParams p{mode, pad, align};
      if (mode == GridSampleMode::linear && !list.empty() &&
          grid_linear4(p) != (list.data() == kF32GridSampleLinear4Ukernels.data()))
        continue;
      out.push_back(p);
    }
  return out;
}

void grid_every(std::span<const GridSampleUkernel> list, GridSampleMode mode) {
  Pool pool(pthreadpool_create(2));
  for (const GridSampleUkernel* k : testing::runnable_entries(list)) {
    std::mt19937 rng(21);
    int cases = 0;
    for (const GridSampleParams& p : every_params(mode, list))
      for (size_t channels : kChannels) {
        if (!check_grid(k, random_grid_case(rng, p, channels), channels % 2 ? pool.get() : nullptr)) return;
        ++cases;
      }
    // Adversarial: NaN, infinities and far-away grid values; NaN, infinities, signed zeros in the map.
    for (const GridSampleParams& p : every_params(mode, list))
      for (size_t channels : {size_t(3), size_t(8), size_t(41)}) {
        GridCase c = random_grid_case(rng, p, channels);
        sprinkle(rng, c.grid, {kNan, kInf, -kInf, 1e10f, -1e10f, 3.0f, -7.5f}, 10);
        sprinkle(rng, c.x, {kNan, kInf, -kInf, 0.0f, -0.0f}, 5);
        if (!check_grid(k, c, nullptr)) return;
        ++cases;
      }
    std::printf("%s: %d cases\n", k->name, cases);
  }
}

TEST(GridSampleUkernels, LinearEveryKernel) { grid_every(kF32GridSampleLinearUkernels, GridSampleMode::linear); }
TEST(GridSampleUkernels, Linear4EveryKernel) { grid_every(kF32GridSampleLinear4Ukernels, GridSampleMode::linear); }
TEST(GridSampleUkernels, CubicEveryKernel) { grid_every(kF32GridSampleCubicUkernels, GridSampleMode::cubic); }

TEST(GridSampleDriver, NearestCopiesAsTheReference) {
  std::mt19937 rng(22);
  for (const GridSampleParams& p : every_params(GridSampleMode::nearest))
    for (size_t channels : {size_t(1), size_t(7), size_t(33)}) {
      GridCase c = random_grid_case(rng, p, channels);
      check_grid(nullptr, c, nullptr);
      sprinkle(rng, c.grid, {kNan, kInf, -kInf, 1e10f}, 10);
      check_grid(nullptr, c, nullptr);
    }
}

// Hand-computed samples: the reference's coordinates, padding and rounding.
TEST(GridSampleReference, SamplesByHand) {
  const std::vector<float> x = {1, 2, 3, 4};  // 2x2, one channel
  float y = 0;
  const float centre[2] = {0.0f, 0.0f};       // the middle of the map
  grid_sample_nhwc__ref({GridSampleMode::linear, GridSamplePadding::zeros, false}, {1, 1, 2, 2, 1, 1}, x.data(), centre, &y);
  EXPECT_EQ(y, 2.5f);
  const float corner[2] = {-1.0f, -1.0f};     // (-0.5, -0.5): a quarter of pixel (0, 0), zeros around
  grid_sample_nhwc__ref({GridSampleMode::linear, GridSamplePadding::zeros, false}, {1, 1, 2, 2, 1, 1}, x.data(), corner, &y);
  EXPECT_EQ(y, 0.25f);
  grid_sample_nhwc__ref({GridSampleMode::linear, GridSamplePadding::border, false}, {1, 1, 2, 2, 1, 1}, x.data(), corner, &y);
  EXPECT_EQ(y, 1.0f);
  const float half[2] = {0.0f, -1.0f};        // x = 0.5 rounds half to even: column 0
  grid_sample_nhwc__ref({GridSampleMode::nearest, GridSamplePadding::zeros, false}, {1, 1, 2, 2, 1, 1}, x.data(), half, &y);
  EXPECT_EQ(y, 1.0f);
}

}  // namespace
}  // namespace octet::kernels
