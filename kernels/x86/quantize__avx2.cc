// QuantizeLinear (per tensor) on ymm: bit-exact with quantize_value() in kernels/ref/qmath.h
// (same reasoning as quantize__avx512.cc, including why a multiply by fl(1/scale) decides
// every lane not within 2^-12 of a rounding boundary). The tail goes through the scalar rule.
#include <immintrin.h>

#include "kernels/elementwise/quantize.h"

namespace octet::kernels::avx2 {

namespace {

// The rare vector with a lane near a rounding boundary, divided (out of line: see avx512).
[[gnu::noinline]] __m256i divide_near(__m256i q, __m256 near, __m256 x, __m256 scale, __m256 lo, __m256 hi) {
  const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(x, scale), lo), hi);
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(q), _mm256_castsi256_ps(_mm256_cvtps_epi32(v)), near));
}

}  // namespace

void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y) {
  const __m256 vscale = _mm256_set1_ps(scale);
  const bool use_recip = __builtin_isnormal(scale) && __builtin_isnormal(1.0f / scale);
  const __m256 recip = _mm256_set1_ps(1.0f / scale);
  const __m256 near_tie = _mm256_set1_ps(0.5f - 1.0f / 4096.0f);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 lo = _mm256_set1_ps(static_cast<float>(qmin - zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(qmax - zero_point));
  const __m256i zp = _mm256_set1_epi32(zero_point);
  // Low byte of each int32, gathered into the first 4 bytes of each 128-bit half.
  const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                             0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i halves = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
  auto* out = static_cast<uint8_t*>(y);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    __m256i q;
    if (use_recip) {
      const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(xv, recip), lo), hi);
      q = _mm256_cvtps_epi32(v);
      const __m256 off = _mm256_and_ps(_mm256_sub_ps(v, _mm256_cvtepi32_ps(q)), abs_mask);
      const __m256 near = _mm256_cmp_ps(off, near_tie, _CMP_GT_OQ);
      if (_mm256_movemask_ps(near) != 0) q = divide_near(q, near, xv, vscale, lo, hi);
    } else {
      q = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_div_ps(xv, vscale), lo), hi));
    }
    q = _mm256_add_epi32(q, zp);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, low_bytes), halves);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  // The tail repeats quantize_value() (kernels/ref/qmath.h) rather than calling it: an inline
  // function compiled in this AVX2 file could be the copy the linker keeps for every caller.
  for (; i < n; ++i) {
    float v = x[i] / scale;
    const float l = static_cast<float>(qmin - zero_point), h = static_cast<float>(qmax - zero_point);
    if (!(v >= l)) v = l;
    if (v > h) v = h;
    out[i] = static_cast<uint8_t>(static_cast<int32_t>(__builtin_nearbyintf(v)) + zero_point);
  }
}

// A NaN anywhere is tracked apart (vminps would let a later element replace it) and returned
// for both; the tail runs scalar.
void f32_range(size_t n, const float* x, float* min, float* max) {
  __m256 lo = _mm256_set1_ps(__builtin_inff());
  __m256 hi = _mm256_set1_ps(-__builtin_inff());
  __m256 nan = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    lo = _mm256_min_ps(lo, v);
    hi = _mm256_max_ps(hi, v);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, lo);
  _mm256_store_ps(h, hi);
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  float rmin = l[0], rmax = h[0];
  for (int j = 1; j < 8; ++j) {
    rmin = l[j] < rmin ? l[j] : rmin;
    rmax = h[j] > rmax ? h[j] : rmax;
  }
  for (; i < n; ++i) {
    any_nan |= x[i] != x[i];
    rmin = x[i] < rmin ? x[i] : rmin;
    rmax = x[i] > rmax ? x[i] : rmax;
  }
  if (any_nan) rmin = rmax = __builtin_nanf("");
  *min = rmin;
  *max = rmax;
}

// Bytes widened to int32, the zero point subtracted (exact), converted (exact: |x - zp| <= 510)
// and multiplied: the ref's one rounding. The tail repeats dequantize_value() (see above).
void q8_dequantize(size_t n, const void* x, bool is_signed, float scale, int32_t zero_point, float* y) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  const __m256i zp = _mm256_set1_epi32(zero_point);
  const __m256 vscale = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + i));
    const __m256i q = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, zp)), vscale));
  }
  for (; i < n; ++i) {
    const int32_t q = is_signed ? int32_t(static_cast<int8_t>(bytes[i])) : int32_t(bytes[i]);
    y[i] = static_cast<float>(q - zero_point) * scale;
  }
}

}  // namespace octet::kernels::avx2
