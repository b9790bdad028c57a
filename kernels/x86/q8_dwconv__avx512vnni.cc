// INT8 depthwise convolution with vpdpbusd over the horizontal taps ("kw4" format of
// kernels/conv/dwconv_list.h), 16 channels per zmm.
//
// vpdpbusd sums 4 adjacent u8 x s8 products into each int32 lane, but adjacent bytes of an
// NHWC row are different channels. So each input row is first rewritten, once, into a
// buffer whose lane (ox, c) holds the 4 bytes x[iy][ox*sw - pad_left + kx*dw][c] for
// kx = 0..3 (x_zero_point in the padding; weight 0 for kx >= kernel_w). An output pixel then
// costs kernel_h vpdpbusd per 16 channels, against kernel_h * kernel_w FMAs in FP32, and a
// buffered row serves every output row whose window covers it (3 for a 3x3 stride 1), held in
// a ring keyed by iy mod ((kernel_h - 1) * dilation_h + 1). Kernels 5 to 8 wide take a second
// vpdpbusd per kernel row on the lane 4 * dw / sw entries further (dwconv_list.h), which holds
// taps 4..7: 10 per 16 channels for a 5x5, against 25 vpdpwssd on the int32-lane kernel.
// Exact: vpdpbusd adds the four u8 x s8 products in int32 without saturation (unlike
// vpmaddubsw). s8 activations are flipped to u8 (x ^ 0x80 = x + 128) as the rows are built;
// the driver folds -(x_zp + 128) * sum(w) into the bias for them, -x_zp * sum(w) for u8.
//
// The epilogue is requantize_value() of kernels/ref/qmath.h lane by lane: cvtdq2ps, one
// multiply, clamp in float to [qmin - zp, qmax - zp] (max then min), cvtps2dq (round half to
// even under the default MXCSR), + zp; the value is then in range, so vpmovdb stores it exactly.
// GCC 12 flags _mm512_undefined_ps() inside its own min/max intrinsics as "may be used
// uninitialized", a false positive of the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <climits>

#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/q8_dwconv_taps.h"

namespace octet::kernels::avx512vnni {
namespace {

constexpr int kTile = 16;
static_assert(kDwKw4Block == 64, "a kw4 channel range starts at a block of ChunkLayout");

inline __mmask16 tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

// Channel chunks of a kw4 entry. Each channel takes 4 bytes, so chunk [c0, c0 + n) sits at
// byte 4 * c0 of the entry, in 64-byte slots of 16 lanes:
//   blocks  64 channels, built on zmm: vpunpck works within 128-bit lanes, so the chunk's
//           4 vectors R0..R3 hold in lane 4j + i channel 16j + 4r + i (r = vector, j = 128-bit
//           lane, i = 0..3). The packing orders the weights the same way and the output packs
//           (packssdw, packuswb) restore channel order.
//   half    one chunk of 32 channels after the blocks, built on ymm: slot s (R_2s | R_2s+1)
//           holds in lane 4q + i channel 16(q % 2) + 4(2s + q / 2) + i; the packs plus one
//           vpermd restore the order.
//   groups  the last < 32 channels in 16-channel groups in channel order (xmm; the tail
//           group masked).
// One unpack instruction thus serves up to 64 channels.
struct ChunkLayout {
  size_t blocks, half, groups, group_c0;
  explicit ChunkLayout(size_t C)
      : blocks(C / 64), half((C % 64) / 32), groups((C % 32 + 15) / 16), group_c0(C / 32 * 32) {}
};

struct V128 {
  using T = __m128i;
  static T load(const uint8_t* p, size_t n) {
    return n >= 16 ? _mm_loadu_si128(reinterpret_cast<const T*>(p)) : _mm_maskz_loadu_epi8(tail_mask(n), p);
  }
  static T flip(T v) { return _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80))); }
  static T lo8(T a, T b) { return _mm_unpacklo_epi8(a, b); }
  static T hi8(T a, T b) { return _mm_unpackhi_epi8(a, b); }
  static T lo16(T a, T b) { return _mm_unpacklo_epi16(a, b); }
  static T hi16(T a, T b) { return _mm_unpackhi_epi16(a, b); }
  static void store(uint8_t* p, T v) { _mm_store_si128(reinterpret_cast<T*>(p), v); }
};

