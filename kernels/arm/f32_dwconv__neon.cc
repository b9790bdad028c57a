// FP32 depthwise convolution, 4 channels per float32x4 (kernels/dwconv_list.h has the
// contract): channel blocks outside, output pixels inside, any kernel size. The channel tail
// goes through a 4-float buffer, so no load or store leaves the tensors.
#include <arm_neon.h>

#include <cstring>

#include "kernels/dwconv_list.h"

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"

constexpr int kTile = 4;

inline float32x4_t load_x(const float* p, size_t n) {
  if (n == kTile) return vld1q_f32(p);
  float lanes[kTile] = {};
  std::memcpy(lanes, p, n * sizeof(float));
  return vld1q_f32(lanes);
}

// min(max(acc, lo), hi) where a NaN accumulator passes through, like the ref's compares.
inline void store_clamped(float* y, float32x4_t acc, float32x4_t lo, float32x4_t hi, size_t n) {
  acc = min_ps(hi, max_ps(lo, acc));
  if (n == kTile) {
    vst1q_f32(y, acc);
  } else {
    float lanes[kTile];
    vst1q_f32(lanes, acc);
    std::memcpy(y, lanes, n * sizeof(float));
  }
}

}  // namespace

void f32_dwconv_c4_row(const F32DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const float32x4_t lo = vdupq_n_f32(a.min), hi = vdupq_n_f32(a.max);
  const float* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    for (size_t p = 0; p < a.pixels; ++p) {
      float32x4_t acc = vld1q_f32(w);
      const float* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const float* r = a.rows[ky] + p * a.pixel_step + c0;
        for (int kx = 0; kx < a.kernel_w; ++kx, wt += kTile)
          acc = vfmaq_f32(acc, load_x(r + kx * a.tap_step, n), vld1q_f32(wt));
      }
      store_clamped(a.y + p * a.channels + c0, acc, lo, hi, n);
    }
  }
}

void f32_dwconv_c4_indirect(const F32DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const float32x4_t lo = vdupq_n_f32(a.min), hi = vdupq_n_f32(a.max);
  for (size_t p = 0; p < a.pixels; ++p) {
    const float* const* tp = a.taps + p * taps;
    const float* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      float32x4_t acc = vld1q_f32(w);
      for (int t = 0; t < taps; ++t) acc = vfmaq_f32(acc, load_x(tp[t] + c0, n), vld1q_f32(w + (t + 1) * kTile));
      store_clamped(a.y + p * a.channels + c0, acc, lo, hi, n);
    }
  }
}

}  // namespace octet::kernels::neon
