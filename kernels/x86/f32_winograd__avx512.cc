// Winograd F(2x2, 3x3) transforms on zmm: 16 channels per vector, masked loads / stores for the
// channel tail. The math is in f32_winograd_transforms.inc; contracts in f32_winograd_list.h.
// GCC 12 reports _mm512_undefined_ps() inside its own max/min intrinsics as "may be used
// uninitialized" (a false positive of the header); it is silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/f32_winograd_list.h"

namespace octet::kernels::avx512 {
namespace {

using Vec = __m512;
using Mask = __mmask16;
constexpr size_t kLanes = 16;

inline Mask tail_mask(size_t n) { return Mask((1u << n) - 1u); }
inline Vec load_full(const float* p) { return _mm512_loadu_ps(p); }
inline Vec load_part(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
inline void store_full(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline void store_part(float* p, Vec v, Mask m) { _mm512_mask_storeu_ps(p, m, v); }
inline Vec set1(float x) { return _mm512_set1_ps(x); }
// Value second: vmaxps / vminps return the second operand when either is NaN, so NaN passes.
inline Vec clamp(Vec v, Vec lo, Vec hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }

}  // namespace

#include "kernels/f32_winograd_transforms.inc"

}  // namespace octet::kernels::avx512
