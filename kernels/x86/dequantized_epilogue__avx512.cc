// Q8DequantizedDwConv's passes on zmm. The epilogue keeps the multiply and the add as two
// instructions (this file is built without contraction), and max(lo, v) / min(hi, v) put the
// bound first: vmaxps / vminps return their second operand when either is NaN, so a NaN stays
// NaN through both, as std::min(std::max(v, lo), hi) does.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include "kernels/conv/dequantized_epilogue.h"

namespace octet::kernels::avx512 {

void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  const __m512i zp = _mm512_set1_epi32(zero_point);
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m128i b = _mm_maskz_loadu_epi8(m, bytes + i);
    const __m512i v = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    _mm512_mask_storeu_ps(out + i, m, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, zp)));
  }
}

void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo,
                          float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (size_t p = 0; p < pixels; ++p) {
    float* row = y + p * channels;
    for (size_t c = 0; c < channels; c += 16) {
      const size_t left = channels - c;
      const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + c), _mm512_maskz_loadu_ps(m, scale + c));
      if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + c));
      _mm512_mask_storeu_ps(row + c, m, _mm512_min_ps(vhi, _mm512_max_ps(vlo, v)));
    }
  }
}

}  // namespace octet::kernels::avx512
