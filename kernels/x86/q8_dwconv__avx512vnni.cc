// INT8 depthwise convolution with vpdpbusd over the horizontal taps ("kw4" format of
// kernels/dwconv_list.h), 16 channels per zmm.
//
// vpdpbusd sums 4 adjacent u8 x s8 products into each int32 lane, but adjacent bytes of an
// NHWC row are different channels. So each input row is first rewritten, once, into a
// buffer whose lane (ox, c) holds the 4 bytes x[iy][ox*sw - pad_left + kx*dw][c] for
// kx = 0..3 (x_zero_point in the padding; weight 0 for kx >= kernel_w). An output pixel then
// costs kernel_h vpdpbusd per 16 channels, against kernel_h * kernel_w FMAs in FP32, and a
// buffered row serves every output row whose window covers it (3 for a 3x3 stride 1), held in
// a ring keyed by iy mod ((kernel_h - 1) * dilation_h + 1).
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

#include "kernels/dwconv_list.h"

namespace octet::kernels::avx512vnni {
namespace {

constexpr int kTile = 16;

inline __mmask16 tail_mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

template <bool XSigned>
inline __m128i load16(const uint8_t* p, __mmask16 mask) {
  const __m128i v = _mm_maskz_loadu_epi8(mask, p);
  return XSigned ? _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80))) : v;
}

// Two taps' bytes interleaved: lo = channels 0..7, hi = 8..15, as (a[c], b[c]) pairs.
struct Pairs {
  __m128i lo, hi;
};
inline Pairs interleave(__m128i a, __m128i b) { return {_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)}; }

// 16 lanes (a[c], b[c], c[c], d[c]) from the pairs (a, b) and (c, d), stored in channel order.
inline void store_quads(const Pairs& ab, const Pairs& cd, __m128i* out) {
  _mm_store_si128(out + 0, _mm_unpacklo_epi16(ab.lo, cd.lo));
  _mm_store_si128(out + 1, _mm_unpackhi_epi16(ab.lo, cd.lo));
  _mm_store_si128(out + 2, _mm_unpacklo_epi16(ab.hi, cd.hi));
  _mm_store_si128(out + 3, _mm_unpackhi_epi16(ab.hi, cd.hi));
}

// Blocks of 64 channels (the first C / 64 * 64 channels) are interleaved on zmm, 4 channel
// groups per instruction. vpunpck works within 128-bit lanes, so a block's entry holds 4
// vectors R0..R3 where R_r's lane 4j + i is channel 16j + 4r + i (j, i = 0..3): the packing
// orders the block's weights the same way, and the output packs (packssdw, packuswb) put
// the channels back in order. The rest are 16-channel groups in channel order (xmm).
constexpr size_t kBlock = 64;

template <bool XSigned>
inline __m512i load64(const uint8_t* p) {
  const __m512i v = _mm512_loadu_si512(p);
  return XSigned ? _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))) : v;
}

struct Pairs512 {
  __m512i lo, hi;
};
inline Pairs512 interleave(__m512i a, __m512i b) { return {_mm512_unpacklo_epi8(a, b), _mm512_unpackhi_epi8(a, b)}; }

inline void store_quads(const Pairs512& ab, const Pairs512& cd, __m512i* out) {
  _mm512_store_si512(out + 0, _mm512_unpacklo_epi16(ab.lo, cd.lo));
  _mm512_store_si512(out + 1, _mm512_unpackhi_epi16(ab.lo, cd.lo));
  _mm512_store_si512(out + 2, _mm512_unpacklo_epi16(ab.hi, cd.hi));
  _mm512_store_si512(out + 3, _mm512_unpackhi_epi16(ab.hi, cd.hi));
}

