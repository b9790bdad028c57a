// INT8 depthwise convolution, 8 channels per ymm, taps taken two at a time ("tap_pairs"
// packing of kernels/conv/dwconv_list.h).
//
// Exactness: the bytes of taps t and t + 1 are interleaved (punpcklbw) and widened to int16
// (vpmovzxbw for u8, vpmovsxbw for s8), so int32 lane c holds (x_t[c], x_t+1[c]) as two int16;
// vpmaddwd against the weights (w_t[c], w_t+1[c]) returns x_t*w_t + x_t+1*w_t+1 exactly
// (|sum| <= 2 * 255 * 128, far from int32 limits; the int16 inputs cannot overflow), where
// vpmaddubsw on the bytes could saturate (255*127*2 > 32767). An odd last tap pairs with 0.
// Per two taps: two 8-byte loads, punpcklbw, vpmovzxbw, vpmaddwd, vpaddd, against two
// widenings, two vpmaddwd and two vpaddd one tap at a time.
// The epilogue is requantize_value() lane by lane (cvtdq2ps, multiply, max/min clamp,
// cvtps2dq, + zp); the clamped values fit the output type, so the saturating packs below leave
// them unchanged. Channel tails go through a small stack buffer (AVX2 has no byte-masked load
// or store).
#include <immintrin.h>

#include <cstring>

#include "kernels/conv/dwconv_list.h"

namespace octet::kernels::avx2 {
namespace {

constexpr int kTile = 8;

inline __m128i load8(const uint8_t* p, size_t n) {
  if (n == kTile) return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  alignas(16) uint8_t tmp[16] = {};
  std::memcpy(tmp, p, n);
  return _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
}

// Lane c = (a[c], b[c]) as int16.
template <bool XSigned>
inline __m256i pair(__m128i a, __m128i b) {
  const __m128i ab = _mm_unpacklo_epi8(a, b);
  return XSigned ? _mm256_cvtepi8_epi16(ab) : _mm256_cvtepu8_epi16(ab);
}

inline __m256i mac(__m256i acc, __m256i x, const int32_t* w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
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

// Words of one channel block: bias', the tap pairs, the multiplier.
constexpr int block_words(int taps) { return (1 + (taps + 1) / 2 + 1) * kTile; }

// One channel block of a row; Full: all 8 channels (plain 8-byte loads and stores).
template <bool XSigned, bool YSigned, int KH, int KW, bool Full>
void row_block(const Q8DwRowArgs& a, size_t c0, size_t n, const int32_t* w, const Epilogue<YSigned>& ep) {
  constexpr int kTaps = KH * KW;
  constexpr int kPairs = (kTaps + 1) / 2;
  const size_t channels = a.channels, pixels = a.pixels, pixel_step = a.pixel_step, tap_step = a.tap_step;
  const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  __m256i wv[kPairs];
  for (int p = 0; p < kPairs; ++p) wv[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (p + 1) * kTile));
  const int32_t* multiplier = w + (kPairs + 1) * kTile;
  const uint8_t* r[KH];
  for (int ky = 0; ky < KH; ++ky) r[ky] = a.rows[ky] + c0;
  auto x = [&](int t) { return load8(r[t / KW] + (t % KW) * tap_step, Full ? kTile : n); };
  uint8_t* y = a.y + c0;
  for (size_t px = 0; px < pixels; ++px) {
    __m256i acc0 = bias, acc1 = _mm256_setzero_si256();
    for (int p = 0; p < kPairs; ++p) {
      const __m128i hi = 2 * p + 1 < kTaps ? x(2 * p + 1) : _mm_setzero_si128();
      const __m256i prod = _mm256_madd_epi16(pair<XSigned>(x(2 * p), hi), wv[p]);
      if (p % 2 == 0) {
        acc0 = _mm256_add_epi32(acc0, prod);
      } else {
        acc1 = _mm256_add_epi32(acc1, prod);
      }
    }
    for (int ky = 0; ky < KH; ++ky) r[ky] += pixel_step;
    ep.store(y, _mm256_add_epi32(acc0, acc1), multiplier, Full ? kTile : n);
    y += channels;
  }
}

template <bool XSigned, bool YSigned, int KH, int KW>
void row_fixed(const Q8DwRowArgs& a) {
  const Epilogue<YSigned> ep(a.ep);
  const int32_t* w = a.packed;
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += block_words(KH * KW)) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    if (n == kTile) {
      row_block<XSigned, YSigned, KH, KW, true>(a, c0, n, w, ep);
    } else {
      row_block<XSigned, YSigned, KH, KW, false>(a, c0, n, w, ep);
    }
  }
}

template <bool XSigned, bool YSigned>
void row_any(const Q8DwRowArgs& a) {
  const int kw = a.kernel_w, taps = a.kernel_h * a.kernel_w;
  const Epilogue<YSigned> ep(a.ep);
  const int32_t* w = a.packed;
  auto tap_ptr = [&](size_t px, int t, size_t c0) {
    return a.rows[t / kw] + px * a.pixel_step + (t % kw) * a.tap_step + c0;
  };
  for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += block_words(taps)) {
    const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
    for (size_t px = 0; px < a.pixels; ++px) {
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const int32_t* wp = w + kTile;
      for (int t = 0; t < taps; t += 2, wp += kTile) {
        const __m128i hi = t + 1 < taps ? load8(tap_ptr(px, t + 1, c0), n) : _mm_setzero_si128();
        acc = mac(acc, pair<XSigned>(load8(tap_ptr(px, t, c0), n), hi), wp);
      }
      ep.store(a.y + px * a.channels + c0, acc, wp, n);
    }
  }
}

template <bool XSigned, bool YSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const int taps = a.kernel_size;
  const Epilogue<YSigned> ep(a.ep);
  for (size_t px = 0; px < a.pixels; ++px) {
    const uint8_t* const* tp = a.taps + px * taps;
    const int32_t* w = a.packed;
    for (size_t c0 = 0; c0 < a.channels; c0 += kTile, w += block_words(taps)) {
      const size_t n = a.channels - c0 < kTile ? a.channels - c0 : kTile;
      __m256i acc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const int32_t* wp = w + kTile;
      for (int t = 0; t < taps; t += 2, wp += kTile) {
        const __m128i hi = t + 1 < taps ? load8(tp[t + 1] + c0, n) : _mm_setzero_si128();
        acc = mac(acc, pair<XSigned>(load8(tp[t] + c0, n), hi), wp);
      }
      ep.store(a.y + px * a.channels + c0, acc, wp, n);
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
