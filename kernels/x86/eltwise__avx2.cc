// Element-wise and global-pooling microkernels, AVX2 + FMA, 8 lanes of float32 / int32.
// Float tails use vmaskmovps; byte tails go through a small stack buffer (AVX2 has no byte
// masks), so no element outside [0, n) is read or written.
//
// The INT8 kernels repeat the float steps of their reference variants one for one
// (kernels/ref/qelementwise.cc, qpool2d.cc); contraction is off for this file so a
// _mm256_mul_ps followed by _mm256_add_ps stays two roundings, and every FMA is written out.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/eltwise_list.h"

namespace octet::kernels::avx2 {
namespace {

// Lanes [0, n) set, n in [0, 8].
__m256i tail_mask(size_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
}

// ---- FP32 binary over rows ----

template <class Op>
void f32_binary(size_t rows, size_t cols, const float* a, size_t a_row_stride, const float* b, size_t b_row_stride,
                float* y, Op op) {
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      const __m256 y0 = op(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c));
      const __m256 y1 = op(_mm256_loadu_ps(a + c + 8), _mm256_loadu_ps(b + c + 8));
      const __m256 y2 = op(_mm256_loadu_ps(a + c + 16), _mm256_loadu_ps(b + c + 16));
      const __m256 y3 = op(_mm256_loadu_ps(a + c + 24), _mm256_loadu_ps(b + c + 24));
      _mm256_storeu_ps(y + c, y0);
      _mm256_storeu_ps(y + c + 8, y1);
      _mm256_storeu_ps(y + c + 16, y2);
      _mm256_storeu_ps(y + c + 24, y3);
    }
    for (; c + 8 <= cols; c += 8) _mm256_storeu_ps(y + c, op(_mm256_loadu_ps(a + c), _mm256_loadu_ps(b + c)));
    if (c < cols) {
      const __m256i m = tail_mask(cols - c);
      _mm256_maskstore_ps(y + c, m, op(_mm256_maskload_ps(a + c, m), _mm256_maskload_ps(b + c, m)));
    }
  }
}

// exp(z) for z <= 0, NaN passing through; see the AVX-512 twin for the method. Without
// scalef, 2^n is applied as two exact power-of-two factors 2^(n/2) and 2^(n - n/2), each a
// normal float for n >= -150, so only the last multiply rounds (also into subnormals).
__m256 exp_nonpositive(__m256 z) {
  z = _mm256_max_ps(_mm256_set1_ps(-104.0f), z);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(z, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), z);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.428606820e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // NaN converts to INT_MIN; the blend below then returns the NaN from z's path anyway.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
  const __m256 e = _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
  const __m256 is_nan = _mm256_cmp_ps(z, z, _CMP_UNORD_Q);
  return _mm256_blendv_ps(e, z, is_nan);
}

__m256 sigmoid(__m256 x) {
  const __m256 e = exp_nonpositive(_mm256_or_ps(x, _mm256_set1_ps(-0.0f)));  // exp(-|x|)
  const __m256 d = _mm256_add_ps(_mm256_set1_ps(1.0f), e);
  const __m256 negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 numerator = _mm256_blendv_ps(_mm256_set1_ps(1.0f), e, negative);
  return _mm256_div_ps(numerator, d);
}

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

template <class T>
void q8_add(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b, size_t b_row_stride,
            void* y, const Q8AddParams& p) {
  const __m256 ra = _mm256_set1_ps(p.ra), rb = _mm256_set1_ps(p.rb), k = _mm256_set1_ps(p.k);
  const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi);
  q8_binary<T>(rows, cols, a, a_row_stride, b, b_row_stride, y, [&](__m256 qa, __m256 qb) {
    const __m256 t = _mm256_fmadd_ps(qb, rb, k);
    return clamp_round(_mm256_fmadd_ps(qa, ra, t), lo, hi);
  });
}

template <class T>
void q8_mul(size_t rows, size_t cols, const void* a, size_t a_row_stride, const void* b, size_t b_row_stride,
            void* y, const Q8MulParams& p) {
  // Exact integers in float: see the AVX-512 twin.
  const __m256 za = _mm256_set1_ps(static_cast<float>(p.a_zero_point));
  const __m256 zb = _mm256_set1_ps(static_cast<float>(p.b_zero_point));
  const __m256 r = _mm256_set1_ps(p.r), zy = _mm256_set1_ps(p.y_zero_point);
  const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi);
  q8_binary<T>(rows, cols, a, a_row_stride, b, b_row_stride, y, [&](__m256 qa, __m256 qb) {
    const __m256 product = _mm256_mul_ps(_mm256_sub_ps(qa, za), _mm256_sub_ps(qb, zb));
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(product, r), zy);
    return clamp_round(v, lo, hi);
  });
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