struct V256 {
  using T = __m256i;
  static T load(const uint8_t* p, size_t) { return _mm256_loadu_si256(reinterpret_cast<const T*>(p)); }
  static T flip(T v) { return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))); }
  static T lo8(T a, T b) { return _mm256_unpacklo_epi8(a, b); }
  static T hi8(T a, T b) { return _mm256_unpackhi_epi8(a, b); }
  static T lo16(T a, T b) { return _mm256_unpacklo_epi16(a, b); }
  static T hi16(T a, T b) { return _mm256_unpackhi_epi16(a, b); }
  static void store(uint8_t* p, T v) { _mm256_store_si256(reinterpret_cast<T*>(p), v); }
};

struct V512 {
  using T = __m512i;
  static T load(const uint8_t* p, size_t) { return _mm512_loadu_si512(p); }
  static T flip(T v) { return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))); }
  static T lo8(T a, T b) { return _mm512_unpacklo_epi8(a, b); }
  static T hi8(T a, T b) { return _mm512_unpackhi_epi8(a, b); }
  static T lo16(T a, T b) { return _mm512_unpacklo_epi16(a, b); }
  static T hi16(T a, T b) { return _mm512_unpackhi_epi16(a, b); }
  static void store(uint8_t* p, T v) { _mm512_store_si512(p, v); }
};

template <class V, bool XSigned>
inline typename V::T load(const uint8_t* p, size_t n) {
  const typename V::T v = V::load(p, n);
  return XSigned ? V::flip(v) : v;
}

// Two taps' bytes interleaved per 128-bit lane: (a[c], b[c]) pairs.
template <class V>
struct Pairs {
  typename V::T lo, hi;
};
template <class V>
inline Pairs<V> interleave(typename V::T a, typename V::T b) {
  return {V::lo8(a, b), V::hi8(a, b)};
}

// Lanes (a[c], b[c], c[c], d[c]) from the pairs (a, b) and (c, d): R0..R3, stored in a row.
template <class V>
inline void store_quads(const Pairs<V>& ab, const Pairs<V>& cd, uint8_t* out) {
  constexpr size_t kBytes = sizeof(typename V::T);
  V::store(out, V::lo16(ab.lo, cd.lo));
  V::store(out + kBytes, V::hi16(ab.lo, cd.lo));
  V::store(out + 2 * kBytes, V::lo16(ab.hi, cd.hi));
  V::store(out + 3 * kBytes, V::hi16(ab.hi, cd.hi));
}

// Calls f(V, c0, n) for every chunk of the layout inside the range [c_begin, c_end) of
// Q8DwImageRowsArgs (whole blocks, and the half and groups when c_end is C).
template <class F>
inline void for_each_chunk(size_t C, size_t c_begin, size_t c_end, F&& f) {
  const ChunkLayout l(C);
  for (size_t b = c_begin / 64; b < std::min(l.blocks, c_end / 64); ++b) f(V512{}, b * 64, size_t{64});
  if (c_end < C) return;
  if (l.half) f(V256{}, l.blocks * 64, size_t{32});
  for (size_t g = 0; g < l.groups; ++g) {
    const size_t c0 = l.group_c0 + g * kTile;
    f(V128{}, c0, std::min<size_t>(kTile, C - c0));
  }
}