// Entries (ox, channel groups [g_begin, g_end)) of the kw4 row, any geometry: each tap of
// the window reads the input, or the pad row outside it and for kx >= kernel_w. Groups
// inside the 64-channel blocks are done a block at a time.
template <bool XSigned>
void build_entries(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox, size_t g_begin, size_t g_end,
                   uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t groups = (C + kTile - 1) / kTile;
  const size_t tail = C - (groups - 1) * kTile;
  const uint8_t* src[4];
  for (int kx = 0; kx < 4; ++kx) {
    const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
    src[kx] = row && kx < s.kernel_w && ix >= 0 && ix < s.in_w ? row + static_cast<size_t>(ix) * C : a.pad;
  }
  const size_t block_groups = C / kBlock * 4;
  for (size_t g = g_begin; g < block_groups; g += 4) {
    __m512i t[4];
    for (int kx = 0; kx < 4; ++kx) t[kx] = load64<XSigned>(src[kx] + g * kTile);
    store_quads(interleave(t[0], t[1]), interleave(t[2], t[3]),
                reinterpret_cast<__m512i*>(q + (static_cast<size_t>(ox) * groups + g) * 64));
  }
  if (g_begin < block_groups) g_begin = block_groups;
  __m128i* out = reinterpret_cast<__m128i*>(q + (static_cast<size_t>(ox) * groups + g_begin) * 64);
  for (size_t g = g_begin; g < g_end; ++g, out += 4) {
    const size_t c0 = g * kTile;
    __m128i t[4];
    if (g + 1 < groups || tail == kTile) {
      for (int kx = 0; kx < 4; ++kx) t[kx] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[kx] + c0));
    } else {
      for (int kx = 0; kx < 4; ++kx) t[kx] = _mm_maskz_loadu_epi8(tail_mask(tail), src[kx] + c0);
    }
    if (XSigned) {
      for (int kx = 0; kx < 4; ++kx) t[kx] = _mm_xor_si128(t[kx], _mm_set1_epi8(static_cast<char>(0x80)));
    }
    store_quads(interleave(t[0], t[1]), interleave(t[2], t[3]), out);
  }
}

// Entries [ox_begin, ox_end) of every channel group when dilation_w is 1 and all four
// taps x[ix0 .. ix0 + 3] are inside the row (a tap past kernel_w has weight 0, so reading
// the input there is harmless). Consecutive entries share interleaved pairs: with
// P(i) = (x[i], x[i + 1]), entry ox is (P(ix0), P(ix0 + 2)), so stride 1 needs one new
// load and stride 2 one new P per entry.
template <bool XSigned, int SW>
void build_interior(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox_begin, int ox_end, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t groups = (C + kTile - 1) / kTile;
  const size_t block_groups = C / kBlock * 4;
  for (size_t g = 0; g < block_groups; g += 4) {
    const uint8_t* p = row + static_cast<size_t>(ox_begin * SW - s.pad_left) * C + g * kTile;
    __m512i* out = reinterpret_cast<__m512i*>(q + (static_cast<size_t>(ox_begin) * groups + g) * 64);
    const size_t zstep = groups;  // __m512i per entry
    if constexpr (SW == 1) {
      __m512i x1 = load64<XSigned>(p + C), x3 = load64<XSigned>(p + 3 * C);
      const __m512i x2 = load64<XSigned>(p + 2 * C);
      Pairs512 p0 = interleave(load64<XSigned>(p), x1), p1 = interleave(x1, x2), p2 = interleave(x2, x3);
      for (int ox = ox_begin;;) {
        store_quads(p0, p2, out);
        if (++ox == ox_end) break;
        out += zstep;
        p += C;
        const __m512i x4 = load64<XSigned>(p + 3 * C);
        p0 = p1;
        p1 = p2;
        p2 = interleave(x3, x4);
        x3 = x4;
      }
    } else {
      Pairs512 pa = interleave(load64<XSigned>(p), load64<XSigned>(p + C));
      for (int ox = ox_begin; ox < ox_end; ++ox, out += zstep, p += 2 * C) {
        const Pairs512 pb = interleave(load64<XSigned>(p + 2 * C), load64<XSigned>(p + 3 * C));
        store_quads(pa, pb, out);
        pa = pb;
      }
    }
  }
  const size_t step = groups * 4;  // __m128i per entry
  for (size_t g = block_groups; g < groups; ++g) {
    const __mmask16 m = tail_mask(C - g * kTile < kTile ? C - g * kTile : kTile);
    const uint8_t* p = row + static_cast<size_t>(ox_begin * SW - s.pad_left) * C + g * kTile;
    __m128i* out = reinterpret_cast<__m128i*>(q + (static_cast<size_t>(ox_begin) * groups + g) * 64);
    if constexpr (SW == 1) {
      __m128i x1 = load16<XSigned>(p + C, m), x3 = load16<XSigned>(p + 3 * C, m);
      const __m128i x2 = load16<XSigned>(p + 2 * C, m);
      Pairs p0 = interleave(load16<XSigned>(p, m), x1), p1 = interleave(x1, x2), p2 = interleave(x2, x3);
      for (int ox = ox_begin;;) {
        store_quads(p0, p2, out);
        if (++ox == ox_end) break;
        out += step;
        p += C;
        const __m128i x4 = load16<XSigned>(p + 3 * C, m);
        p0 = p1;
        p1 = p2;
        p2 = interleave(x3, x4);
        x3 = x4;
      }
    } else {
      Pairs pa = interleave(load16<XSigned>(p, m), load16<XSigned>(p + C, m));
      for (int ox = ox_begin; ox < ox_end; ++ox, out += step, p += 2 * C) {
        const Pairs pb = interleave(load16<XSigned>(p + 2 * C, m), load16<XSigned>(p + 3 * C, m));
        store_quads(pa, pb, out);
        pa = pb;
      }
    }
  }
}

