#include "kernels/ref/fp_contract_off.h"  // first: every product and sum rounds as ORT's

#include "kernels/ref/sample.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet::kernels {
namespace {

// cvttss2si into 32 bits: NaN and out-of-range values give INT_MIN (ORT's static_cast<int>).
int32_t to_i32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

// Samples per bin along an axis; ORT's product of grid sizes and bins must stay addressable.
int64_t grid_of(float v) {
  if (!(v > 0.0f)) return 0;
  if (v > float(1 << 20)) throw std::out_of_range("RoiAlign: a roi of " + std::to_string(v) + " samples a side per bin");
  return static_cast<int64_t>(v);
}

float reflect(float fx, float lo, float hi) {
  const float range = hi - lo;
  if (fx < lo) {
    const float dx = lo - fx;
    const int32_t n = to_i32(dx / range);
    const float r = dx - static_cast<float>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (fx > hi) {
    const float dx = fx - hi;
    const int32_t n = to_i32(dx / range);
    const float r = dx - static_cast<float>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return fx;
}

}  // namespace

RoiGeometry roi_geometry(const RoiAlignParams& p, const float* roi) {
  const float offset = p.half_pixel ? 0.5f : 0.0f;
  RoiGeometry g{};
  g.start_w = roi[0] * p.spatial_scale - offset;
  g.start_h = roi[1] * p.spatial_scale - offset;
  const float end_w = roi[2] * p.spatial_scale - offset;
  const float end_h = roi[3] * p.spatial_scale - offset;
  float w = end_w - g.start_w, h = end_h - g.start_h;
  if (!p.half_pixel) {  // malformed rois become 1x1
    w = std::max(w, 1.0f);
    h = std::max(h, 1.0f);
  }
  g.bin_h = h / static_cast<float>(p.out_h);
  g.bin_w = w / static_cast<float>(p.out_w);
  g.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : grid_of(std::ceil(h / static_cast<float>(p.out_h)));
  g.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : grid_of(std::ceil(w / static_cast<float>(p.out_w)));
  g.count = static_cast<float>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  return g;
}

SampleAxis sample_axis(float start, float bin, int64_t p, int64_t i, int64_t grid, int64_t extent) {
  float v = start + static_cast<float>(p) * bin +
            (static_cast<float>(i) + 0.5f) * bin / static_cast<float>(grid);
  SampleAxis a;
  // NaN is outside too (ORT would read at an undefined index).
  if (!(v >= -1.0f && v <= static_cast<float>(extent))) return a;
  a.outside = false;
  if (v <= 0) v = 0;
  int64_t lo = static_cast<int64_t>(v), hi;
  if (lo >= extent - 1) {
    hi = lo = extent - 1;
    v = static_cast<float>(lo);
  } else {
    hi = lo + 1;
  }
  a.lo = int32_t(lo);
  a.hi = int32_t(hi);
  a.l = v - static_cast<float>(lo);
  a.h = 1.0f - a.l;
  return a;
}

void roi_align_nhwc__ref(const RoiAlignParams& p, const RoiAlignShape& s, const float* x, const float* rois,
                         const int64_t* batch_indices, float* y) {
  const size_t C = s.channels;
  if (s.rois > 0 && C > 0 && (s.height == 0 || s.width == 0)) throw std::invalid_argument("RoiAlign: a map of no pixels");
  for (size_t r = 0; r < s.rois; ++r) {
    const int64_t b = batch_indices[r];
    if (b < 0 || size_t(b) >= s.batch)
      throw std::out_of_range("RoiAlign: batch index " + std::to_string(b) + " outside [0, " + std::to_string(s.batch) + ")");
    const float* image = x + size_t(b) * s.height * s.width * C;
    const RoiGeometry g = roi_geometry(p, rois + 4 * r);
    for (int64_t ph = 0; ph < p.out_h; ++ph) {
      for (int64_t pw = 0; pw < p.out_w; ++pw) {
        float* out = y + ((r * size_t(p.out_h) + size_t(ph)) * size_t(p.out_w) + size_t(pw)) * C;
        for (size_t c = 0; c < C; ++c) {
          float acc = 0.0f;
          bool first = true;
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            const SampleAxis ay = sample_axis(g.start_h, g.bin_h, ph, iy, g.grid_h, int64_t(s.height));
            for (int64_t ix = 0; ix < g.grid_w; ++ix) {
              const SampleAxis ax = sample_axis(g.start_w, g.bin_w, pw, ix, g.grid_w, int64_t(s.width));
              size_t pos[4] = {0, 0, 0, 0};
              float w[4] = {0, 0, 0, 0};
              if (!ay.outside && !ax.outside) {
                pos[0] = size_t(ay.lo) * s.width + size_t(ax.lo);
                pos[1] = size_t(ay.lo) * s.width + size_t(ax.hi);
                pos[2] = size_t(ay.hi) * s.width + size_t(ax.lo);
                pos[3] = size_t(ay.hi) * s.width + size_t(ax.hi);
                w[0] = ay.h * ax.h, w[1] = ay.h * ax.l, w[2] = ay.l * ax.h, w[3] = ay.l * ax.l;
              }
              const float t0 = w[0] * image[pos[0] * C + c], t1 = w[1] * image[pos[1] * C + c];
              const float t2 = w[2] * image[pos[2] * C + c], t3 = w[3] * image[pos[3] * C + c];
              if (p.mode == RoiAlignMode::avg) {
                acc += ((t0 + t1) + t2) + t3;
              } else {
                const float v = std::max(std::max(std::max(t0, t1), t2), t3);
                acc = first ? v : std::max(acc, v);
                first = false;
              }
            }
          }
          out[c] = p.mode == RoiAlignMode::avg ? acc / g.count : acc;
        }
      }
    }
  }
}

float grid_denormalize(float n, int64_t extent, bool align_corners) {
  if (align_corners) return (n + 1) / 2.0f * static_cast<float>(extent - 1);
  return ((n + 1) * static_cast<float>(extent) - 1) / 2.0f;
}

int64_t grid_index(float v) {
  if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f)) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int64_t grid_tap(int64_t i, int64_t extent, const GridSampleParams& p) {
  switch (p.padding) {
    case GridSamplePadding::zeros:
      return i >= 0 && i < extent ? i : -1;
    case GridSamplePadding::border:
      return std::clamp<int64_t>(i, 0, extent - 1);
    case GridSamplePadding::reflection: {
      const float lo = p.align_corners ? 0.0f : -0.5f;
      const float hi = p.align_corners ? static_cast<float>(extent) - 1.0f : static_cast<float>(extent) - 0.5f;
      const int64_t r = grid_index(reflect(static_cast<float>(i), lo, hi));
      return std::clamp<int64_t>(r, 0, extent - 1);
    }
  }
  return -1;
}