// Entry ox of the kw4 row, any geometry: each tap of the window reads the input, or the pad
// row outside it and for kx >= kernel_w.
template <bool XSigned>
void build_entry(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t entry_bytes = dw_kw4_entry_bytes(C);
  const uint8_t* src[4];
  for (int kx = 0; kx < 4; ++kx) {
    const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
    src[kx] = row && kx < s.kernel_w && ix >= 0 && ix < s.in_w ? row + static_cast<size_t>(ix) * C : a.pad;
  }
  uint8_t* out = q + static_cast<size_t>(ox) * entry_bytes;
  for_each_chunk(C, a.c_begin, a.c_end, [&](auto v, size_t c0, size_t n) {
    using V = decltype(v);
    store_quads<V>(interleave<V>(load<V, XSigned>(src[0] + c0, n), load<V, XSigned>(src[1] + c0, n)),
                   interleave<V>(load<V, XSigned>(src[2] + c0, n), load<V, XSigned>(src[3] + c0, n)), out + 4 * c0);
  });
}

// Entries [ox_begin, ox_end) when dilation_w is 1 and all four taps x[ix0 .. ix0 + 3] are
// inside the row (a tap past kernel_w has weight 0, so reading the input there is harmless).
// Consecutive entries share interleaved pairs: with P(i) = (x[i], x[i + 1]), entry ox is
// (P(ix0), P(ix0 + 2)), so stride 1 needs one new load and stride 2 one new P per entry.
template <bool XSigned, int SW>
void build_interior(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox_begin, int ox_end, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t entry_bytes = dw_kw4_entry_bytes(C);
  for_each_chunk(C, a.c_begin, a.c_end, [&](auto v, size_t c0, size_t n) {
    using V = decltype(v);
    const uint8_t* p = row + static_cast<size_t>(ox_begin * SW - s.pad_left) * C + c0;
    uint8_t* out = q + static_cast<size_t>(ox_begin) * entry_bytes + 4 * c0;
    if constexpr (SW == 1) {
      typename V::T x1 = load<V, XSigned>(p + C, n), x3 = load<V, XSigned>(p + 3 * C, n);
      const typename V::T x2 = load<V, XSigned>(p + 2 * C, n);
      Pairs<V> p0 = interleave<V>(load<V, XSigned>(p, n), x1), p1 = interleave<V>(x1, x2),
               p2 = interleave<V>(x2, x3);
      for (int ox = ox_begin;;) {
        store_quads<V>(p0, p2, out);
        if (++ox == ox_end) break;
        out += entry_bytes;
        p += C;
        const typename V::T x4 = load<V, XSigned>(p + 3 * C, n);
        p0 = p1;
        p1 = p2;
        p2 = interleave<V>(x3, x4);
        x3 = x4;
      }
    } else {
      Pairs<V> pa = interleave<V>(load<V, XSigned>(p, n), load<V, XSigned>(p + C, n));
      for (int ox = ox_begin; ox < ox_end; ++ox, out += entry_bytes, p += 2 * C) {
        const Pairs<V> pb = interleave<V>(load<V, XSigned>(p + 2 * C, n), load<V, XSigned>(p + 3 * C, n));
        store_quads<V>(pa, pb, out);
        pa = pb;
      }
    }
  });
}

struct Epilogue {
  __m512 lo, hi;
  __m512i zp;
  explicit Epilogue(const Q8DwEpilogue& e)
      : lo(_mm512_set1_ps(e.lo)), hi(_mm512_set1_ps(e.hi)), zp(_mm512_set1_epi32(e.zero_point)) {}

  // acc * multiplier rounded, no clamp, no zero point (for Q8DwEpilogue::small_multipliers).
  static __m512i scale_round(__m512i acc, __m512 multiplier) {
    return _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), multiplier));
  }

  __m512i requantize(__m512i acc, __m512 multiplier) const {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), multiplier);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    return _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
  }

  void store(uint8_t* y, __m512i acc, __m512 multiplier, __mmask16 mask) const {
    _mm512_mask_cvtepi32_storeu_epi8(y, mask, requantize(acc, multiplier));
  }
};

