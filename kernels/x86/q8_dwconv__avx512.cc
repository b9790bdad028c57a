// INT8 depthwise convolution, 16 channels per zmm (kernels/conv/dwconv_list.h has the contract).
//
// Exactness: each activation byte is widened to its own int32 lane (zero-extended for u8,
// sign-extended for s8) and multiplied with vpmaddwd against an int32 lane holding the
// weight in its low 16 bits and 0 in its high 16 bits, so the pair sum is x*w + hi(x)*0:
// the exact product, no int16 saturation possible (vpmaddubsw could saturate: 255*127*2 >
// 32767). The padding reads a row of x_zero_point bytes and the zero point is folded into
// the bias. Loops and epilogue: q8_dwconv_int32_lanes_avx512.inc.
// GCC 12 flags _mm512_undefined_ps() inside its own min/max intrinsics as "may be used
// uninitialized", a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/q8_dwconv_taps.h"

namespace octet::kernels::avx512 {
namespace {
// vpmaddwd runs on both multiply pipes at the FMA's rate; vpmulld does not.
inline __m512i mac(__m512i acc, __m512i x, __m512i w) { return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w)); }
}  // namespace

#include "kernels/x86/q8_dwconv_int32_lanes_avx512.inc"

// The output type needs no branch: the clamp already put every value in the output's range
// and vpmovdb keeps the low byte, which is the u8 or s8 encoding alike.
void q8_dwconv_c16_row(const Q8DwRowArgs& a) { a.ep.x_signed ? row<true>(a) : row<false>(a); }

void q8_dwconv_c16_indirect(const Q8DwIndirectArgs& a) {
  a.ep.x_signed ? indirect<true>(a) : indirect<false>(a);
}

}  // namespace octet::kernels::avx512
