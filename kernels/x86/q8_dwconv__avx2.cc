// INT8 depthwise convolution, 8 channels per ymm, taps taken two at a time ("tap_pairs"
// packing of kernels/conv/dwconv_list.h).
//
// Exactness: the bytes of taps t and t + 1 are interleaved (punpcklbw) and widened to int16
// (vpmovzxbw for u8, vpmovsxbw for s8), so int32 lane c holds (x_t[c], x_t+1[c]) as two int16;
// vpmaddwd against the weights (w_t[c], w_t+1[c]) returns x_t*w_t + x_t+1*w_t+1 exactly
// (|sum| <= 2 * 255 * 128, far from int32 limits; the int16 inputs cannot overflow), where
// vpmaddubsw on the bytes could saturate (255*127*2 > 32767). An odd last tap pairs with 0.
// Per two taps of 16 channels: two 16-byte loads, punpcklbw / punpckhbw, two vpmovzxbw, two
// vpmaddwd, two vpaddd (the two 8-channel blocks); the widening shuffles bound the loop.
// The epilogue is requantize_value() lane by lane (cvtdq2ps, multiply, max/min clamp,
// cvtps2dq, + zp); the clamped values fit the output type, so the saturating packs below leave
// them unchanged. Channel tails go through a small stack buffer (AVX2 has no byte-masked load
// or store).
#include <immintrin.h>

#include <cstring>

#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/q8_dwconv_taps.h"

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

// Activation bytes of channels [c, c + Width) at p: Width 16 or 8, or 0 for a tail of n < 8
// channels (through a buffer).
template <int Width>
inline __m128i load_x(const uint8_t* p, size_t n) {
  if constexpr (Width == 16) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else {
    return load8(p, Width == 8 ? kTile : n);
  }
}

// P output pixels of one window at `off` + i * pixel_step from the tap pointers, for 16
// channels (two packed blocks, `block` words apart: the low and high 8 bytes of each 16-byte
// load), 8, or a tail of n. Every tap's pointer is loaded once for the P pixels and each
// weight pair once for them, so the loop is bound by the widening shuffles, not by loads.
template <bool XSigned, bool YSigned, int P, int Width>
void window(const uint8_t* const* tap, int taps, size_t off, size_t pixel_step, size_t n, const int32_t* w,
            size_t block, const Epilogue<YSigned>& ep, uint8_t* y, size_t y_step) {
  constexpr int H = Width == 16 ? 2 : 1;
  __m256i acc[P][H];
  for (int h = 0; h < H; ++h) {
    const __m256i bias = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + h * block));
    for (int i = 0; i < P; ++i) acc[i][h] = bias;
  }
  auto add = [&](const uint8_t* p0, const uint8_t* p1, const int32_t* wp) {
    __m256i wv[H];
    for (int h = 0; h < H; ++h) wv[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + h * block));
    for (int i = 0; i < P; ++i) {
      const __m128i x0 = load_x<Width>(p0 + i * pixel_step, n);
      const __m128i x1 = p1 ? load_x<Width>(p1 + i * pixel_step, n) : _mm_setzero_si128();
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(pair<XSigned>(x0, x1), wv[0]));
      if constexpr (H == 2) {
        const __m128i hi = _mm_unpackhi_epi8(x0, x1);
        const __m256i x = XSigned ? _mm256_cvtepi8_epi16(hi) : _mm256_cvtepu8_epi16(hi);
        acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(x, wv[1]));
      }
    }
  };
  const int32_t* wp = w + kTile;
  int t = 0;
  for (; t + 1 < taps; t += 2, wp += kTile) add(tap[t] + off, tap[t + 1] + off, wp);
  if (t < taps) add(tap[t] + off, nullptr, wp), wp += kTile;
  const size_t stored = Width == 0 ? n : kTile;
  for (int i = 0; i < P; ++i) {
    for (int h = 0; h < H; ++h) ep.store(y + i * y_step + h * kTile, acc[i][h], wp + h * block, stored);
  }
}

// Every channel of P pixels: 16 at a time, then 8, then the tail.
template <bool XSigned, bool YSigned, int P>
void channels(const uint8_t* const* tap, int taps, size_t off, size_t pixel_step, size_t C, const int32_t* w,
              const Epilogue<YSigned>& ep, uint8_t* y) {
  const size_t block = block_words(taps);
  size_t c = 0;
  for (; c + 2 * kTile <= C; c += 2 * kTile, w += 2 * block) {
    window<XSigned, YSigned, P, 16>(tap, taps, off + c, pixel_step, kTile, w, block, ep, y + c, C);
  }
  if (c + kTile <= C) {
    window<XSigned, YSigned, P, 8>(tap, taps, off + c, pixel_step, kTile, w, block, ep, y + c, C);
    c += kTile;
    w += block;
  }
  if (c < C) window<XSigned, YSigned, P, 0>(tap, taps, off + c, pixel_step, C - c, w, block, ep, y + c, C);
}

template <bool XSigned, bool YSigned>
void row(const Q8DwRowArgs& a) {
  const int taps = a.kernel_h * a.kernel_w;
  const Epilogue<YSigned> ep(a.ep);
  const Q8DwRowTaps row_taps(a);
  const uint8_t* const* tap = row_taps.data();
  constexpr int kPixels = 4;
  size_t px = 0;
  for (; px + kPixels <= a.pixels; px += kPixels) {
    channels<XSigned, YSigned, kPixels>(tap, taps, px * a.pixel_step, a.pixel_step, a.channels, a.packed, ep,
                                        a.y + px * a.channels);
  }
  for (; px < a.pixels; ++px) {
    channels<XSigned, YSigned, 1>(tap, taps, px * a.pixel_step, 0, a.channels, a.packed, ep, a.y + px * a.channels);
  }
}

template <bool XSigned, bool YSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const Epilogue<YSigned> ep(a.ep);
  for (size_t px = 0; px < a.pixels; ++px) {
    channels<XSigned, YSigned, 1>(a.taps + px * a.kernel_size, a.kernel_size, 0, 0, a.channels, a.packed, ep,
                                  a.y + px * a.channels);
  }
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