// Rewrites input row iy (the pad row when outside the input) into the kw4 layout:
// [out_w][channel groups of 16][16 lanes][4 bytes].
template <bool XSigned>
void build_row(const Q8DwImageRowsArgs& a, int iy, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t groups = (C + kTile - 1) / kTile;
  const uint8_t* row = iy >= 0 && iy < s.in_h ? a.x + static_cast<size_t>(iy) * s.in_w * C : nullptr;
  // Interior: ix0 = ox*sw - pad_left >= 0 and ix0 + 3 <= in_w - 1.
  int lo = s.out_w, hi = s.out_w;
  if (row && s.dilation_w == 1 && (s.stride_w == 1 || s.stride_w == 2)) {
    lo = (s.pad_left + s.stride_w - 1) / s.stride_w;
    const int last = s.in_w - 4 + s.pad_left;
    hi = last < 0 ? 0 : std::min(last / s.stride_w + 1, s.out_w);
    if (hi <= lo) lo = hi = s.out_w;
  }
  for (int ox = 0; ox < lo; ++ox) build_entries<XSigned>(a, row, ox, 0, groups, q);
  if (lo < hi) {
    if (s.stride_w == 1) {
      build_interior<XSigned, 1>(a, row, lo, hi, q);
    } else {
      build_interior<XSigned, 2>(a, row, lo, hi, q);
    }
  }
  for (int ox = hi; ox < s.out_w; ++ox) build_entries<XSigned>(a, row, ox, 0, groups, q);
}

struct Epilogue {
  __m512 lo, hi;
  __m512i zp;
  explicit Epilogue(const Q8DwEpilogue& e)
      : lo(_mm512_set1_ps(e.lo)), hi(_mm512_set1_ps(e.hi)), zp(_mm512_set1_epi32(e.zero_point)) {}

  __m512i requantize(__m512i acc, __m512 multiplier) const {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), multiplier);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    return _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
  }

  void store(uint8_t* y, __m512i acc, __m512 multiplier, __mmask16 mask) const {
    _mm512_mask_cvtepi32_storeu_epi8(y, mask, requantize(acc, multiplier));
  }
};

// One 64-channel block (groups g..g+3) of one output row: 4 accumulators in the block's lane
// order, requantized, then packssdw (q0, q1), (q2, q3) and packuswb / packsswb of the two
// restore channel order within each 128-bit lane: lane j = channels 16j .. 16j + 15. The
// values are already inside [qmin, qmax], so the saturating packs do not change them.
template <int KH>
void compute_block(const Q8DwImageRowsArgs& a, const uint8_t* const* qrows, uint8_t* y, size_t g,
                   const int32_t* w, const Epilogue& ep) {
  const Conv2dShape& s = *a.shape;
  const int kh = KH > 0 ? KH : s.kernel_h;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t pixel_bytes = (C + kTile - 1) / kTile * 64;
  const size_t words = (kh + 2) * kTile;  // one group's packed block
  const bool y_signed = a.ep.y_signed;
  auto store = [&](uint8_t* yo, const __m512i* q) {
    const __m512i q01 = _mm512_packs_epi32(q[0], q[1]), q23 = _mm512_packs_epi32(q[2], q[3]);
    _mm512_storeu_si512(yo, y_signed ? _mm512_packs_epi16(q01, q23) : _mm512_packus_epi16(q01, q23));
  };
  if constexpr (KH > 0) {
    // The block's taps, biases and multipliers (4 * KH + 8 zmm) stay in registers.
    __m512i bias[4], wv[4][KH];
    __m512 multiplier[4];
    for (int r = 0; r < 4; ++r) {
      const int32_t* wr = w + r * words;
      bias[r] = _mm512_loadu_si512(wr);
      for (int ky = 0; ky < KH; ++ky) wv[r][ky] = _mm512_loadu_si512(wr + (ky + 1) * kTile);
      multiplier[r] = _mm512_loadu_ps(reinterpret_cast<const float*>(wr + (KH + 1) * kTile));
    }
    for (int ox = 0; ox < s.out_w; ++ox, y += C) {
      __m512i q[4];
      for (int r = 0; r < 4; ++r) {
        __m512i acc = bias[r];
        for (int ky = 0; ky < KH; ++ky) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qrows[ky] + ox * pixel_bytes + (g + r) * 64), wv[r][ky]);
        }
        q[r] = ep.requantize(acc, multiplier[r]);
      }
      store(y, q);
    }
  } else {
    for (int ox = 0; ox < s.out_w; ++ox, y += C) {
      __m512i q[4];
      for (int r = 0; r < 4; ++r) {
        const int32_t* wr = w + r * words;
        __m512i acc = _mm512_loadu_si512(wr);
        for (int ky = 0; ky < kh; ++ky) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qrows[ky] + ox * pixel_bytes + (g + r) * 64),
                                    _mm512_loadu_si512(wr + (ky + 1) * kTile));
        }
        q[r] = ep.requantize(acc, _mm512_loadu_ps(reinterpret_cast<const float*>(wr + (kh + 1) * kTile)));
      }
      store(y, q);
    }
  }
}

