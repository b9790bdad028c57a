#include "kernels/sample/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace octet::kernels {
namespace {

// Output pixels per microkernel call.
constexpr size_t kPixels = 32;

}  // namespace

struct F32GridSample::Call {
  const F32GridSample* self;
  const float* x;
  const float* grid;
  float* y;
};

void F32GridSample::check() const {
  if (s_.channels == 0) throw Unsupported("no channels");
  if (s_.in_h == 0 || s_.in_w == 0) throw Unsupported("an empty map");
}

F32GridSample::F32GridSample(const GridSampleParams& p, const GridSampleShape& s, Isa isa)
    : p_(p), s_(s), zeros_(s.channels, 0.0f) {
  check();
  if (p.mode == GridSampleMode::nearest) return;
  ukernel_ = first_runnable(p.mode == GridSampleMode::cubic ? kF32GridSampleCubicUkernels
                            : grid_linear4(p)                 ? kF32GridSampleLinear4Ukernels
                                                              : kF32GridSampleLinearUkernels,
                            isa);
  if (!ukernel_) throw Unsupported("no GridSample microkernel at this level");
}

F32GridSample::F32GridSample(const GridSampleParams& p, const GridSampleShape& s, const GridSampleUkernel& ukernel)
    : p_(p), s_(s), ukernel_(&ukernel), zeros_(s.channels, 0.0f) {
  check();
  if (p.mode == GridSampleMode::nearest) throw std::invalid_argument("F32GridSample: nearest runs no microkernel");
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("F32GridSample: kernel ") + ukernel.name + " needs " + isa_name(ukernel.isa) +
                                ", which this CPU does not support");
}

KernelId F32GridSample::kernel_id() const {
  if (!ukernel_) return portable_kernel("f32_gridsample_nearest_copy");
  return row_kernel(*ukernel_);
}

void F32GridSample::row_task(void* context, size_t row) {
  const Call& call = *static_cast<const Call*>(context);
  const F32GridSample& self = *call.self;
  const GridSampleParams& p = self.p_;
  const GridSampleShape& s = self.s_;
  const size_t C = s.channels, n = row / s.out_h;
  const int64_t H = int64_t(s.in_h), W = int64_t(s.in_w);
  const float* image = call.x + n * s.in_h * s.in_w * C;
  const float* grid = call.grid + row * s.out_w * 2;
  float* y = call.y + row * s.out_w * C;
  // The pixel a tap reads, or the row of zeros.
  auto tap = [&](int64_t r, int64_t c) -> const float* {
    const int64_t rr = grid_tap(r, H, p), cc = grid_tap(c, W, p);
    return rr < 0 || cc < 0 ? self.zeros_.data() : image + (size_t(rr) * size_t(W) + size_t(cc)) * C;
  };
  auto step = [](int64_t i0, int64_t k) { return i0 == INT64_MIN ? i0 : i0 + k; };
  if (p.mode == GridSampleMode::nearest) {
    for (size_t o = 0; o < s.out_w; ++o) {
      const float fx = grid_denormalize(grid[2 * o], W, p.align_corners);
      const float fy = grid_denormalize(grid[2 * o + 1], H, p.align_corners);
      const float* src = tap(grid_index(std::nearbyint(fy)), grid_index(std::nearbyint(fx)));
      std::memcpy(y + o * C, src, C * sizeof(float));
    }
    return;
  }
  const bool cubic = p.mode == GridSampleMode::cubic, linear4 = grid_linear4(p);
  const float* zero = self.zeros_.data();
  const float* taps[16 * kPixels];
  float weights[8 * kPixels];
  for (size_t first = 0; first < s.out_w; first += kPixels) {
    const size_t count = std::min(kPixels, s.out_w - first);
    for (size_t k = 0; k < count; ++k) {
      const size_t o = first + k;
      const float fx = grid_denormalize(grid[2 * o], W, p.align_corners);
      const float fy = grid_denormalize(grid[2 * o + 1], H, p.align_corners);
      const int64_t xf = grid_index(std::floor(fx)), yf = grid_index(std::floor(fy));
      if (!cubic) {
        const int64_t x2 = step(xf, 1), y2 = step(yf, 1);
        const float** t = taps + 4 * k;
        t[0] = tap(yf, xf), t[1] = tap(yf, x2), t[2] = tap(y2, xf), t[3] = tap(y2, x2);
        float* w = weights + 4 * k;
        const float dx2 = static_cast<float>(x2) - fx, dx1 = fx - static_cast<float>(xf);
        const float dy2 = static_cast<float>(y2) - fy, dy1 = fy - static_cast<float>(yf);
        if (!linear4) {
          w[0] = dx2, w[1] = dx1, w[2] = dy2, w[3] = dy1;
        } else if (t[0] == zero && t[1] == zero && t[2] == zero && t[3] == zero) {
          w[0] = w[1] = w[2] = w[3] = 0.0f;  // no tap in the map: ORT writes 0, whatever the weights
        } else {
          w[0] = dy2 * dx2, w[1] = dy2 * dx1, w[2] = dy1 * dx2, w[3] = dy1 * dx1;
        }
      } else {
        const int64_t x0 = step(xf, -1), y0 = step(yf, -1);
        const float** t = taps + 16 * k;
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 4; ++j) t[4 * i + j] = tap(step(y0, i), step(x0, j));
        float* w = weights + 8 * k;
        grid_cubic_coeffs(fx - static_cast<float>(x0) - 1, w);
        grid_cubic_coeffs(fy - static_cast<float>(y0) - 1, w + 4);
      }
    }
    self.ukernel_->fn(GridSampleArgs{taps, weights, count, C, y + first * C});
  }
}

void F32GridSample::run(const float* x, const float* grid, float* y, pthreadpool_t pool) const {
  const size_t rows = s_.batch * s_.out_h;
  if (rows == 0 || s_.out_w == 0) return;
  Call call{this, x, grid, y};
  if (pool == nullptr || rows == 1) {
    for (size_t r = 0; r < rows; ++r) row_task(&call, r);
  } else {
    pthreadpool_parallelize_1d(pool, &row_task, &call, rows, 0);
  }
}

}  // namespace octet::kernels
