// Linear-resize microkernels (kernels/resize_list.h), AVX2: 8 channels per step.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/resize_list.h"

namespace octet::kernels::avx2 {
namespace {

struct Lanes {
  using V = __m256;
  static constexpr size_t lanes = 8;
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load(const uint8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static V load(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Truncated to int32, then narrowed with saturation (16-bit, then 8-bit).
  static __m128i words(V v) {
    const __m256i i = _mm256_cvttps_epi32(v);
    return _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  }
  static void store(uint8_t* p, V v) {
    const __m128i w = words(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(w, w));
  }
  static void store(int8_t* p, V v) {
    const __m128i w = words(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(w, w));
  }
};

}  // namespace

#include "kernels/resize_linear_loop.inc"

}  // namespace octet::kernels::avx2
