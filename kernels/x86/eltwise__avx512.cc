// Element-wise and global-pooling microkernels, AVX-512 (F/BW/DQ/VL), 16 lanes of float32 /
// int32. The FP32 kernels are kernels/eltwise_loops.inc over the Ops of
// kernels/x86/avx512_ops.h. Tails use masked loads and stores, so no element outside [0, n)
// is touched.
//
// The INT8 kernels repeat the float steps of their reference variants one for one
// (kernels/ref/qelementwise.cc, qpool2d.cc); contraction is off for this file so a
// _mm512_mul_ps followed by _mm512_add_ps stays two roundings, and every FMA is written out.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {
namespace {

// ---- INT8 ----

template <class T>
__m512 load_q8_as_f32(const T* p, __mmask16 m) {
  const __m128i bytes = _mm_maskz_loadu_epi8(m, p);
  if constexpr (sizeof(T) == 1 && static_cast<T>(-1) > 0) return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
  else return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
}

template <class T>
__m512i load_q8_as_i32(const T* p, __mmask16 m) {
  const __m128i bytes = _mm_maskz_loadu_epi8(m, p);
  if constexpr (static_cast<T>(-1) > 0) return _mm512_cvtepu8_epi32(bytes);
  else return _mm512_cvtepi8_epi32(bytes);
}

// The values are already clamped into T's range, so the truncating narrow (vpmovdb) is exact.
// Register form then a masked store: vpmovdb with a memory operand is slow on Zen 4/5.
template <class T>
void store_i32_as_q8(T* p, __m512i v, __mmask16 m) {
  _mm_mask_storeu_epi8(p, m, _mm512_cvtepi32_epi8(v));
}

// 64 int32 values (in T's range) -> 64 bytes in order with one store. The packs work per
// 128-bit lane: lane j of the packed vector holds dwords v0[4j..4j+3], v1[4j..], v2[4j..],
// v3[4j..]; the permute puts dword 4j + k at position 4k + j.
template <class T>
void store64_i32_as_q8(T* p, __m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i w01 = _mm512_packs_epi32(v0, v1), w23 = _mm512_packs_epi32(v2, v3);
  __m512i bytes;
  if constexpr (static_cast<T>(-1) > 0) bytes = _mm512_packus_epi16(w01, w23);
  else bytes = _mm512_packs_epi16(w01, w23);
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(p, _mm512_permutexvar_epi32(order, bytes));
}

// v clamped in float to [lo, hi] (max then min: huge values saturate), rounded half to even.
__m512i clamp_round(__m512 v, __m512 lo, __m512 hi) {
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
}

template <class T, class Op>
void q8_binary(size_t rows, size_t cols, const void* a_bytes, size_t a_row_stride, const void* b_bytes,
               size_t b_row_stride, void* y_bytes, Op op) {
  const T* a = static_cast<const T*>(a_bytes);
  const T* b = static_cast<const T*>(b_bytes);
  T* y = static_cast<T*>(y_bytes);
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    const __mmask16 all = 0xFFFF;
    for (; c + 64 <= cols; c += 64) {
      const __m512i y0 = op(load_q8_as_f32(a + c, all), load_q8_as_f32(b + c, all));
      const __m512i y1 = op(load_q8_as_f32(a + c + 16, all), load_q8_as_f32(b + c + 16, all));
      const __m512i y2 = op(load_q8_as_f32(a + c + 32, all), load_q8_as_f32(b + c + 32, all));
      const __m512i y3 = op(load_q8_as_f32(a + c + 48, all), load_q8_as_f32(b + c + 48, all));
      store64_i32_as_q8(y + c, y0, y1, y2, y3);
    }
    for (; c < cols; c += 16) {
      const __mmask16 m = cols - c >= 16 ? all : Ops::tail_mask(cols - c);
      store_i32_as_q8(y + c, op(load_q8_as_f32(a + c, m), load_q8_as_f32(b + c, m)), m);
    }
  }
}

template <class T>
void q8_gap(size_t hw, size_t channels, const void* x_bytes, void* y_bytes, const Q8GapParams& p) {
  const T* x = static_cast<const T*>(x_bytes);
  T* y = static_cast<T*>(y_bytes);
  const __m512 m = _mm512_set1_ps(p.multiplier);
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  const __m512i zy = _mm512_set1_epi32(p.y_zero_point);
  for (size_t c = 0; c < channels; c += 16) {
    const __mmask16 mask = channels - c >= 16 ? __mmask16(0xFFFF) : Ops::tail_mask(channels - c);
    const T* col = x + c;
    // Four independent sums over the pixels so the adds are not one dependency chain.
    __m512i s0 = _mm512_set1_epi32(p.bias), s1 = _mm512_setzero_si512();
    __m512i s2 = _mm512_setzero_si512(), s3 = _mm512_setzero_si512();
    size_t q = 0;
    for (; q + 4 <= hw; q += 4) {
      s0 = _mm512_add_epi32(s0, load_q8_as_i32(col + (q + 0) * channels, mask));
      s1 = _mm512_add_epi32(s1, load_q8_as_i32(col + (q + 1) * channels, mask));
      s2 = _mm512_add_epi32(s2, load_q8_as_i32(col + (q + 2) * channels, mask));
      s3 = _mm512_add_epi32(s3, load_q8_as_i32(col + (q + 3) * channels, mask));
    }
    for (; q < hw; ++q) s0 = _mm512_add_epi32(s0, load_q8_as_i32(col + q * channels, mask));
    const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(s0, s1), _mm512_add_epi32(s2, s3));
    const __m512i v = clamp_round(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), m), lo, hi);
    store_i32_as_q8(y + c, _mm512_add_epi32(v, zy), mask);
  }
}

}  // namespace

#include "kernels/eltwise_loops.inc"
#include "kernels/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::avx512
