// Linear-resize microkernels (kernels/resize_list.h), AVX-512: 16 channels per step.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/resize_list.h"

namespace octet::kernels::avx512 {
namespace {

struct Lanes {
  using V = __m512;
  static constexpr size_t lanes = 16;
  static V set1(float v) { return _mm512_set1_ps(v); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load(const uint8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static V load(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  // Truncated to int32, then narrowed with saturation (a uint8 result is never negative: it
  // is a convex combination of bytes).
  static void store(uint8_t* p, V v) {
    const __m512i i = _mm512_max_epi32(_mm512_cvttps_epi32(v), _mm512_setzero_si512());
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtusepi32_epi8(i));
  }
  static void store(int8_t* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtsepi32_epi8(_mm512_cvttps_epi32(v)));
  }
};

}  // namespace

#include "kernels/resize_linear_loop.inc"

}  // namespace octet::kernels::avx512
