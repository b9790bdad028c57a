// Element-wise and global-pooling microkernels, AVX-512 (F/BW/DQ/VL), 16 lanes of float32 /
// int32. Tails use masked loads and stores, so no element outside [0, n) is touched.
//
// The INT8 kernels repeat the float steps of their reference variants one for one
// (kernels/ref/qelementwise.cc, qpool2d.cc); contraction is off for this file so a
// _mm512_mul_ps followed by _mm512_add_ps stays two roundings, and every FMA is written out.
#include "kernels/ref/fp_contract_off.h"

// GCC 12 reports the deliberately undefined source vector of _mm512_cvtepu8_epi32 and friends
// (_mm512_undefined_*) as "may be used uninitialized" once they are inlined: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "kernels/eltwise_list.h"

namespace octet::kernels::avx512 {
namespace {

__mmask16 tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

// ---- FP32 binary over rows ----

template <class Op>
void f32_binary(size_t rows, size_t cols, const float* a, size_t a_row_stride, const float* b, size_t b_row_stride,
                float* y, Op op) {
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 64 <= cols; c += 64) {
      const __m512 y0 = op(_mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c));
      const __m512 y1 = op(_mm512_loadu_ps(a + c + 16), _mm512_loadu_ps(b + c + 16));
      const __m512 y2 = op(_mm512_loadu_ps(a + c + 32), _mm512_loadu_ps(b + c + 32));
      const __m512 y3 = op(_mm512_loadu_ps(a + c + 48), _mm512_loadu_ps(b + c + 48));
      _mm512_storeu_ps(y + c, y0);
      _mm512_storeu_ps(y + c + 16, y1);
      _mm512_storeu_ps(y + c + 32, y2);
      _mm512_storeu_ps(y + c + 48, y3);
    }
    for (; c + 16 <= cols; c += 16) _mm512_storeu_ps(y + c, op(_mm512_loadu_ps(a + c), _mm512_loadu_ps(b + c)));
    if (c < cols) {
      const __mmask16 m = tail_mask(cols - c);
      _mm512_mask_storeu_ps(y + c, m, op(_mm512_maskz_loadu_ps(m, a + c), _mm512_maskz_loadu_ps(m, b + c)));
    }
  }
}

// exp(z) for z <= 0 (NaN passes through): z = n ln2 + r with |r| <= ln2 / 2, exp(r) by its
// degree-7 Taylor polynomial (truncation error below 0.2 ulp on that interval), then
// scalef multiplies by 2^n with one rounding, also where the result is subnormal.
__m512 exp_nonpositive(__m512 z) {
  z = _mm512_max_ps(_mm512_set1_ps(-104.0f), z);  // exp(-104) rounds to 0; NaN stays in z
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(z, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693145751953125f), z);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.428606820e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|) <= 1:
// never overflows, and keeps full relative accuracy for large negative x.
__m512 sigmoid(__m512 x) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 e = exp_nonpositive(_mm512_or_ps(x, sign));  // -|x|
  const __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), e);
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  const __m512 numerator = _mm512_mask_blend_ps(negative, _mm512_set1_ps(1.0f), e);
  return _mm512_div_ps(numerator, d);
}

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
      const __mmask16 m = cols - c >= 16 ? all : tail_mask(cols - c);
      store_i32_as_q8(y + c, op(load_q8_as_f32(a + c, m), load_q8_as_f32(b + c, m)), m);
    }
  }
}

template <class T>
void q8_add(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b, size_t b_row_stride,
            void* y, const Q8AddParams& p) {
  const __m512 ra = _mm512_set1_ps(p.ra), rb = _mm512_set1_ps(p.rb), k = _mm512_set1_ps(p.k);
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  q8_binary<T>(rows, cols, a, a_row_stride, b, b_row_stride, y, [&](__m512 qa, __m512 qb) {
    const __m512 t = _mm512_fmadd_ps(qb, rb, k);
    return clamp_round(_mm512_fmadd_ps(qa, ra, t), lo, hi);
  });
}

template <class T>
void q8_mul(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b, size_t b_row_stride,
            void* y, const Q8MulParams& p) {
  // qa - a_zp and qb - b_zp are integers in [-255, 255], exact in float, and so is their
  // product (|.| <= 65025 < 2^24): the float product equals the ref's float(int product).
  const __m512 za = _mm512_set1_ps(static_cast<float>(p.a_zero_point));
  const __m512 zb = _mm512_set1_ps(static_cast<float>(p.b_zero_point));
  const __m512 r = _mm512_set1_ps(p.r), zy = _mm512_set1_ps(p.y_zero_point);
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  q8_binary<T>(rows, cols, a, a_row_stride, b, b_row_stride, y, [&](__m512 qa, __m512 qb) {
    const __m512 product = _mm512_mul_ps(_mm512_sub_ps(qa, za), _mm512_sub_ps(qb, zb));
    const __m512 v = _mm512_add_ps(_mm512_mul_ps(product, r), zy);
    return clamp_round(v, lo, hi);
  });
}

