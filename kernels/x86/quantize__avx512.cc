// QuantizeLinear (per tensor) on zmm: bit-exact with quantize_value() in kernels/ref/qmath.h.
// The division is IEEE-exact like the scalar one (QuantizeLinear divides; multiplying by a
// reciprocal rounds differently). max(v, lo) returns lo when v is NaN (vmaxps returns its
// second operand then), as the ref's !(v >= lo) does; the clamp to [qmin - zp, qmax - zp]
// before the conversion keeps it in range, and cvtps2dq rounds half to even.
#include <immintrin.h>

#include "kernels/elementwise/quantize.h"

namespace octet::kernels::avx512 {

void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y) {
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(qmin - zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(qmax - zero_point));
  const __m512i zp = _mm512_set1_epi32(zero_point);
  auto* out = static_cast<uint8_t*>(y);
  size_t i = 0;
  for (; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vscale);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
    _mm_mask_storeu_epi8(out + i, m, _mm512_cvtepi32_epi8(q));  // in range: truncation is exact
  }
}

// Masked lanes keep the accumulator, so the tail needs no identity padding; a NaN anywhere
// is tracked apart (vminps would let a later element replace it) and returned for both.
void f32_range(size_t n, const float* x, float* min, float* max) {
  __m512 lo = _mm512_set1_ps(__builtin_inff());
  __m512 hi = _mm512_set1_ps(-__builtin_inff());
  __mmask16 nan = 0;
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    nan |= _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q);
    lo = _mm512_mask_min_ps(lo, m, lo, v);
    hi = _mm512_mask_max_ps(hi, m, hi, v);
  }
  if (nan != 0) {
    *min = *max = __builtin_nanf("");
    return;
  }
  *min = _mm512_reduce_min_ps(lo);
  *max = _mm512_reduce_max_ps(hi);
}

}  // namespace octet::kernels::avx512