void grid_cubic_coeffs(float t, float c[4]) {
  constexpr float a = -0.75f;
  const float x = std::abs(t);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

void grid_sample_nhwc__ref(const GridSampleParams& p, const GridSampleShape& s, const float* x, const float* grid,
                           float* y) {
  const size_t C = s.channels;
  const int64_t H = int64_t(s.in_h), W = int64_t(s.in_w);
  if (s.out_h * s.out_w * C > 0 && (H == 0 || W == 0)) throw std::invalid_argument("GridSample: a map of no pixels");
  for (size_t n = 0; n < s.batch; ++n) {
    const float* image = x + n * s.in_h * s.in_w * C;
    for (size_t o = 0; o < s.out_h * s.out_w; ++o) {
      const float* g = grid + (n * s.out_h * s.out_w + o) * 2;
      float* out = y + (n * s.out_h * s.out_w + o) * C;
      const float fx = grid_denormalize(g[0], W, p.align_corners);
      const float fy = grid_denormalize(g[1], H, p.align_corners);
      // The value of tap (r, c) at channel k: 0 outside the map with zeros padding.
      auto pixel = [&](int64_t r, int64_t c, size_t k) {
        const int64_t rr = grid_tap(r, H, p), cc = grid_tap(c, W, p);
        return rr < 0 || cc < 0 ? 0.0f : image[(size_t(rr) * size_t(W) + size_t(cc)) * C + k];
      };
      // Tap k of an axis from a floor index: the sentinel stays put (grid_tap takes it).
      auto step = [](int64_t i0, int64_t k) { return i0 == INT64_MIN ? i0 : i0 + k; };
      if (p.mode == GridSampleMode::nearest) {
        const int64_t c = grid_index(std::nearbyint(fx)), r = grid_index(std::nearbyint(fy));
        for (size_t k = 0; k < C; ++k) out[k] = pixel(r, c, k);
      } else if (p.mode == GridSampleMode::linear) {
        const int64_t x1 = grid_index(std::floor(fx)), y1 = grid_index(std::floor(fy));
        const int64_t x2 = step(x1, 1), y2 = step(y1, 1);
        const float dx2 = static_cast<float>(x2) - fx, dx1 = fx - static_cast<float>(x1);
        const float dy2 = static_cast<float>(y2) - fy, dy1 = fy - static_cast<float>(y1);
        if (grid_linear4(p)) {
          const bool any = grid_tap(x1, W, p) >= 0 || grid_tap(x2, W, p) >= 0;
          const bool any_row = grid_tap(y1, H, p) >= 0 || grid_tap(y2, H, p) >= 0;
          const float w11 = dy2 * dx2, w12 = dy2 * dx1, w21 = dy1 * dx2, w22 = dy1 * dx1;
          for (size_t k = 0; k < C; ++k)
            out[k] = any && any_row ? w11 * pixel(y1, x1, k) + w12 * pixel(y1, x2, k) + w21 * pixel(y2, x1, k) +
                                          w22 * pixel(y2, x2, k)
                                    : 0.0f;
          continue;
        }
        for (size_t k = 0; k < C; ++k)
          out[k] = dy2 * (dx2 * pixel(y1, x1, k) + dx1 * pixel(y1, x2, k)) +
                   dy1 * (dx2 * pixel(y2, x1, k) + dx1 * pixel(y2, x2, k));
      } else {
        const int64_t xf = grid_index(std::floor(fx)), yf = grid_index(std::floor(fy));
        const int64_t x0 = step(xf, -1), y0 = step(yf, -1);
        float cx[4], cy[4];
        grid_cubic_coeffs(fx - static_cast<float>(x0) - 1, cx);
        grid_cubic_coeffs(fy - static_cast<float>(y0) - 1, cy);
        for (size_t k = 0; k < C; ++k) {
          float v[4];
          for (int64_t i = 0; i < 4; ++i)
            v[i] = cx[0] * pixel(step(y0, i), x0, k) + cx[1] * pixel(step(y0, i), step(x0, 1), k) +
                   cx[2] * pixel(step(y0, i), step(x0, 2), k) + cx[3] * pixel(step(y0, i), step(x0, 3), k);
          out[k] = cy[0] * v[0] + cy[1] * v[1] + cy[2] * v[2] + cy[3] * v[3];
        }
      }
    }
  }
}

}  // namespace octet::kernels
