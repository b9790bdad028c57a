// Winograd F(2x2, 3x3) transforms on ymm: 8 channels per vector; the channel tail uses
// vmaskmovps (slow stores on AMD, hence only for the tail). The math is in
// f32_winograd_transforms.inc; contracts in f32_winograd_list.h.
#include <immintrin.h>

#include "kernels/f32_winograd_list.h"

namespace octet::kernels::avx2 {
namespace {

using Vec = __m256;
using Mask = __m256i;
constexpr size_t kLanes = 8;

inline Mask tail_mask(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load_full(const float* p) { return _mm256_loadu_ps(p); }
inline Vec load_part(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
inline void store_full(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline void store_part(float* p, Vec v, Mask m) { _mm256_maskstore_ps(p, m, v); }
inline Vec set1(float x) { return _mm256_set1_ps(x); }
// Value second: vmaxps / vminps return the second operand when either is NaN, so NaN passes.
inline Vec clamp(Vec v, Vec lo, Vec hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }

}  // namespace

#include "kernels/f32_winograd_transforms.inc"

}  // namespace octet::kernels::avx2
