// Strided-gather rows on AVX2 (kernels/elementwise/strided_gather_list.h): y[i] = x[i * stride].
// Step 2 is two loads packed to their even elements, step -1 one load permuted end to end; any
// other step is vpgatherdd (vpgatherdq for 8 bytes) with indices stride * lane. 1- and 2-byte
// elements gather the dword holding the element (starting at it for a positive step, ending at
// it for a negative one, so the extra bytes lie between the row's own elements) and keep its
// byte / half; the last element or two, whose dword would reach past the row, are copied one by
// one. So is every tail shorter than a vector: a masked vpgatherdd costs more than the few
// loads it replaces, and short rows are mostly tail (bench/RESULTS.md).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/elementwise/strided_gather_list.h"

namespace octet::kernels::avx2 {

namespace {

// vpgather's indices are int32 lanes: stride * 7 must fit.
constexpr ptrdiff_t kMaxGatherStride = ptrdiff_t(1) << 27;

template <class T>
void tail(const T* x, ptrdiff_t s, T* y, size_t i, size_t n) {
  for (; i < n; ++i) y[i] = x[ptrdiff_t(i) * s];
}

__m256i lane_index8() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }

void row_x32(const int32_t* x, ptrdiff_t s, int32_t* y, size_t n) {
  size_t i = 0;
  if (s == 2) {
    // Both loads end at element 2i + 15, one past the block's last: stop while it is in the row.
    for (; i + 8 < n; i += 8) {
      const __m256 a = _mm256_loadu_ps(reinterpret_cast<const float*>(x + 2 * i));
      const __m256 b = _mm256_loadu_ps(reinterpret_cast<const float*>(x + 2 * i + 8));
      const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm256_permute4x64_epi64(_mm256_castps_si256(even), 0xD8));
    }
  } else if (s == -1) {
    const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    for (; i + 8 <= n; i += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x - ptrdiff_t(i) - 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permutevar8x32_epi32(v, reverse));
    }
  }
  if (i == n) return;
  if (s > kMaxGatherStride || s < -kMaxGatherStride) return tail(x, s, y, i, n);
  const __m256i index = _mm256_mullo_epi32(_mm256_set1_epi32(int32_t(s)), lane_index8());
  for (; i + 8 <= n; i += 8) {
    const auto* base = reinterpret_cast<const int*>(x + ptrdiff_t(i) * s);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_i32gather_epi32(base, index, 4));
  }
  tail(x, s, y, i, n);
}

void row_x64(const int64_t* x, ptrdiff_t s, int64_t* y, size_t n) {
  size_t i = 0;
  if (s == 2) {
    for (; i + 4 < n; i += 4) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i + 4));
      const __m256i even = _mm256_unpacklo_epi64(a, b);  // a0 b0 | a2 b2
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(even, 0xD8));
    }
  } else if (s == -1) {
    for (; i + 4 <= n; i += 4) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x - ptrdiff_t(i) - 3));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(v, 0x1B));
    }
  }
  if (i == n) return;
  if (s > kMaxGatherStride || s < -kMaxGatherStride) return tail(x, s, y, i, n);
  const __m128i index = _mm_mullo_epi32(_mm_set1_epi32(int32_t(s)), _mm_setr_epi32(0, 1, 2, 3));
  for (; i + 4 <= n; i += 4) {
    const auto* base = reinterpret_cast<const long long*>(x + ptrdiff_t(i) * s);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_i32gather_epi64(base, index, 8));
  }
  tail(x, s, y, i, n);
}

void row_x16(const uint16_t* x, ptrdiff_t s, uint16_t* y, size_t n) {
  size_t i = 0;
  if (s == 2) {
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    for (; i + 16 < n; i += 16) {
      const __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i)), low);
      const __m256i b = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i + 16)), low);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8));
    }
  } else if (s == -1) {
    const __m256i reverse = _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1,  //
                                             14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    for (; i + 16 <= n; i += 16) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x - ptrdiff_t(i) - 15));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, reverse), 0x4E));
    }
  }
  if (s <= kMaxGatherStride && s >= -kMaxGatherStride) {
    const __m256i index = _mm256_mullo_epi32(_mm256_set1_epi32(int32_t(s)), lane_index8());
    // The dword starts at the element (s > 0: its low half) or ends at it (s < 0: its high half).
    const __m256i half = s > 0 ? _mm256_set1_epi32(0xFFFF) : _mm256_setzero_si256();
    for (; i + 8 < n; i += 8) {
      const uint16_t* base = x + ptrdiff_t(i) * s - (s > 0 ? 0 : 1);
      __m256i v = _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), index, 2);
      v = s > 0 ? _mm256_and_si256(v, half) : _mm256_srli_epi32(v, 16);
      const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0x08);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(packed));
    }
  }
  tail(x, s, y, i, n);
}

void row_x8(const uint8_t* x, ptrdiff_t s, uint8_t* y, size_t n) {
  size_t i = 0;
  if (s == 2) {
    const __m256i low = _mm256_set1_epi16(0xFF);
    for (; i + 32 < n; i += 32) {
      const __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i)), low);
      const __m256i b = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i + 32)), low);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8));
    }
  } else if (s == -1) {
    const __m256i reverse = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,  //
                                             15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (; i + 32 <= n; i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x - ptrdiff_t(i) - 31));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, reverse), 0x4E));
    }
  }
  if (s <= kMaxGatherStride && s >= -kMaxGatherStride) {
    const __m256i index = _mm256_mullo_epi32(_mm256_set1_epi32(int32_t(s)), lane_index8());
    // Byte 0 (s > 0) or 3 (s < 0) of each dword, the dwords of each 128-bit lane into its first.
    const __m256i pick = s > 0 ? _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                  0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)
                               : _mm256_setr_epi8(3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                                  3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
    // A dword reaches 3 bytes past its element: ceil(3 / |s|) elements further along the row.
    const size_t abs_s = size_t(s < 0 ? -s : s);
    const size_t guard = (3 + abs_s - 1) / abs_s;
    for (; i + 8 + guard <= n; i += 8) {
      const uint8_t* base = x + ptrdiff_t(i) * s - (s > 0 ? 0 : 3);
      const __m256i v = _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), index, 1);
      const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick), join);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm256_castsi256_si128(packed));
    }
  }
  tail(x, s, y, i, n);
}

template <class T, void (*Row)(const T*, ptrdiff_t, T*, size_t)>
void rows_of(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y, ptrdiff_t y_row) {
  const T* xr = static_cast<const T*>(x);
  T* yr = static_cast<T*>(y);
  if (n == 0) return;
  for (size_t r = 0; r < rows; ++r, xr += x_row, yr += y_row) {
    if (stride == 0) std::fill(yr, yr + n, *xr);
    else Row(xr, stride, yr, n);
  }
}

}  // namespace

void strided_gather_x8(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                       ptrdiff_t y_row) {
  rows_of<uint8_t, row_x8>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x16(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<uint16_t, row_x16>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x32(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<int32_t, row_x32>(rows, n, x, x_row, stride, y, y_row);
}
void strided_gather_x64(size_t rows, size_t n, const void* x, ptrdiff_t x_row, ptrdiff_t stride, void* y,
                        ptrdiff_t y_row) {
  rows_of<int64_t, row_x64>(rows, n, x, x_row, stride, y, y_row);
}

}  // namespace octet::kernels::avx2