void f32_add(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](__m256 u, __m256 v) { return _mm256_add_ps(u, v); });
}

void f32_mul(size_t rows, size_t cols, const float* a, size_t as, const float* b, size_t bs, float* y) {
  f32_binary(rows, cols, a, as, b, bs, y, [](__m256 u, __m256 v) { return _mm256_mul_ps(u, v); });
}

// max_ps(lo, x) returns x when x is NaN (the second operand wins on unordered), as the
// ref's `x < lo ? lo : x` does; likewise min_ps(hi, .).
void f32_clamp(size_t n, const float* x, float* y, float lo_value, float hi_value) {
  const __m256 lo = _mm256_set1_ps(lo_value), hi = _mm256_set1_ps(hi_value);
  auto clamp = [&](__m256 v) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); };
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = clamp(_mm256_loadu_ps(x + i)), v1 = clamp(_mm256_loadu_ps(x + i + 8));
    const __m256 v2 = clamp(_mm256_loadu_ps(x + i + 16)), v3 = clamp(_mm256_loadu_ps(x + i + 24));
    _mm256_storeu_ps(y + i, v0);
    _mm256_storeu_ps(y + i + 8, v1);
    _mm256_storeu_ps(y + i + 16, v2);
    _mm256_storeu_ps(y + i + 24, v3);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, clamp(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, clamp(_mm256_maskload_ps(x + i, m)));
  }
}

// The activations a conv epilogue cannot express as a clamp, each step as the ref computes it
// (kernels/ref/activation.h): hard_swish x * clamp(x / 6 + 0.5, 0, 1) with a true division,
// hard_sigmoid clamp(alpha * x + beta, 0, 1) with two roundings, silu x * sigmoid(x).
// min_ps(hi, max_ps(lo, v)) passes a NaN v through like the ref's clamp.
template <class F>
void f32_map(size_t n, const float* x, float* y, F f) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 v0 = f(_mm256_loadu_ps(x + i)), v1 = f(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, v0);
    _mm256_storeu_ps(y + i + 8, v1);
  }
  for (; i < n; i += 8) {
    const __m256i m = tail_mask(n - i >= 8 ? 8 : n - i);
    _mm256_maskstore_ps(y + i, m, f(_mm256_maskload_ps(x + i, m)));
  }
}

void f32_hswish(size_t n, const float* x, float* y, float, float) {
  const __m256 six = _mm256_set1_ps(6.0f), half = _mm256_set1_ps(0.5f);
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  f32_map(n, x, y, [&](__m256 v) {
    const __m256 g = _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_add_ps(_mm256_div_ps(v, six), half)));
    return _mm256_mul_ps(v, g);
  });
}

void f32_hsigmoid(size_t n, const float* x, float* y, float alpha, float beta) {
  const __m256 a = _mm256_set1_ps(alpha), b = _mm256_set1_ps(beta);
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  f32_map(n, x, y, [&](__m256 v) { return _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_add_ps(_mm256_mul_ps(a, v), b))); });
}

void f32_sigmoid(size_t n, const float* x, float* y) { f32_map(n, x, y, [](__m256 v) { return sigmoid(v); }); }

void f32_silu(size_t n, const float* x, float* y, float, float) {
  f32_map(n, x, y, [](__m256 v) { return _mm256_mul_ps(v, sigmoid(v)); });
}

void f32_gap(size_t hw, size_t channels, const float* x, float* y) {
  const __m256 count = _mm256_set1_ps(static_cast<float>(hw));
  for (size_t c = 0; c < channels; c += 8) {
    const __m256i m = tail_mask(channels - c >= 8 ? 8 : channels - c);
    const float* col = x + c;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t q = 0;
    for (; q + 4 <= hw; q += 4) {
      s0 = _mm256_add_ps(s0, _mm256_maskload_ps(col + (q + 0) * channels, m));
      s1 = _mm256_add_ps(s1, _mm256_maskload_ps(col + (q + 1) * channels, m));
      s2 = _mm256_add_ps(s2, _mm256_maskload_ps(col + (q + 2) * channels, m));
      s3 = _mm256_add_ps(s3, _mm256_maskload_ps(col + (q + 3) * channels, m));
    }
    for (; q < hw; ++q) s0 = _mm256_add_ps(s0, _mm256_maskload_ps(col + q * channels, m));
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    _mm256_maskstore_ps(y + c, m, _mm256_div_ps(sum, count));
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

}  // namespace octet::kernels::avx2
