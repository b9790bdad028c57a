// INT8 depthwise convolution, 8 channels per ymm (kernels/dwconv_list.h has the contract).
// Exactness as in q8_dwconv__avx512.cc: each activation in its own int32 lane, vpmaddwd
// against the weight in the low half of an int32 lane whose high half is 0, so the product is
// exact and no int16 pair sum can saturate. The epilogue is requantize_value() lane by lane
// (cvtdq2ps, multiply, max/min clamp, cvtps2dq, + zp); the clamped values fit the output
// type, so the saturating packs below leave them unchanged. Channel tails go through a small
// stack buffer (AVX2 has no byte-masked load or store).
#include <immintrin.h>

#include <cstring>

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx2 {
namespace {

constexpr int kTile = 8;

template <bool XSigned>
inline __m256i load_x(const uint8_t* p, size_t n) {
  __m128i b;
  if (n == kTile) {
    b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  } else {
    alignas(16) uint8_t tmp[16] = {};
    std::memcpy(tmp, p, n);
    b = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
  }
  return XSigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

template <bool YSigned>
struct Epilogue {
  __m256 lo, hi;
  __m256i zp;
  explicit Epilogue(const Q8DwEpilogue& e)
      : lo(_mm256_set1_ps(e.lo)), hi(_mm256_set1_ps(e.hi)), zp(_mm256_set1_epi32(e.zero_point)) {}

  void store(uint8_t* y, __m256i acc, const int32_t* multiplier, size_t n) const {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(reinterpret_cast<const float*>(multiplier)));
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
    const __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    const __m128i q8 = YSigned ? _mm_packs_epi16(q16, q16) : _mm_packus_epi16(q16, q16);
    if (n == kTile) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y), q8);
    } else {
      alignas(16) uint8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), q8);
      std::memcpy(y, tmp, n);
    }
  }
};

template <bool XSigned, bool YSigned, int KH, int KW>
void row_fixed(const Q8DwRowArgs& a) {
  constexpr int kTaps = KH * KW;
  const Epilogue<YSigned> ep(a.ep);
  const size_t channels = a.channels, pixels = a.pixels, pixel_step = a.pixel_step, tap_step = a.tap_step;
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < channels; c0 += kTile, w += (kTaps + 2) * kTile) {
    const size_t n = channels - c0 < kTile ? channels - c0 : kTile;
    const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    __m256i wv[kTaps];
    for (int t = 0; t < kTaps; ++t) wv[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (t + 1) * kTile));
    const int32_t* multiplier = w + (kTaps + 1) * kTile;
    const uint8_t* r[KH];
    for (int ky = 0; ky < KH; ++ky) r[ky] = a.rows[ky] + c0;
    uint8_t* y = a.y + c0;
    for (size_t p = 0; p < pixels; ++p) {
      __m256i acc0 = bias, acc1 = _mm256_setzero_si256();
      for (int ky = 0; ky < KH; ++ky) {
        for (int kx = 0; kx < KW; ++kx) {
          const __m256i prod = _mm256_madd_epi16(load_x<XSigned>(r[ky] + kx * tap_step, n), wv[ky * KW + kx]);
          if ((ky * KW + kx) % 2 == 0) {
            acc0 = _mm256_add_epi32(acc0, prod);
          } else {
            acc1 = _mm256_add_epi32(acc1, prod);
          }
        }
        r[ky] += pixel_step;
      }
      ep.store(y, _mm256_add_epi32(acc0, acc1), multiplier, n);
      y += channels;
    }
  }
}

template <bool XSigned, bool YSigned>
void row_any(const Q8DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const Epilogue<YSigned> ep(a.ep);
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    for (size_t p = 0; p < a.pixels; ++p) {
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const int32_t* wt = w + kTile;
      for (int ky = 0; ky < a.kernel_h; ++ky) {
        const uint8_t* r = a.rows[ky] + p * a.pixel_step + c0;
        for (int kx = 0; kx < a.kernel_w; ++kx, wt += kTile) {
          acc = _mm256_add_epi32(acc, _mm256_madd_epi16(load_x<XSigned>(r + kx * a.tap_step, n),
                                                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt))));
        }
      }
      ep.store(a.y + p * a.channels + c0, acc, wt, n);
    }
  }
}

template <bool XSigned, bool YSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const Epilogue<YSigned> ep(a.ep);
  for (size_t p = 0; p < a.pixels; ++p) {
    const uint8_t* const* tp = a.taps + p * taps;
    const int32_t* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += (taps + 2) * kTile) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      for (int t = 0; t < taps; ++t) {
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(load_x<XSigned>(tp[t] + c0, n),
                                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (t + 1) * kTile))));
      }
      ep.store(a.y + p * a.channels + c0, acc, w + (taps + 1) * kTile, n);
    }
  }
}

template <bool XSigned, bool YSigned>
void row(const Q8DwRowArgs& a) {
  if (a.kernel_h == 3 && a.kernel_w == 3) return row_fixed<XSigned, YSigned, 3, 3>(a);
  if (a.kernel_h == 5 && a.kernel_w == 5) return row_fixed<XSigned, YSigned, 5, 5>(a);
  row_any<XSigned, YSigned>(a);
}

}  // namespace

void q8_dwconv_c8_row(const Q8DwRowArgs& a) {
  if (a.ep.x_signed) {
    a.ep.y_signed ? row<true, true>(a) : row<true, false>(a);
  } else {
    a.ep.y_signed ? row<false, true>(a) : row<false, false>(a);
  }
}

void q8_dwconv_c8_indirect(const Q8DwIndirectArgs& a) {
  if (a.ep.x_signed) {
    a.ep.y_signed ? indirect<true, true>(a) : indirect<true, false>(a);
  } else {
    a.ep.y_signed ? indirect<false, true>(a) : indirect<false, false>(a);
  }
}

}  // namespace octet::kernels::avx2
