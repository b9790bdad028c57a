// FP32 depthwise convolution, 16 channels per zmm (kernels/dwconv_list.h has the contract).
// The row kernel walks channel blocks outside and output pixels inside, so a block's taps
// stay in registers across the whole row: one load per FMA. 3x3 and 5x5 are unrolled at
// compile time; other sizes read the taps from the packed block (still L1-resident).
// GCC 12 flags _mm512_undefined_ps() inside its own min/max intrinsics as "may be used
// uninitialized", a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx512 {
namespace {

constexpr int kTile = 16;

inline __mmask16 tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

inline void store_clamped(float* y, __m512 acc, __m512 lo, __m512 hi, __mmask16 mask, bool full) {
  // max(lo, acc) / min(hi, ·) in this order return acc when it is NaN, like the ref's compares.
  acc = _mm512_min_ps(hi, _mm512_max_ps(lo, acc));
  if (full) {
    _mm512_storeu_ps(y, acc);
  } else {
    _mm512_mask_storeu_ps(y, mask, acc);
  }
}

inline __m512 load_x(const float* p, __mmask16 mask, bool full) {
  return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
}

template <int KH, int KW>
void row_fixed(const F32DwRowArgs& a) {
  constexpr int kTaps = KH * KW;
  const __m512 lo = _mm512_set1_ps(a.min), hi = _mm512_set1_ps(a.max);
  // Locals: the stores through y could alias `a` as far as the compiler knows.
  const size_t channels = a.channels, pixels = a.pixels, pixel_step = a.pixel_step, tap_step = a.tap_step;
  const float* w = a.packed;
  for (size_t c0 = 0; c0 < channels; c0 += kTile, w += (kTaps + 1) * kTile) {
    const size_t n = channels - c0 < kTile ? channels - c0 : kTile;
    const bool full = n == kTile;
    const __mmask16 mask = tail_mask(n);
    const __m512 bias = _mm512_loadu_ps(w);
    __m512 wv[kTaps];
    for (int t = 0; t < kTaps; ++t) wv[t] = _mm512_loadu_ps(w + (t + 1) * kTile);
    const float* r[KH];
    for (int ky = 0; ky < KH; ++ky) r[ky] = a.rows[ky] + c0;
    float* y = a.y + c0;
    for (size_t p = 0; p < pixels; ++p) {
      // Two accumulators halve the FMA dependency chain of one pixel.
      __m512 acc0 = bias, acc1 = _mm512_setzero_ps();
      for (int ky = 0; ky < KH; ++ky) {
        for (int kx = 0; kx < KW; ++kx) {
          const __m512 x = load_x(r[ky] + kx * tap_step, mask, full);
          if ((ky * KW + kx) % 2 == 0) {
            acc0 = _mm512_fmadd_ps(x, wv[ky * KW + kx], acc0);
          } else {
            acc1 = _mm512_fmadd_ps(x, wv[ky * KW + kx], acc1);
          }
        }
        r[ky] += pixel_step;
      }
      store_clamped(y, _mm512_add_ps(acc0, acc1), lo, hi, mask, full);
      y += channels;
    }
  }
}

void row_any(const F32DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const __m512 lo = _mm512_set1_ps(a.min), hi = _mm512_set1_ps(a.max);
  const float* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    const bool full = n == kTile;
    const __mmask16 mask = tail_mask(n);
    for (size_t p = 0; p < a.pixels; ++p) {
      __m512 acc0 = _mm512_loadu_ps(w), acc1 = _mm512_setzero_ps();
      const float* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const float* r = a.rows[ky] + p * a.pixel_step + c0;
        int kx = 0;
        for (; kx + 1 < a.kernel_w; kx += 2, wt += 2 * kTile) {
          acc0 = _mm512_fmadd_ps(load_x(r + kx * a.tap_step, mask, full), _mm512_loadu_ps(wt), acc0);
          acc1 = _mm512_fmadd_ps(load_x(r + (kx + 1) * a.tap_step, mask, full),
                                 _mm512_loadu_ps(wt + kTile), acc1);
        }
        if (kx < a.kernel_w) {
          acc0 = _mm512_fmadd_ps(load_x(r + kx * a.tap_step, mask, full), _mm512_loadu_ps(wt), acc0);
          wt += kTile;
        }
      }
      store_clamped(a.y + p * a.channels + c0, _mm512_add_ps(acc0, acc1), lo, hi, mask, full);
    }
  }
}

}  // namespace

void f32_dwconv_c16_row(const F32DwRowArgs& a) {
  if (a.kernel_h == 3 && a.kernel_w == 3) return row_fixed<3, 3>(a);
  if (a.kernel_h == 5 && a.kernel_w == 5) return row_fixed<5, 5>(a);
  row_any(a);
}

void f32_dwconv_c16_indirect(const F32DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const __m512 lo = _mm512_set1_ps(a.min), hi = _mm512_set1_ps(a.max);
  for (size_t p = 0; p < a.pixels; ++p) {
    const float* const* tp = a.taps + p * taps;
    const float* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      const bool full = n == kTile;
      const __mmask16 mask = tail_mask(n);
      __m512 acc0 = _mm512_loadu_ps(w), acc1 = _mm512_setzero_ps();
      int t = 0;
      for (; t + 1 < taps; t += 2) {
        acc0 = _mm512_fmadd_ps(load_x(tp[t] + c0, mask, full), _mm512_loadu_ps(w + (t + 1) * kTile), acc0);
        acc1 = _mm512_fmadd_ps(load_x(tp[t + 1] + c0, mask, full), _mm512_loadu_ps(w + (t + 2) * kTile),
                               acc1);
      }
      if (t < taps) {
        acc0 = _mm512_fmadd_ps(load_x(tp[t] + c0, mask, full), _mm512_loadu_ps(w + (t + 1) * kTile), acc0);
      }
      store_clamped(a.y + p * a.channels + c0, _mm512_add_ps(acc0, acc1), lo, hi, mask, full);
    }
  }
}

}  // namespace octet::kernels::avx512
