// Max- and average-pooling microkernels (kernels/pool_list.h), AVX2: 8 floats or 32 bytes per
// vector. Float tails use vmaskmovps. AVX2 has no byte masks: a byte tail of a row of at least
// 16 channels redoes the row's last 16 channels (max is idempotent, so the overlap writes the
// same values again); rows of fewer than 16 channels take the scalar loop.
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/pool_list.h"

namespace octet::kernels::avx2 {
namespace {

// Lanes [0, n) set, n in [0, 8].
__m256i tail_mask(size_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
}

struct F32x8 {
  using T = float;
  using V = __m256;
  static constexpr size_t lanes = 8;
  static V lowest() { return _mm256_set1_ps(-FLT_MAX); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static V max(V v, V best) { return _mm256_max_ps(v, best); }  // (v > best) ? v : best
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
};

// Bytes of either signedness: Elem says which (the scalar tail's comparison).
template <class E>
struct Q8x32 {
  using T = uint8_t;
  using Elem = E;
  using V = __m256i;
  static constexpr size_t lanes = 32;
  static V lowest() { return _mm256_set1_epi8(static_cast<char>(std::numeric_limits<E>::lowest())); }
  static V load(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static V max(V v, V best) {
    if constexpr (std::is_signed_v<E>) return _mm256_max_epi8(v, best);
    else return _mm256_max_epu8(v, best);
  }
  static void store(T* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};

template <class E>
struct Q8x16 {
  using T = uint8_t;
  using V = __m128i;
  static constexpr size_t lanes = 16;
  static V lowest() { return _mm_set1_epi8(static_cast<char>(std::numeric_limits<E>::lowest())); }
  static V load(const T* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static V max(V v, V best) {
    if constexpr (std::is_signed_v<E>) return _mm_max_epi8(v, best);
    else return _mm_max_epu8(v, best);
  }
  static void store(T* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
};

// Channels [c, c + N * lanes) of one pixel.
template <class Ops, int N>
void max_vectors(const PoolArgs<typename Ops::T>& a, const typename Ops::T* const* taps, size_t c,
                 typename Ops::T* y) {
  typename Ops::V best[N];
  for (int i = 0; i < N; ++i) best[i] = Ops::lowest();
  for (size_t t = 0; t < a.kernel_size; ++t) {
    const typename Ops::T* x = pool_tap(a, taps[t]) + c;
    for (int i = 0; i < N; ++i) best[i] = Ops::max(Ops::load(x + i * Ops::lanes), best[i]);
  }
  for (int i = 0; i < N; ++i) Ops::store(y + c + i * Ops::lanes, best[i]);
}

template <class E>
void q8_maxpool(const PoolArgs<uint8_t>& a) {
  using Wide = Q8x32<E>;
  using Narrow = Q8x16<E>;
  const uint8_t* const* taps = a.taps;
  uint8_t* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    size_t c = 0;
    for (; c + 128 <= C; c += 128) max_vectors<Wide, 4>(a, taps, c, y);
    for (; c + 32 <= C; c += 32) max_vectors<Wide, 1>(a, taps, c, y);
    if (c + 16 <= C) {
      max_vectors<Narrow, 1>(a, taps, c, y);
      c += 16;
    }
    if (c == C) continue;
    if (C >= 16) {
      max_vectors<Narrow, 1>(a, taps, C - 16, y);
      continue;
    }
    for (; c < C; ++c) {
      E best = std::numeric_limits<E>::lowest();
      for (size_t t = 0; t < a.kernel_size; ++t) {
        const E v = static_cast<E>(pool_tap(a, taps[t])[c]);
        if (v > best) best = v;
      }
      y[c] = static_cast<uint8_t>(best);
    }
  }
}

// Sums of 4 channels in double, widened from float: exact, like the ref's `sum += x`.
__m256d widen_lo(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
__m256d widen_hi(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

// Channels [c, c + 8 * N) of one pixel.
template <int N>
void avg_vectors(const PoolArgs<float>& a, const float* const* taps, size_t c, __m256d divisor, float* y) {
  __m256d sum[2 * N];
  for (int i = 0; i < 2 * N; ++i) sum[i] = _mm256_setzero_pd();
  for (size_t t = 0; t < a.kernel_size; ++t) {
    const float* x = pool_tap(a, taps[t]) + c;
    for (int i = 0; i < N; ++i) {
      const __m256 v = _mm256_loadu_ps(x + 8 * i);
      sum[2 * i] = _mm256_add_pd(sum[2 * i], widen_lo(v));
      sum[2 * i + 1] = _mm256_add_pd(sum[2 * i + 1], widen_hi(v));
    }
  }
  for (int i = 0; i < N; ++i) {
    const __m128 lo = _mm256_cvtpd_ps(_mm256_div_pd(sum[2 * i], divisor));
    const __m128 hi = _mm256_cvtpd_ps(_mm256_div_pd(sum[2 * i + 1], divisor));
    _mm256_storeu_ps(y + c + 8 * i, _mm256_set_m128(hi, lo));
  }
}

// The last C - c < 8 channels.
void avg_tail(const PoolArgs<float>& a, const float* const* taps, size_t c, __m256d divisor, float* y) {
  const __m256i m = tail_mask(a.channels - c);
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  for (size_t t = 0; t < a.kernel_size; ++t) {
    const __m256 v = _mm256_maskload_ps(pool_tap(a, taps[t]) + c, m);
    lo = _mm256_add_pd(lo, widen_lo(v));
    hi = _mm256_add_pd(hi, widen_hi(v));
  }
  const __m256 q = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_div_pd(hi, divisor)),
                                   _mm256_cvtpd_ps(_mm256_div_pd(lo, divisor)));
  _mm256_maskstore_ps(y + c, m, q);
}

}  // namespace

void f32_maxpool(const PoolArgs<float>& a) {
  const float* const* taps = a.taps;
  float* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    size_t c = 0;
    for (; c + 32 <= C; c += 32) max_vectors<F32x8, 4>(a, taps, c, y);
    for (; c + 8 <= C; c += 8) max_vectors<F32x8, 1>(a, taps, c, y);
    if (c < C) {
      const __m256i m = tail_mask(C - c);
      __m256 best = F32x8::lowest();
      for (size_t t = 0; t < a.kernel_size; ++t)
        best = _mm256_max_ps(_mm256_maskload_ps(pool_tap(a, taps[t]) + c, m), best);
      _mm256_maskstore_ps(y + c, m, best);
    }
  }
}

void qu8_maxpool(const PoolArgs<uint8_t>& a) { q8_maxpool<uint8_t>(a); }
void qs8_maxpool(const PoolArgs<uint8_t>& a) { q8_maxpool<int8_t>(a); }

void f32_avgpool(const PoolArgs<float>& a) {
  const float* const* taps = a.taps;
  float* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    const __m256d divisor = _mm256_set1_pd(a.divisors[p]);
    size_t c = 0;
    for (; c + 16 <= C; c += 16) avg_vectors<2>(a, taps, c, divisor, y);
    for (; c + 8 <= C; c += 8) avg_vectors<1>(a, taps, c, divisor, y);
    if (c < C) avg_tail(a, taps, c, divisor, y);
  }
}

#include "kernels/q8_avgpool_loop.inc"

}  // namespace octet::kernels::avx2