// One block (kSlots = 4: 64 channels) or half block (kSlots = 2: 32 channels) of one output
// row, slots g .. g + kSlots - 1: one accumulator per slot in the chunk's lane order,
// requantized, then put back in channel order (ChunkLayout):
//   block  packssdw (q0, q1), (q2, q3) and packuswb / packsswb of the two: 128-bit lane j
//          holds channels 16j .. 16j + 15.
//   half   packssdw (q0, q1), packuswb / packsswb with itself: dword 4k + d (k = 128-bit lane,
//          d = 0, 1) holds channels 4 * (2d + k / 2) + 16 * (k % 2) + 0..3; vpermd gathers them.
// IntClamp = false: the values are already inside [qmin, qmax] (requantize()), so the
// saturating packs do not change them. IntClamp = true (small multipliers): the packs take
// round(acc * m) unclamped, the zero point is added with int16 saturation and [qmin, qmax]
// is applied to the bytes. Every step is monotone and exact inside the output range, and a
// value a step saturates lies beyond that range on the same side, so this equals
// requantize_value(): 2 byte min/max per 64 channels instead of 8 float ones.
//
// The taps are the packed words of a slot: `taps` of them, word t read at qtaps[t] (kernel row
// t / row_words, word t % row_words: dwconv_kw4_rows.inc). kTaps > 0 (== taps): the weights in
// registers, for the whole block when kSlots * (kTaps + 2) zmm fit (kTaps <= kMaxBlockWords),
// else a slot at a time (a 5x5 has 10 words a slot), its requantized vectors staged for a
// chunk of pixels and packed once the block's slots are done. kTaps == 0: any count, weights
// from memory at every pixel.
inline constexpr int kMaxBlockWords = 3;
inline constexpr int kStagedPixels = 16;
template <int kTaps, int kSlots, bool IntClamp>
void compute_block(const Q8DwImageRowsArgs& a, const uint8_t* const* qtaps, int taps, uint8_t* y, size_t g,
                   const int32_t* w, const Epilogue& ep) {
  const Conv2dShape& s = *a.shape;
  const int n_taps = kTaps > 0 ? kTaps : taps;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t pixel_bytes = dw_kw4_entry_bytes(C);
  const size_t words = (n_taps + 2) * kTile;  // one group's packed block
  const bool y_signed = a.ep.y_signed;
  const __m512i half_order = _mm512_setr_epi32(0, 8, 1, 9, 4, 12, 5, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i zp16 = _mm512_set1_epi16(static_cast<int16_t>(a.ep.zero_point));
  const __m512i qmin8 = _mm512_set1_epi8(static_cast<char>(a.ep.qmin));
  const __m512i qmax8 = _mm512_set1_epi8(static_cast<char>(a.ep.qmax));
  auto to_bytes = [&](__m512i q01, __m512i q23) {
    if constexpr (IntClamp) {
      q01 = _mm512_adds_epi16(q01, zp16);
      q23 = _mm512_adds_epi16(q23, zp16);
      if (y_signed) return _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(q01, q23), qmin8), qmax8);
      return _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(q01, q23), qmin8), qmax8);
    }
    return y_signed ? _mm512_packs_epi16(q01, q23) : _mm512_packus_epi16(q01, q23);
  };
  auto store = [&](uint8_t* yo, const __m512i* q) {
    if constexpr (kSlots == 4) {
      _mm512_storeu_si512(yo, to_bytes(_mm512_packs_epi32(q[0], q[1]), _mm512_packs_epi32(q[2], q[3])));
    } else {
      const __m512i q01 = _mm512_packs_epi32(q[0], q[1]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(yo),
                          _mm512_castsi512_si256(_mm512_permutexvar_epi32(half_order, to_bytes(q01, q01))));
    }
  };
  auto requantize = [&](__m512i acc, __m512 multiplier) {
    if constexpr (IntClamp) return Epilogue::scale_round(acc, multiplier);
    return ep.requantize(acc, multiplier);
  };
  if constexpr (kTaps > kMaxBlockWords) {
    alignas(64) __m512i stage[kStagedPixels][kSlots];
    for (int ox0 = 0; ox0 < s.out_w; ox0 += kStagedPixels) {
      const int n = std::min(kStagedPixels, s.out_w - ox0);
      for (int r = 0; r < kSlots; ++r) {
        const int32_t* wr = w + r * words;
        const __m512i bias = _mm512_loadu_si512(wr);
        __m512i wv[kTaps];
        for (int t = 0; t < kTaps; ++t) wv[t] = _mm512_loadu_si512(wr + (t + 1) * kTile);
        const __m512 multiplier = _mm512_loadu_ps(reinterpret_cast<const float*>(wr + (kTaps + 1) * kTile));
        const size_t slot = (g + r) * 64 + static_cast<size_t>(ox0) * pixel_bytes;
        for (int i = 0; i < n; ++i) {
          // Two chains: vpdpbusd's latency is hidden across the pixels, not inside one.
          __m512i acc0 = bias, acc1 = _mm512_setzero_si512();
          for (int t = 0; t + 1 < kTaps; t += 2) {
            acc0 = _mm512_dpbusd_epi32(acc0, _mm512_load_si512(qtaps[t] + slot + i * pixel_bytes), wv[t]);
            acc1 = _mm512_dpbusd_epi32(acc1, _mm512_load_si512(qtaps[t + 1] + slot + i * pixel_bytes), wv[t + 1]);
          }
          if constexpr (kTaps % 2) {
            const uint8_t* last = qtaps[kTaps - 1] + slot + i * pixel_bytes;
            acc0 = _mm512_dpbusd_epi32(acc0, _mm512_load_si512(last), wv[kTaps - 1]);
          }
          stage[i][r] = requantize(_mm512_add_epi32(acc0, acc1), multiplier);
        }
      }
      for (int i = 0; i < n; ++i, y += C) store(y, stage[i]);
    }
  } else if constexpr (kTaps > 0) {
    // The chunk's taps, biases and multipliers (kSlots * (kTaps + 2) zmm) stay in registers.
    __m512i bias[kSlots], wv[kSlots][kTaps];
    __m512 multiplier[kSlots];
    for (int r = 0; r < kSlots; ++r) {
      const int32_t* wr = w + r * words;
      bias[r] = _mm512_loadu_si512(wr);
      for (int t = 0; t < kTaps; ++t) wv[r][t] = _mm512_loadu_si512(wr + (t + 1) * kTile);
      multiplier[r] = _mm512_loadu_ps(reinterpret_cast<const float*>(wr + (kTaps + 1) * kTile));
    }
    for (int ox = 0; ox < s.out_w; ++ox, y += C) {
      __m512i q[kSlots];
      for (int r = 0; r < kSlots; ++r) {
        __m512i acc = bias[r];
        for (int t = 0; t < kTaps; ++t) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qtaps[t] + ox * pixel_bytes + (g + r) * 64), wv[r][t]);
        }
        q[r] = requantize(acc, multiplier[r]);
      }
      store(y, q);
    }
  } else {
    for (int ox = 0; ox < s.out_w; ++ox, y += C) {
      __m512i q[kSlots];
      for (int r = 0; r < kSlots; ++r) {
        const int32_t* wr = w + r * words;
        __m512i acc = _mm512_loadu_si512(wr);
        for (int t = 0; t < n_taps; ++t) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qtaps[t] + ox * pixel_bytes + (g + r) * 64),
                                    _mm512_loadu_si512(wr + (t + 1) * kTile));
        }
        q[r] = requantize(acc, _mm512_loadu_ps(reinterpret_cast<const float*>(wr + (n_taps + 1) * kTile)));
      }
      store(y, q);
    }
  }
}

