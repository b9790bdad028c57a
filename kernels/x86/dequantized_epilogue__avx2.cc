// Q8DequantizedDwConv's passes on ymm (see the avx512 file for the rounding and NaN rules);
// tails of fewer than 8 values run the scalar ref.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include "kernels/conv/dequantized_epilogue.h"

namespace octet::kernels::avx2 {

void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  const __m256i zp = _mm256_set1_epi32(zero_point);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + i));
    const __m256i v = is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    _mm256_storeu_ps(out + i, _mm256_cvtepi32_ps(_mm256_sub_epi32(v, zp)));
  }
  q8_center__ref(n - i, bytes + i, is_signed, zero_point, out + i);
}

void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo,
                          float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const size_t whole = channels / 8 * 8;
  for (size_t p = 0; p < pixels; ++p) {
    float* row = y + p * channels;
    for (size_t c = 0; c < whole; c += 8) {
      __m256 v = _mm256_mul_ps(_mm256_loadu_ps(row + c), _mm256_loadu_ps(scale + c));
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + c));
      _mm256_storeu_ps(row + c, _mm256_min_ps(vhi, _mm256_max_ps(vlo, v)));
    }
    if (whole < channels)
      f32_scale_bias_clamp__ref(1, channels - whole, row + whole, scale + whole,
                                bias != nullptr ? bias + whole : nullptr, lo, hi);
  }
}

}  // namespace octet::kernels::avx2
