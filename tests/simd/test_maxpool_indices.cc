// MaxPool with Indices: the microkernels of kernels/pool/argmax_pool_list.h through
// F32MaxPoolIndices against f32_maxpool_indices_nhwc__ref, for every row this CPU runs: values
// bit for bit and indices equal, on random 1-D, 2-D and 3-D shapes (kernels 1..5, strides 1..3,
// dilation 2, pads up to a whole kernel so some windows hold no input, ceil_mode overruns),
// channels 1..70 (every tail), batch 1..3, both storage orders, 1 and 2 threads; inputs with
// ties (few distinct values, signed zeros: the first position must win), NaN, +-inf, -FLT_MAX
// (none of which win) and whole windows of them (position -1, as ORT leaves it).
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/pool/argmax_pool_list.h"
#include "kernels/pool/maxpool_indices.h"
#include "kernels/ref/maxpool_indices.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels {
namespace maxpool_indices_test {

using testing::Pool;

int extent(int in, int pb, int pe, int k, int st, int dil, bool ceil_mode) {
  const int span = dil * (k - 1) + 1, room = in + pb + pe - span;
  if (room < 0) return 0;
  int out = (ceil_mode ? (room + st - 1) / st : room / st) + 1;
  if (ceil_mode && (out - 1) * st >= in + pb) --out;
  return out;
}

struct Axis {
  int in = 1, out = 1, k = 1, s = 1, d = 1, pb = 0, pe = 0;
};

Axis random_axis(std::mt19937& rng, bool ceil_mode) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    Axis a;
    a.k = uni(1, 5), a.s = uni(1, 3), a.d = uni(0, 3) == 0 ? 2 : 1, a.in = uni(1, 12);
    a.pb = uni(0, a.k - 1 + (uni(0, 9) == 0)), a.pe = uni(0, a.k - 1);
    a.out = extent(a.in, a.pb, a.pe, a.k, a.s, a.d, ceil_mode);
    if (a.out >= 1) return a;
  }
}

Pool2dShape random_shape(std::mt19937& rng, int rank) {
  const bool ceil_mode = rng() % 3 == 0;
  Pool2dShape s;
  s.batch = rng() % 4 == 0 ? 2 + int(rng() % 2) : 1;
  s.channels = 1 + int(rng() % 70);
  const Axis w = random_axis(rng, ceil_mode);
  s.in_w = w.in, s.out_w = w.out, s.kernel_w = w.k, s.stride_w = w.s, s.dilation_w = w.d, s.pad_left = w.pb, s.pad_right = w.pe;
  if (rank >= 2) {
    const Axis h = random_axis(rng, ceil_mode);
    s.in_h = h.in, s.out_h = h.out, s.kernel_h = h.k, s.stride_h = h.s, s.dilation_h = h.d, s.pad_top = h.pb, s.pad_bottom = h.pe;
  }
  if (rank == 3) {
    const Axis d = random_axis(rng, ceil_mode);
    s.in_d = d.in, s.out_d = d.out, s.kernel_d = d.k, s.stride_d = d.s, s.dilation_d = d.d, s.pad_front = d.pb, s.pad_back = d.pe;
  }
  return s;
}

std::vector<float> inputs(std::mt19937& rng, size_t n) {
  const float specials[] = {-INFINITY, -FLT_MAX, -0.0f, 0.0f, NAN, INFINITY, FLT_MAX, 1.0f, -1.0f};
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  const int mode = int(rng() % 5);  // 0: all specials, 1: all NaN or -inf, 2: ties, else a mix
  for (float& e : v) {
    if (mode == 0) e = specials[rng() % std::size(specials)];
    else if (mode == 1) e = rng() % 2 ? NAN : -INFINITY;
    else if (mode == 2) e = float(int(rng() % 3) - 1);
    else e = rng() % 8 == 0 ? specials[rng() % std::size(specials)] : u(rng);
  }
  return v;
}