// One output row from the words of its buffered input rows; kTaps as compute_block's.
template <int kTaps>
void compute_row(const Q8DwImageRowsArgs& a, const uint8_t* const* qtaps, int taps, uint8_t* y) {
  const Conv2dShape& s = *a.shape;
  const int n_taps = kTaps > 0 ? kTaps : taps;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t groups = (C + kTile - 1) / kTile;
  const size_t pixel_bytes = dw_kw4_entry_bytes(C);
  const Epilogue ep(a.ep);
  const int32_t* w = a.packed;
  const size_t words = (n_taps + 2) * kTile;  // one slot's packed weights
  const ChunkLayout layout(C);
  const size_t first_block = a.c_begin / 64, end_block = std::min(layout.blocks, a.c_end / 64);
  size_t g = 4 * first_block;  // slot
  w += g * words;
  const bool int_clamp = a.ep.small_multipliers;
  for (size_t b = first_block; b < end_block; ++b, g += 4, w += 4 * words) {
    if (int_clamp) {
      compute_block<kTaps, 4, true>(a, qtaps, taps, y + b * 64, g, w, ep);
    } else {
      compute_block<kTaps, 4, false>(a, qtaps, taps, y + b * 64, g, w, ep);
    }
  }
  if (a.c_end < C) return;
  if (layout.half) {
    if (int_clamp) {
      compute_block<kTaps, 2, true>(a, qtaps, taps, y + layout.blocks * 64, g, w, ep);
    } else {
      compute_block<kTaps, 2, false>(a, qtaps, taps, y + layout.blocks * 64, g, w, ep);
    }
    g += 2;
    w += 2 * words;
  }
  for (; g < groups; ++g, w += words) {
    const size_t c0 = layout.group_c0 + (g - (C / 32) * 2) * kTile;
    const __mmask16 mask = tail_mask(C - c0 < kTile ? C - c0 : kTile);
    const __m512i bias = _mm512_loadu_si512(w);
    const __m512 multiplier = _mm512_loadu_ps(reinterpret_cast<const float*>(w + (n_taps + 1) * kTile));
    uint8_t* yo = y + c0;
    if constexpr (kTaps > 0) {
      __m512i wv[kTaps];
      const uint8_t* q[kTaps];
      for (int t = 0; t < kTaps; ++t) {
        wv[t] = _mm512_loadu_si512(w + (t + 1) * kTile);
        q[t] = qtaps[t] + g * 64;
      }
      for (int ox = 0; ox < s.out_w; ++ox, yo += C) {
        __m512i acc = bias;
        for (int t = 0; t < kTaps; ++t) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(q[t]), wv[t]);
          q[t] += pixel_bytes;
        }
        ep.store(yo, acc, multiplier, mask);
      }
    } else {
      for (int ox = 0; ox < s.out_w; ++ox, yo += C) {
        __m512i acc = bias;
        for (int t = 0; t < n_taps; ++t) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qtaps[t] + ox * pixel_bytes + g * 64),
                                    _mm512_loadu_si512(w + (t + 1) * kTile));
        }
        ep.store(yo, acc, multiplier, mask);
      }
    }
  }
}

#include "kernels/conv/dwconv_kw4_rows.inc"

}  // namespace

void q8_dwconv_c16kw4_image_rows(const Q8DwImageRowsArgs& a) { kw4_image_rows(a); }

// The int32-lane kernels of q8_dwconv__avx512.cc with vpdpwssd, which fuses the vpmaddwd and
// the vpaddd (same exactness argument: the weight's int32 lane has a zero high half).
// For the shapes the kw4 kernel does not fit or runs slower.
namespace int32_lanes {
namespace {
inline __m512i mac(__m512i acc, __m512i x, __m512i w) { return _mm512_dpwssd_epi32(acc, x, w); }
}  // namespace

#include "kernels/x86/q8_dwconv_int32_lanes_avx512.inc"
}  // namespace int32_lanes

void q8_dwconv_c16_row(const Q8DwRowArgs& a) {
  a.ep.x_signed ? int32_lanes::row<true>(a) : int32_lanes::row<false>(a);
}

void q8_dwconv_c16_indirect(const Q8DwIndirectArgs& a) {
  a.ep.x_signed ? int32_lanes::indirect<true>(a) : int32_lanes::indirect<false>(a);
}

}  // namespace octet::kernels::avx512vnni
