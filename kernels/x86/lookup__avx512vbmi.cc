// 256-entry byte table lookup on zmm with AVX-512 VBMI: vpermi2b reads 128 table bytes held in
// two registers with a 7-bit index (bit 6 picks the register), so entries 0-127 and 128-255
// are two lookups and the index's bit 7 (its sign, movepi8_mask) picks between them.
#include <immintrin.h>

#include "kernels/quantize/lookup.h"

namespace octet::kernels::avx512vbmi {

void q8_lookup_rows(size_t rows, size_t n, const uint8_t* x, ptrdiff_t x_stride, const uint8_t* table, uint8_t* y,
                    ptrdiff_t y_stride) {
  const __m512i t0 = _mm512_loadu_si512(table);
  const __m512i t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128);
  const __m512i t3 = _mm512_loadu_si512(table + 192);
  const __mmask64 last = n % 64 == 0 ? ~__mmask64{0} : (__mmask64{1} << (n % 64)) - 1;
  for (size_t r = 0; r < rows; ++r, x += x_stride, y += y_stride) {
    for (size_t i = 0; i < n; i += 64) {
      const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : last;
      const __m512i idx = _mm512_maskz_loadu_epi8(m, x + i);
      const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
      const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
      const __m512i v = _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
      _mm512_mask_storeu_epi8(y + i, m, v);
    }
  }
}

void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y) { q8_lookup_rows(1, n, x, n, table, y, n); }

}  // namespace octet::kernels::avx512vbmi
