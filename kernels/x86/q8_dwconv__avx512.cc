// INT8 depthwise convolution, 16 channels per zmm (kernels/dwconv_list.h has the contract).
//
// Exactness: each activation byte is widened to its own int32 lane (zero-extended for u8,
// sign-extended for s8) and multiplied with vpmaddwd against an int32 lane holding the
// weight in its low 16 bits and 0 in its high 16 bits, so the pair sum is x*w + hi(x)*0:
// the exact product, no int16 saturation possible (vpmaddubsw could saturate: 255*127*2 >
// 32767). vpmaddwd runs on both multiply pipes at the FMA's rate, vpmulld does not.
// The padding reads a row of x_zero_point bytes and the zero point is folded into the bias.
//
// The epilogue is requantize_value() of kernels/ref/qmath.h, lane by lane: cvtdq2ps,
// one multiply by the float multiplier, clamp in float to [qmin - zp, qmax - zp] (max then
// min), cvtps2dq (round half to even under the default MXCSR), + zp. The value is then in
// [qmin, qmax], so the truncating vpmovdb stores it exactly.
// GCC 12 flags _mm512_undefined_ps() inside its own min/max intrinsics as "may be used
// uninitialized", a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx512 {
namespace {

constexpr int kTile = 16;

inline __mmask16 tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

template <bool XSigned>
inline __m512i load_x(const uint8_t* p, __mmask16 mask, bool full) {
  const __m128i b = full ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_maskz_loadu_epi8(mask, p);
  return XSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

struct Epilogue {
  __m512 lo, hi;
  __m512i zp;
  explicit Epilogue(const Q8DwEpilogue& e)
      : lo(_mm512_set1_ps(e.lo)), hi(_mm512_set1_ps(e.hi)), zp(_mm512_set1_epi32(e.zero_point)) {}

  void store(uint8_t* y, __m512i acc, const int32_t* multiplier, __mmask16 mask) const {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(reinterpret_cast<const float*>(multiplier)));
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
    _mm512_mask_cvtepi32_storeu_epi8(y, mask, q);
  }
};

template <bool XSigned, int KH, int KW>
void row_fixed(const Q8DwRowArgs& a) {
  constexpr int kTaps = KH * KW;
  const Epilogue ep(a.ep);
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (kTaps + 2) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    const bool full = n == kTile;
    const __mmask16 mask = tail_mask(n);
    const __m512i bias = _mm512_loadu_si512(w);
    __m512i wv[kTaps];
    for (int t = 0; t < kTaps; ++t) wv[t] = _mm512_loadu_si512(w + (t + 1) * kTile);
    const int32_t* multiplier = w + (kTaps + 1) * kTile;
    const uint8_t* r[KH];
    for (int ky = 0; ky < KH; ++ky) r[ky] = a.rows[ky] + c0;
    uint8_t* y = a.y + c0;
    for (size_t p = 0; p < a.pixels; ++p) {
      __m512i acc0 = bias, acc1 = _mm512_setzero_si512();
      for (int ky = 0; ky < KH; ++ky) {
        for (int kx = 0; kx < KW; ++kx) {
          const __m512i prod = _mm512_madd_epi16(load_x<XSigned>(r[ky] + kx * a.tap_step, mask, full), wv[ky * KW + kx]);
          if ((ky * KW + kx) % 2 == 0) {
            acc0 = _mm512_add_epi32(acc0, prod);
          } else {
            acc1 = _mm512_add_epi32(acc1, prod);
          }
        }
        r[ky] += a.pixel_step;
      }
      ep.store(y, _mm512_add_epi32(acc0, acc1), multiplier, mask);
      y += a.channels;
    }
  }
}

template <bool XSigned>
void row_any(const Q8DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const Epilogue ep(a.ep);
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    const bool full = n == kTile;
    const __mmask16 mask = tail_mask(n);
    for (size_t p = 0; p < a.pixels; ++p) {
      __m512i acc = _mm512_loadu_si512(w);
      const int32_t* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const uint8_t* r = a.rows[ky] + p * a.pixel_step + c0;
        for (int kx = 0; kx < a.kernel_w; ++kx, wt += kTile) {
          acc = _mm512_add_epi32(acc, _mm512_madd_epi16(load_x<XSigned>(r + kx * a.tap_step, mask, full),
                                                        _mm512_loadu_si512(wt)));
        }
      }
      ep.store(a.y + p * a.channels + c0, acc, wt, mask);
    }
  }
}

template <bool XSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const Epilogue ep(a.ep);
  for (size_t p = 0; p < a.pixels; ++p) {
    const uint8_t* const* tp = a.taps + p * taps;
    const int32_t* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      const bool full = n == kTile;
      const __mmask16 mask = tail_mask(n);
      __m512i acc = _mm512_loadu_si512(w);
      for (int t = 0; t < taps; ++t) {
        acc = _mm512_add_epi32(
            acc, _mm512_madd_epi16(load_x<XSigned>(tp[t] + c0, mask, full), _mm512_loadu_si512(w + (t + 1) * kTile)));
      }
      ep.store(a.y + p * a.channels + c0, acc, w + (taps + 1) * kTile, mask);
    }
  }
}

template <bool XSigned>
void row(const Q8DwRowArgs& a) {
  if (a.kernel_h == 3 && a.kernel_w == 3) return row_fixed<XSigned, 3, 3>(a);
  if (a.kernel_h == 5 && a.kernel_w == 5) return row_fixed<XSigned, 5, 5>(a);
  row_any<XSigned>(a);
}

}  // namespace

// The output type needs no branch: the clamp already put every value in the output's range
// and vpmovdb keeps the low byte, which is the u8 or s8 encoding alike.
void q8_dwconv_c16_row(const Q8DwRowArgs& a) { a.ep.x_signed ? row<true>(a) : row<false>(a); }

void q8_dwconv_c16_indirect(const Q8DwIndirectArgs& a) {
  a.ep.x_signed ? indirect<true>(a) : indirect<false>(a);
}

}  // namespace octet::kernels::avx512
