// QuantizeLinear (per tensor) on zmm: bit-exact with quantize_value() in kernels/ref/qmath.h,
// which divides (QuantizeLinear divides; multiplying by a reciprocal rounds differently near
// ties). vdivps zmm costs 5 to 10 cycles per vector, three times the rest of the loop, so each
// vector is multiplied by fl(1/scale) and only a vector with a lane near a rounding boundary is
// divided (the bound is below). max(v, lo) returns lo when v is NaN (vmaxps returns its
// second operand then), as the ref's !(v >= lo) does; the clamp to [qmin - zp, qmax - zp]
// before the conversion keeps it in range, and cvtps2dq rounds half to even.
#include <immintrin.h>

#include "kernels/elementwise/quantize.h"

namespace octet::kernels::avx512 {

namespace {

// The rare vector with a lane near a rounding boundary, divided: out of line, so that the
// compiler cannot turn the branch into a division of every vector.
[[gnu::noinline]] __m512i divide_near(__m512i q, __mmask16 near, __m512 x, __m512 scale, __m512 lo, __m512 hi) {
  const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(x, scale), lo), hi);
  return _mm512_mask_mov_epi32(q, near, _mm512_cvtps_epi32(v));
}

}  // namespace

// Why the product decides every other lane. Let q = fl(x * fl(1/s)), Q = x / s and c() the
// clamp to [lo, hi] = [qmin - zp, qmax - zp] (integers inside [-255, 255]). Each of the three
// roundings (1/s, the product, the correctly rounded quotient fl(Q)) is within 2^-24 relative,
// so |q - fl(Q)| < 3.0001 * 2^-24 * |Q|.
//  - q inside [lo, hi]: |q - fl(Q)| < 4.6e-5. If c(q) is more than 2^-12 from every k + 1/2,
//    fl(Q) is on the same side of it and no tie: both round to the same integer.
//  - q outside: c(q) is the bound itself (distance 1/2 from every k + 1/2, never "near"), and
//    fl(Q) also lies beyond, or within 9.2e-5 of, that bound (or both exceed 511 in size), so
//    it rounds and clamps to the same bound.
// A NaN clamps to lo either way. A scale whose reciprocal is not a normal float divides.
void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y) {
  const __m512 vscale = _mm512_set1_ps(scale);
  const bool use_recip = __builtin_isnormal(scale) && __builtin_isnormal(1.0f / scale);
  const __m512 recip = _mm512_set1_ps(1.0f / scale);
  const __m512 near_tie = _mm512_set1_ps(0.5f - 1.0f / 4096.0f);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(qmin - zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(qmax - zero_point));
  const __m512i zp = _mm512_set1_epi32(zero_point);
  auto* out = static_cast<uint8_t*>(y);
  auto quantize16 = [&](__m512 xv, __mmask16 m) {
    if (!use_recip) {
      const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(xv, vscale), lo), hi);
      return _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
    }
    const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(xv, recip), lo), hi);
    __m512i q = _mm512_cvtps_epi32(v);
    const __m512 off = _mm512_abs_ps(_mm512_sub_ps(v, _mm512_cvtepi32_ps(q)));
    const __mmask16 near = _mm512_mask_cmp_ps_mask(m, off, near_tie, _CMP_GT_OQ);
    if (near != 0) q = divide_near(q, near, xv, vscale, lo, hi);
    return _mm512_add_epi32(q, zp);
  };
  // 64 values per step, packed to bytes with two saturating packs (exact: every value is
  // inside the output type already) and one lane permute, and stored with one full store.
  const bool is_signed = qmin < 0;
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i q0 = quantize16(_mm512_loadu_ps(x + i), 0xFFFF), q1 = quantize16(_mm512_loadu_ps(x + i + 16), 0xFFFF);
    const __m512i q2 = quantize16(_mm512_loadu_ps(x + i + 32), 0xFFFF), q3 = quantize16(_mm512_loadu_ps(x + i + 48), 0xFFFF);
    const __m512i a = _mm512_packs_epi32(q0, q1), b = _mm512_packs_epi32(q2, q3);
    const __m512i bytes = is_signed ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);
    _mm512_storeu_si512(out + i, _mm512_permutexvar_epi32(order, bytes));
  }
  for (; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m512i q = quantize16(_mm512_maskz_loadu_ps(m, x + i), m);
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

// As the AVX2 kernel (quantize__avx2.cc), 16 bytes at a time.
void q8_dequantize(size_t n, const void* x, bool is_signed, float scale, int32_t zero_point, float* y) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  const __m512i zp = _mm512_set1_epi32(zero_point);
  const __m512 vscale = _mm512_set1_ps(scale);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
    const __m512i q = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, zp)), vscale));
  }
  for (; i < n; ++i) {
    const int32_t q = is_signed ? int32_t(static_cast<int8_t>(bytes[i])) : int32_t(bytes[i]);
    y[i] = static_cast<float>(q - zero_point) * scale;
  }
}

}  // namespace octet::kernels::avx512