std::string describe(const Pool2dShape& s, int rank, bool cm) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "rank %d order %d N%d C%d in %dx%dx%d out %dx%dx%d k %dx%dx%d s %dx%dx%d d %dx%dx%d",
                rank, int(cm), s.batch, s.channels, s.in_d, s.in_h, s.in_w, s.out_d, s.out_h, s.out_w, s.kernel_d,
                s.kernel_h, s.kernel_w, s.stride_d, s.stride_h, s.stride_w, s.dilation_d, s.dilation_h, s.dilation_w);
  return buf;
}

TEST(MaxPoolIndicesUkernels, RandomShapesEveryKernelEqualTheRef) {
  Pool pool(pthreadpool_create(2));
  for (const auto* k : testing::runnable_entries(kF32MaxPoolArgmaxUkernels)) {
    std::mt19937 rng(21);
    int empty_windows = 0, ties = 0;
    for (int i = 0; i < 400; ++i) {
      const int rank = 1 + i % 3;
      const bool column_major = (i / 3) % 2 == 1;
      const Pool2dShape s = random_shape(rng, rank);
      const size_t in = size_t(s.batch) * s.in_d * s.in_h * s.in_w * s.channels;
      const size_t out = size_t(s.batch) * s.out_d * s.out_h * s.out_w * s.channels;
      const std::vector<float> x = inputs(rng, in);
      std::vector<float> want_y(out), got_y(out, 7.0f);
      std::vector<int64_t> want_i(out), got_i(out, 12345);
      f32_maxpool_indices_nhwc__ref(s, rank, column_major, x.data(), want_y.data(), want_i.data());
      F32MaxPoolIndices d(s, rank, column_major, *k);
      d.bind(x.data());
      d.run(x.data(), got_y.data(), got_i.data(), i % 2 ? pool.get() : nullptr);
      ASSERT_EQ(std::memcmp(want_y.data(), got_y.data(), out * sizeof(float)), 0) << k->name << " " << describe(s, rank, column_major);
      ASSERT_EQ(want_i, got_i) << k->name << " " << describe(s, rank, column_major);
      for (size_t j = 0; j < out; ++j) empty_windows += want_y[j] == -FLT_MAX;
      ties += x.size() > 1 && x[0] == x[1];
    }
    EXPECT_GT(empty_windows, 100) << "too few windows that nothing won";
    EXPECT_GT(ties, 20) << "too few inputs with ties";
  }
}

// The reference against the definition on a small case: a 4x4 plane, 2x2 windows, stride 2.
TEST(MaxPoolIndicesRef, IndicesCountOverTheWholeNchwInput) {
  Pool2dShape s;
  s.batch = 2, s.channels = 2, s.in_h = s.in_w = 4, s.out_h = s.out_w = 2, s.kernel_h = s.kernel_w = 2;
  s.stride_h = s.stride_w = 2;
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 64);  // NHWC
  std::vector<float> y(16);
  std::vector<int64_t> rm(16), cm(16);
  f32_maxpool_indices_nhwc__ref(s, 2, false, x.data(), y.data(), rm.data());
  f32_maxpool_indices_nhwc__ref(s, 2, true, x.data(), y.data(), cm.data());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int oy = 0; oy < 2; ++oy)
        for (int ox = 0; ox < 2; ++ox) {
          int by = -1, bx = -1;
          float best = -FLT_MAX;
          for (int iy = 2 * oy; iy < 2 * oy + 2; ++iy)
            for (int ix = 2 * ox; ix < 2 * ox + 2; ++ix)
              if (const float v = x[((n * 4 + iy) * 4 + ix) * 2 + c]; v > best) best = v, by = iy, bx = ix;
          const size_t at = ((n * 2 + oy) * 2 + ox) * 2 + c;
          EXPECT_EQ(rm[at], (n * 2 + c) * 16 + by * 4 + bx);
          EXPECT_EQ(cm[at], (n * 2 + c) * 16 + by + bx * 4);
        }
}

}  // namespace maxpool_indices_test
}  // namespace octet::kernels