// One output row from its kernel_h buffered input rows. KH > 0: unrolled, weights in
// registers; KH == 0: any kernel_h.
template <int KH>
void compute_row(const Q8DwImageRowsArgs& a, const uint8_t* const* qrows, uint8_t* y) {
  const Conv2dShape& s = *a.shape;
  const int kh = KH > 0 ? KH : s.kernel_h;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t groups = (C + kTile - 1) / kTile;
  const size_t pixel_bytes = groups * 64;
  const Epilogue ep(a.ep);
  const int32_t* w = a.packed;
  const size_t block_groups = C / kBlock * 4;
  for (size_t g = 0; g < block_groups; g += 4, w += 4 * (kh + 2) * kTile) {
    compute_block<KH>(a, qrows, y + g * kTile, g, w, ep);
  }
  for (size_t g = block_groups; g < groups; ++g, w += (kh + 2) * kTile) {
    const size_t c0 = g * kTile;
    const __mmask16 mask = tail_mask(C - c0 < kTile ? C - c0 : kTile);
    const __m512i bias = _mm512_loadu_si512(w);
    const __m512 multiplier = _mm512_loadu_ps(reinterpret_cast<const float*>(w + (kh + 1) * kTile));
    uint8_t* yo = y + c0;
    if constexpr (KH > 0) {
      __m512i wv[KH];
      const uint8_t* q[KH];
      for (int ky = 0; ky < KH; ++ky) {
        wv[ky] = _mm512_loadu_si512(w + (ky + 1) * kTile);
        q[ky] = qrows[ky] + g * 64;
      }
      for (int ox = 0; ox < s.out_w; ++ox, yo += C) {
        __m512i acc = bias;
        for (int ky = 0; ky < KH; ++ky) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(q[ky]), wv[ky]);
          q[ky] += pixel_bytes;
        }
        ep.store(yo, acc, multiplier, mask);
      }
    } else {
      for (int ox = 0; ox < s.out_w; ++ox, yo += C) {
        __m512i acc = bias;
        for (int ky = 0; ky < kh; ++ky) {
          acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(qrows[ky] + ox * pixel_bytes + g * 64),
                                    _mm512_loadu_si512(w + (ky + 1) * kTile));
        }
        ep.store(yo, acc, multiplier, mask);
      }
    }
  }
}

template <bool XSigned>
void image_rows(const Q8DwImageRowsArgs& a) {
  const Conv2dShape& s = *a.shape;
  const int ring = dw_kw4_ring(s);
  const size_t slot_bytes = static_cast<size_t>(s.out_w) * ((s.in_c + kTile - 1) / kTile) * 64;
  int held[kDwKw4MaxRing];
  for (int i = 0; i < ring; ++i) held[i] = INT_MIN;  // no row
  const uint8_t* qrows[kDwKw4MaxRing];
  for (int oy = a.oy_begin; oy < a.oy_end; ++oy) {
    for (int ky = 0; ky < s.kernel_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
      const int slot = ((iy % ring) + ring) % ring;
      uint8_t* q = a.scratch + slot * slot_bytes;
      if (held[slot] != iy) {
        build_row<XSigned>(a, iy, q);
        held[slot] = iy;
      }
      qrows[ky] = q;
    }
    uint8_t* y = a.y + static_cast<size_t>(oy) * s.out_w * s.in_c;
    switch (s.kernel_h) {
      case 1: compute_row<1>(a, qrows, y); break;
      case 2: compute_row<2>(a, qrows, y); break;
      case 3: compute_row<3>(a, qrows, y); break;
      default: compute_row<0>(a, qrows, y); break;
    }
  }
}

}  // namespace

void q8_dwconv_c16kw4_image_rows(const Q8DwImageRowsArgs& a) {
  a.ep.x_signed ? image_rows<true>(a) : image_rows<false>(a);
}

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