template <class T>
void q8_gap(size_t hw, size_t channels, const void* x_bytes, void* y_bytes, const Q8GapParams& p) {
  const T* x = static_cast<const T*>(x_bytes);
  T* y = static_cast<T*>(y_bytes);
  const __m512 m = _mm512_set1_ps(p.multiplier);
  const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);
  const __m512i zy = _mm512_set1_epi32(p.y_zero_point);
  for (size_t c = 0; c < channels; c += 16) {
    const __mmask16 mask = channels - c >= 16 ? __mmask16(0xFFFF) : tail_mask(channels - c);
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

void f32_add(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](__m512 u, __m512 v) { return _mm512_add_ps(u, v); });
}

void f32_mul(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](__m512 u, __m512 v) { return _mm512_mul_ps(u, v); });
}

// max_ps(lo, x) returns x when x is NaN (the second operand wins on unordered), as the
// ref's `x < lo ? lo : x` does; likewise min_ps(hi, .).
void f32_clamp(size_t n, const float* x, float* y, float lo_value, float hi_value) {
  const __m512 lo = _mm512_set1_ps(lo_value), hi = _mm512_set1_ps(hi_value);
  auto clamp = [&](__m512 v) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); };
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 v0 = clamp(_mm512_loadu_ps(x + i)), v1 = clamp(_mm512_loadu_ps(x + i + 16));
    const __m512 v2 = clamp(_mm512_loadu_ps(x + i + 32)), v3 = clamp(_mm512_loadu_ps(x + i + 48));
    _mm512_storeu_ps(y + i, v0);
    _mm512_storeu_ps(y + i + 16, v1);
    _mm512_storeu_ps(y + i + 32, v2);
    _mm512_storeu_ps(y + i + 48, v3);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, clamp(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, clamp(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// The activations a conv epilogue cannot express as a clamp, each step as the ref computes it
// (kernels/ref/activation.h): hard_swish x * clamp(x / 6 + 0.5, 0, 1) with a true division,
// hard_sigmoid clamp(alpha * x + beta, 0, 1) with two roundings, silu x * sigmoid(x).
// min_ps(hi, max_ps(lo, v)) passes a NaN v through like the ref's clamp.
template <class F>
void f32_map(size_t n, const float* x, float* y, F f) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 v0 = f(_mm512_loadu_ps(x + i)), v1 = f(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(y + i, v0);
    _mm512_storeu_ps(y + i + 16, v1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

void f32_hswish(size_t n, const float* x, float* y, float, float) {
  const __m512 six = _mm512_set1_ps(6.0f), half = _mm512_set1_ps(0.5f);
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  f32_map(n, x, y, [&](__m512 v) {
    const __m512 g = _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_add_ps(_mm512_div_ps(v, six), half)));
    return _mm512_mul_ps(v, g);
  });
}

void f32_hsigmoid(size_t n, const float* x, float* y, float alpha, float beta) {
  const __m512 a = _mm512_set1_ps(alpha), b = _mm512_set1_ps(beta);
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  f32_map(n, x, y, [&](__m512 v) { return _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_add_ps(_mm512_mul_ps(a, v), b))); });
}

void f32_sigmoid(size_t n, const float* x, float* y) { f32_map(n, x, y, [](__m512 v) { return sigmoid(v); }); }

void f32_silu(size_t n, const float* x, float* y, float, float) {
  f32_map(n, x, y, [](__m512 v) { return _mm512_mul_ps(v, sigmoid(v)); });
}

void f32_gap(size_t hw, size_t channels, const float* x, float* y) {
  const __m512 count = _mm512_set1_ps(static_cast<float>(hw));
  for (size_t c = 0; c < channels; c += 16) {
    const __mmask16 m = channels - c >= 16 ? __mmask16(0xFFFF) : tail_mask(channels - c);
    const float* col = x + c;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    size_t q = 0;
    for (; q + 4 <= hw; q += 4) {
      s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(m, col + (q + 0) * channels));
      s1 = _mm512_add_ps(s1, _mm512_maskz_loadu_ps(m, col + (q + 1) * channels));
      s2 = _mm512_add_ps(s2, _mm512_maskz_loadu_ps(m, col + (q + 2) * channels));
      s3 = _mm512_add_ps(s3, _mm512_maskz_loadu_ps(m, col + (q + 3) * channels));
    }
    for (; q < hw; ++q) s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(m, col + q * channels));
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
    _mm512_mask_storeu_ps(y + c, m, _mm512_div_ps(sum, count));
  }
}

void qu8_add(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8AddParams& p) {
  q8_add<uint8_t>(rows, cols, a, as, b, bs, y, p);
}
void qs8_add(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8AddParams& p) {
  q8_add<int8_t>(rows, cols, a, as, b, bs, y, p);
}
void qu8_mul(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8MulParams& p) {
  q8_mul<uint8_t>(rows, cols, a, as, b, bs, y, p);
}
void qs8_mul(size_t rows, size_t cols, const void* a, size_t as, const void* b, size_t bs, void* y,
             const Q8MulParams& p) {
  q8_mul<int8_t>(rows, cols, a, as, b, bs, y, p);
}
void qu8_gap(size_t hw, size_t channels, const void* x, void* y, const Q8GapParams& p) {
  q8_gap<uint8_t>(hw, channels, x, y, p);
}
void qs8_gap(size_t hw, size_t channels, const void* x, void* y, const Q8GapParams& p) {
  q8_gap<int8_t>(hw, channels, x, y, p);
}

}  // namespace octet::kernels::avx512
