// Max- and average-pooling microkernels (kernels/pool_list.h), AVX-512 (F/BW/DQ): 16 floats or
// 64 bytes per vector. Tails use masked loads and stores, so no channel outside the row is
// touched.

// GCC 12 reports the deliberately undefined vectors inside the unmasked intrinsics
// (_mm512_undefined_*) as "may be used uninitialized" once inlined: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/pool_list.h"

namespace octet::kernels::avx512 {
namespace {

struct F32x16 {
  using T = float;
  using V = __m512;
  using Mask = __mmask16;
  static constexpr size_t lanes = 16;
  static Mask tail(size_t n) { return static_cast<Mask>((1u << n) - 1u); }
  static V lowest() { return _mm512_set1_ps(-FLT_MAX); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static V load(const T* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static V max(V v, V best) { return _mm512_max_ps(v, best); }  // (v > best) ? v : best
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static void store(T* p, V v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
};

template <class E>
struct Q8x64 {
  using T = uint8_t;
  using V = __m512i;
  using Mask = __mmask64;
  static constexpr size_t lanes = 64;
  static Mask tail(size_t n) { return _bzhi_u64(~uint64_t{0}, static_cast<unsigned>(n)); }
  static V lowest() { return _mm512_set1_epi8(static_cast<char>(std::numeric_limits<E>::lowest())); }
  static V load(const T* p) { return _mm512_loadu_si512(p); }
  static V load(const T* p, Mask m) { return _mm512_maskz_loadu_epi8(m, p); }
  static V max(V v, V best) {
    if constexpr (std::is_signed_v<E>) return _mm512_max_epi8(v, best);
    else return _mm512_max_epu8(v, best);
  }
  static void store(T* p, V v) { _mm512_storeu_si512(p, v); }
  static void store(T* p, V v, Mask m) { _mm512_mask_storeu_epi8(p, m, v); }
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

template <class Ops>
void maxpool(const PoolArgs<typename Ops::T>& a) {
  const typename Ops::T* const* taps = a.taps;
  typename Ops::T* y = a.y;
  const size_t C = a.channels, L = Ops::lanes;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    size_t c = 0;
    for (; c + 4 * L <= C; c += 4 * L) max_vectors<Ops, 4>(a, taps, c, y);
    for (; c + L <= C; c += L) max_vectors<Ops, 1>(a, taps, c, y);
    if (c < C) {
      const typename Ops::Mask m = Ops::tail(C - c);
      typename Ops::V best = Ops::lowest();
      for (size_t t = 0; t < a.kernel_size; ++t) best = Ops::max(Ops::load(pool_tap(a, taps[t]) + c, m), best);
      Ops::store(y + c, best, m);
    }
  }
}

// Sums of 8 channels in double, widened from float: exact, like the ref's `sum += x`.
__m512d widen_lo(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
__m512d widen_hi(__m512 v) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)); }

__m512 narrow(__m512d lo, __m512d hi, __m512d divisor) {
  const __m256 l = _mm512_cvtpd_ps(_mm512_div_pd(lo, divisor));
  const __m256 h = _mm512_cvtpd_ps(_mm512_div_pd(hi, divisor));
  return _mm512_insertf32x8(_mm512_castps256_ps512(l), h, 1);
}

// Channels [c, c + 16 * N) of one pixel; the last block may be partial (mask).
template <int N>
void avg_vectors(const PoolArgs<float>& a, const float* const* taps, size_t c, __m512d divisor, float* y,
                 __mmask16 last = 0xFFFF) {
  __m512d sum[2 * N];
  for (int i = 0; i < 2 * N; ++i) sum[i] = _mm512_setzero_pd();
  for (size_t t = 0; t < a.kernel_size; ++t) {
    const float* x = pool_tap(a, taps[t]) + c;
    for (int i = 0; i < N; ++i) {
      const __m512 v = i == N - 1 ? _mm512_maskz_loadu_ps(last, x + 16 * i) : _mm512_loadu_ps(x + 16 * i);
      sum[2 * i] = _mm512_add_pd(sum[2 * i], widen_lo(v));
      sum[2 * i + 1] = _mm512_add_pd(sum[2 * i + 1], widen_hi(v));
    }
  }
  for (int i = 0; i < N; ++i) {
    const __m512 q = narrow(sum[2 * i], sum[2 * i + 1], divisor);
    if (i == N - 1) _mm512_mask_storeu_ps(y + c + 16 * i, last, q);
    else _mm512_storeu_ps(y + c + 16 * i, q);
  }
}

}  // namespace

void f32_maxpool(const PoolArgs<float>& a) { maxpool<F32x16>(a); }
void qu8_maxpool(const PoolArgs<uint8_t>& a) { maxpool<Q8x64<uint8_t>>(a); }
void qs8_maxpool(const PoolArgs<uint8_t>& a) { maxpool<Q8x64<int8_t>>(a); }

void f32_avgpool(const PoolArgs<float>& a) {
  const float* const* taps = a.taps;
  float* y = a.y;
  const size_t C = a.channels;
  for (size_t p = 0; p < a.pixels; ++p, taps += a.kernel_size, y += C) {
    const __m512d divisor = _mm512_set1_pd(a.divisors[p]);
    size_t c = 0;
    for (; c + 32 <= C; c += 32) avg_vectors<2>(a, taps, c, divisor, y);
    for (; c + 16 <= C; c += 16) avg_vectors<1>(a, taps, c, divisor, y);
    if (c < C) avg_vectors<1>(a, taps, c, divisor, y, F32x16::tail(C - c));
  }
}

#include "kernels/q8_avgpool_loop.inc"

}  // namespace octet::kernels::avx512
