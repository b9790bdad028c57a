// FP32 depthwise convolution, 8 channels per ymm (kernels/dwconv_list.h has the contract).
// Same loop order as the AVX-512 kernel (f32_dwconv__avx512.cc): channel blocks outside,
// output pixels inside, 3x3 / 5x5 taps held in registers. The channel tail uses vmaskmovps.
#include <immintrin.h>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx2 {
namespace {

constexpr int kTile = 8;

inline __m256i tail_mask(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline __m256 load_x(const float* p, __m256i mask, bool full) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

inline void store_clamped(float* y, __m256 acc, __m256 lo, __m256 hi, __m256i mask, bool full) {
  // max(lo, acc) / min(hi, ·) in this order return acc when it is NaN, like the ref's compares.
  acc = _mm256_min_ps(hi, _mm256_max_ps(lo, acc));
  if (full) {
    _mm256_storeu_ps(y, acc);
  } else {
    _mm256_maskstore_ps(y, mask, acc);
  }
}

template <int KH, int KW>
void row_fixed(const F32DwRowArgs& a) {
  constexpr int kTaps = KH * KW;
  const __m256 lo = _mm256_set1_ps(a.min), hi = _mm256_set1_ps(a.max);
  const size_t channels = a.channels, pixels = a.pixels, pixel_step = a.pixel_step, tap_step = a.tap_step;
  const float* w = a.packed;
  for (size_t c0 = 0; c0 < channels; c0 += kTile, w += (kTaps + 1) * kTile) {
    const size_t n = channels - c0 < kTile ? channels - c0 : kTile;
    const bool full = n == kTile;
    const __m256i mask = tail_mask(n);
    const __m256 bias = _mm256_loadu_ps(w);
    __m256 wv[kTaps];
    for (int t = 0; t < kTaps; ++t) wv[t] = _mm256_loadu_ps(w + (t + 1) * kTile);
    const float* r[KH];
    for (int ky = 0; ky < KH; ++ky) r[ky] = a.rows[ky] + c0;
    float* y = a.y + c0;
    for (size_t p = 0; p < pixels; ++p) {
      __m256 acc0 = bias, acc1 = _mm256_setzero_ps();
      for (int ky = 0; ky < KH; ++ky) {
        for (int kx = 0; kx < KW; ++kx) {
          const __m256 x = load_x(r[ky] + kx * tap_step, mask, full);
          if ((ky * KW + kx) % 2 == 0) {
            acc0 = _mm256_fmadd_ps(x, wv[ky * KW + kx], acc0);
          } else {
            acc1 = _mm256_fmadd_ps(x, wv[ky * KW + kx], acc1);
          }
        }
        r[ky] += pixel_step;
      }
      store_clamped(y, _mm256_add_ps(acc0, acc1), lo, hi, mask, full);
      y += channels;
    }
  }
}

void row_any(const F32DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const __m256 lo = _mm256_set1_ps(a.min), hi = _mm256_set1_ps(a.max);
  const float* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    const bool full = n == kTile;
    const __m256i mask = tail_mask(n);
    for (size_t p = 0; p < a.pixels; ++p) {
      __m256 acc = _mm256_loadu_ps(w);
      const float* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const float* r = a.rows[ky] + p * a.pixel_step + c0;
        for (int kx = 0; kx < a.kernel_w; ++kx, wt += kTile) {
          acc = _mm256_fmadd_ps(load_x(r + kx * a.tap_step, mask, full), _mm256_loadu_ps(wt), acc);
        }
      }
      store_clamped(a.y + p * a.channels + c0, acc, lo, hi, mask, full);
    }
  }
}

}  // namespace

void f32_dwconv_c8_row(const F32DwRowArgs& a) {
  if (a.kernel_h == 3 && a.kernel_w == 3) return row_fixed<3, 3>(a);
  if (a.kernel_h == 5 && a.kernel_w == 5) return row_fixed<5, 5>(a);
  row_any(a);
}

void f32_dwconv_c8_indirect(const F32DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const __m256 lo = _mm256_set1_ps(a.min), hi = _mm256_set1_ps(a.max);
  for (size_t p = 0; p < a.pixels; ++p) {
    const float* const* tp = a.taps + p * taps;
    const float* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 1) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      const bool full = n == kTile;
      const __m256i mask = tail_mask(n);
      __m256 acc = _mm256_loadu_ps(w);
      for (int t = 0; t < taps; ++t) {
        acc = _mm256_fmadd_ps(load_x(tp[t] + c0, mask, full), _mm256_loadu_ps(w + (t + 1) * kTile), acc);
      }
      store_clamped(a.y + p * a.channels + c0, acc, lo, hi, mask, full);
    }
  }
}

}  // namespace octet::kernels::avx2
