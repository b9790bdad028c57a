// 256-entry byte table lookup on ymm with AVX2: vpshufb looks up 16 entries at a time, so the
// table is 16 rows of 16 bytes and each row is looked up with an index that selects it.
#include <immintrin.h>

#include "kernels/quantize/lookup.h"

namespace octet::kernels::avx2 {

namespace {

// Row k serves the bytes whose high nibble is k. x ^ (16 k) has a zero high nibble exactly for
// those bytes; adding 0x70 with unsigned saturation keeps them below 0x80 (the low nibble, the
// column, unchanged) and lifts every other byte to 0x80 or above, whose set top bit makes
// vpshufb write 0. The 16 partial results are disjoint, so OR-ing them gives the lookup.
__m256i lookup32(const __m256i (&rows)[16], __m256i x) {
  const __m256i lift = _mm256_set1_epi8(0x70);
  __m256i y = _mm256_setzero_si256();
  for (int k = 0; k < 16; ++k) {
    const __m256i idx = _mm256_adds_epu8(_mm256_xor_si256(x, _mm256_set1_epi8(char(k << 4))), lift);
    y = _mm256_or_si256(y, _mm256_shuffle_epi8(rows[k], idx));
  }
  return y;
}

}  // namespace

void q8_lookup_rows(size_t rows, size_t n, const uint8_t* x, ptrdiff_t x_stride, const uint8_t* table, uint8_t* y,
                    ptrdiff_t y_stride) {
  __m256i lanes[16];
  for (int k = 0; k < 16; ++k)
    lanes[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k)));
  for (size_t r = 0; r < rows; ++r, x += x_stride, y += y_stride) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), lookup32(lanes, v));
    }
    if (i + 16 <= n) {  // half a vector: a concat run of 16 or 48 channels
      const __m256i v = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(lookup32(lanes, v)));
      i += 16;
    }
    for (; i < n; ++i) y[i] = table[x[i]];
  }
}

void q8_lookup(size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y) { q8_lookup_rows(1, n, x, n, table, y, n); }

}  // namespace octet::kernels::avx2
