// Element-wise and global-pooling microkernels, AVX2 + FMA, 8 lanes of float32 / int32.
// The FP32 kernels are kernels/eltwise_loops.inc over the Ops of kernels/x86/avx2_ops.h.
// Float tails use vmaskmovps; byte tails go through a small stack buffer (AVX2 has no byte
// masks), so no element outside [0, n) is read or written.
//
// The INT8 kernels repeat the float steps of their reference variants one for one
// (kernels/ref/qelementwise.cc, qpool2d.cc); contraction is off for this file so a
// _mm256_mul_ps followed by _mm256_add_ps stays two roundings, and every FMA is written out.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants
#include "kernels/x86/avx2_ops.h"

namespace octet::kernels::avx2 {
namespace {

// ---- INT8 ----

template <class T>
constexpr bool is_unsigned() {
  return static_cast<T>(-1) > 0;
}

template <class T>
__m256i widen_q8(__m128i bytes) {
  if constexpr (is_unsigned<T>()) return _mm256_cvtepu8_epi32(bytes);
  else return _mm256_cvtepi8_epi32(bytes);
}

template <class T>
__m256i load8_as_i32(const T* p) {
  return widen_q8<T>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// 16 int32 already clamped into T's range -> 16 bytes; the saturating packs cannot saturate.
template <class T>
__m128i narrow16(__m256i v0, __m256i v1) {
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);  // 16 x int16, in order
  const __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
  if constexpr (is_unsigned<T>()) return _mm_packus_epi16(lo, hi);
  else return _mm_packs_epi16(lo, hi);
}

__m256i clamp_round(__m256 v, __m256 lo, __m256 hi) {
  return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
}

template <class T, class Op>
void q8_binary(size_t rows, size_t cols, const void* a_bytes, size_t a_row_stride, const void* b_bytes,
               size_t b_row_stride, void* y_bytes, Op op) {
  const T* a = static_cast<const T*>(a_bytes);
  const T* b = static_cast<const T*>(b_bytes);
  T* y = static_cast<T*>(y_bytes);
  auto step16 = [&](const T* pa, const T* pb, T* py) {
    const __m256i y0 = op(_mm256_cvtepi32_ps(load8_as_i32(pa)), _mm256_cvtepi32_ps(load8_as_i32(pb)));
    const __m256i y1 = op(_mm256_cvtepi32_ps(load8_as_i32(pa + 8)), _mm256_cvtepi32_ps(load8_as_i32(pb + 8)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(py), narrow16<T>(y0, y1));
  };
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      step16(a + c, b + c, y + c);
      step16(a + c + 16, b + c + 16, y + c + 16);
    }
    for (; c + 16 <= cols; c += 16) step16(a + c, b + c, y + c);
    if (c < cols) {
      T ta[16] = {}, tb[16] = {}, ty[16];
      std::memcpy(ta, a + c, cols - c);
      std::memcpy(tb, b + c, cols - c);
      step16(ta, tb, ty);
      std::memcpy(y + c, ty, cols - c);
    }
  }
}

// One block of up to 16 channels (col points at its first channel; `width` valid lanes are
// loaded from a buffer when the block is partial).
template <class T>
void q8_gap_block(size_t hw, size_t channels, const T* col, size_t width, T* y, const Q8GapParams& p) {
  __m256i s0 = _mm256_set1_epi32(p.bias), s1 = _mm256_set1_epi32(p.bias);
  __m256i t0 = _mm256_setzero_si256(), t1 = _mm256_setzero_si256();
  auto load16 = [&](const T* src, __m256i& lo, __m256i& hi) {
    if (width == 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      lo = widen_q8<T>(v);
      hi = widen_q8<T>(_mm_srli_si128(v, 8));
    } else {
      T buf[16] = {};
      std::memcpy(buf, src, width);
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf));
      lo = widen_q8<T>(v);
      hi = widen_q8<T>(_mm_srli_si128(v, 8));
    }
  };
  size_t q = 0;
  for (; q + 2 <= hw; q += 2) {
    __m256i l0, h0, l1, h1;
    load16(col + q * channels, l0, h0);
    load16(col + (q + 1) * channels, l1, h1);
    s0 = _mm256_add_epi32(s0, l0);
    s1 = _mm256_add_epi32(s1, h0);
    t0 = _mm256_add_epi32(t0, l1);
    t1 = _mm256_add_epi32(t1, h1);
  }
  if (q < hw) {
    __m256i l0, h0;
    load16(col + q * channels, l0, h0);
    s0 = _mm256_add_epi32(s0, l0);
    s1 = _mm256_add_epi32(s1, h0);
  }
  const __m256 m = _mm256_set1_ps(p.multiplier);
  const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi);
  const __m256i zy = _mm256_set1_epi32(p.y_zero_point);
  const __m256i v0 = clamp_round(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s0, t0)), m), lo, hi);
  const __m256i v1 = clamp_round(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s1, t1)), m), lo, hi);
  const __m128i out = narrow16<T>(_mm256_add_epi32(v0, zy), _mm256_add_epi32(v1, zy));
  if (width == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), out);
  } else {
    T buf[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf), out);
    std::memcpy(y, buf, width);
  }
}

template <class T>
void q8_gap(size_t hw, size_t channels, const void* x_bytes, void* y_bytes, const Q8GapParams& p) {
  const T* x = static_cast<const T*>(x_bytes);
  T* y = static_cast<T*>(y_bytes);
  for (size_t c = 0; c < channels; c += 16) {
    const size_t width = channels - c >= 16 ? 16 : channels - c;
    q8_gap_block<T>(hw, channels, x + c, width, y + c, p);
  }
}

}  // namespace

#include "kernels/eltwise_loops.inc"
#include "kernels/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::avx2
