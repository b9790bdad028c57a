// INT8 depthwise convolution with SDOT over the horizontal taps ("kw4" format of
// kernels/conv/dwconv_list.h, packed Q8DwPacking::kw4_sdot), AArch64 dot product (ARMv8.2).
//
// The scheme of the x86 kw4 kernel (kernels/x86/q8_dwconv__avx512vnni.cc) on 128-bit vectors:
// each input row is rewritten once into a buffer whose int32 lane (ox, c) holds the 4 bytes
// x[iy][ox*sw - pad_left + kx*dw][c], kx = 0..3, so one SDOT adds 4 taps of 4 channels, and a
// built row serves every output row whose window covers it (the ring of
// kernels/conv/dwconv_kw4_rows.inc, shared with x86). ZIP1 / ZIP2
// interleave whole vectors (x86's unpacks stay inside 128-bit lanes), so the lanes are in
// channel order: vector k of a 16-channel slot holds channels 4k .. 4k + 3.
//
// Exact: SDOT multiplies s8 by s8 and adds the four products in int32. u8 activations are
// flipped as the rows are built (x ^ 0x80 = x - 128) and the packing folds the shift into the
// bias (-(x_zp - 128) * sum(w)); s8 ones are read as they are (-x_zp * sum(w)).
//
// Per 4 channels (a vector of each built entry), the kernel rows' words (up to 14, a 7x7) stay
// in registers while 4 output pixels at a time run along the row; the 4 pixels' vectors are
// requantized together into 16 bytes (Epilogue), bit for bit requantize_value() of
// kernels/ref/qmath.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "kernels/conv/dwconv_list.h"
#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::neondot {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

constexpr size_t kSlot = 16;        // channels per slot
constexpr size_t kSlotBytes = 64;   // a slot's bytes in a built entry (dw_kw4_entry_bytes)
constexpr int kPixels = 4;          // output pixels per step

// n (1..16) channels' bytes at p, the rest zero, as SDOT reads them (u8 flipped to s8).
template <bool XSigned>
inline uint8x16_t load_x(const uint8_t* p, size_t n) {
  uint8x16_t v;
  if (n >= kSlot) {
    v = vld1q_u8(p);
  } else {
    uint8_t bytes[kSlot] = {};
    std::memcpy(bytes, p, n);
    v = vld1q_u8(bytes);
  }
  return XSigned ? v : veorq_u8(v, vdupq_n_u8(0x80));
}

// Two taps' bytes interleaved: (a[c], b[c]) pairs, channels 0..7 in lo, 8..15 in hi.
struct Pairs {
  uint8x16_t lo, hi;
};
inline Pairs interleave(uint8x16_t a, uint8x16_t b) { return {vzip1q_u8(a, b), vzip2q_u8(a, b)}; }

// Lanes (a[c], b[c], c[c], d[c]) from the pairs (a, b) and (c, d): the slot's 4 vectors.
inline void store_quads(const Pairs& ab, const Pairs& cd, uint8_t* out) {
  const uint16x8_t ab_lo = vreinterpretq_u16_u8(ab.lo), ab_hi = vreinterpretq_u16_u8(ab.hi);
  const uint16x8_t cd_lo = vreinterpretq_u16_u8(cd.lo), cd_hi = vreinterpretq_u16_u8(cd.hi);
  vst1q_u8(out, vreinterpretq_u8_u16(vzip1q_u16(ab_lo, cd_lo)));
  vst1q_u8(out + 16, vreinterpretq_u8_u16(vzip2q_u16(ab_lo, cd_lo)));
  vst1q_u8(out + 32, vreinterpretq_u8_u16(vzip1q_u16(ab_hi, cd_hi)));
  vst1q_u8(out + 48, vreinterpretq_u8_u16(vzip2q_u16(ab_hi, cd_hi)));
}

// Calls f(c0, n) for the slots of the range [c_begin, c_end) of Q8DwImageRowsArgs.
template <class F>
inline void for_each_slot(const Q8DwImageRowsArgs& a, F&& f) {
  for (size_t c0 = a.c_begin; c0 < a.c_end; c0 += kSlot) f(c0, std::min(kSlot, a.c_end - c0));
}

// Entry ox of the kw4 row, any geometry: each tap of the window reads the input, or the pad
// row outside it and for kx >= kernel_w.
template <bool XSigned>
void build_entry(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const uint8_t* src[4];
  for (int kx = 0; kx < 4; ++kx) {
    const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
    src[kx] = row && kx < s.kernel_w && ix >= 0 && ix < s.in_w ? row + static_cast<size_t>(ix) * C : a.pad;
  }
  uint8_t* out = q + static_cast<size_t>(ox) * dw_kw4_entry_bytes(C);
  for_each_slot(a, [&](size_t c0, size_t n) {
    store_quads(interleave(load_x<XSigned>(src[0] + c0, n), load_x<XSigned>(src[1] + c0, n)),
                interleave(load_x<XSigned>(src[2] + c0, n), load_x<XSigned>(src[3] + c0, n)), out + 4 * c0);
  });
}

// Entries [ox_begin, ox_end) when dilation_w is 1 and the four taps x[ix0 .. ix0 + 3] are
// inside the row (a tap past kernel_w has weight 0, so reading the input there is harmless).
// Consecutive entries share interleaved pairs: with P(i) = (x[i], x[i + 1]), entry ox is
// (P(ix0), P(ix0 + 2)), so stride 1 needs one new load and stride 2 one new P per entry.
template <bool XSigned, int SW>
void build_interior(const Q8DwImageRowsArgs& a, const uint8_t* row, int ox_begin, int ox_end, uint8_t* q) {
  const Conv2dShape& s = *a.shape;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t step = dw_kw4_entry_bytes(C);
  for_each_slot(a, [&](size_t c0, size_t n) {
    const uint8_t* p = row + static_cast<size_t>(ox_begin * SW - s.pad_left) * C + c0;
    uint8_t* out = q + static_cast<size_t>(ox_begin) * step + 4 * c0;
    if constexpr (SW == 1) {
      uint8x16_t x1 = load_x<XSigned>(p + C, n), x3 = load_x<XSigned>(p + 3 * C, n);
      const uint8x16_t x2 = load_x<XSigned>(p + 2 * C, n);
      Pairs p0 = interleave(load_x<XSigned>(p, n), x1), p1 = interleave(x1, x2), p2 = interleave(x2, x3);
      for (int ox = ox_begin;;) {
        store_quads(p0, p2, out);
        if (++ox == ox_end) break;
        out += step;
        p += C;
        const uint8x16_t x4 = load_x<XSigned>(p + 3 * C, n);
        p0 = p1;
        p1 = p2;
        p2 = interleave(x3, x4);
        x3 = x4;
      }
    } else {
      Pairs pa = interleave(load_x<XSigned>(p, n), load_x<XSigned>(p + C, n));
      for (int ox = ox_begin; ox < ox_end; ++ox, out += step, p += 2 * C) {
        const Pairs pb = interleave(load_x<XSigned>(p + 2 * C, n), load_x<XSigned>(p + 3 * C, n));
        store_quads(pa, pb, out);
        pa = pb;
      }
    }
  });
}

// The four pixels' vectors of one slot vector requantized into 16 bytes with the IGEMM's
// four-vector epilogue (NeonEpilogue::requantize4, kernels/arm/q8_neon_epilogue.inc, whose
// exactness argument is kernels/gemm/q8_igemm_store.inc's): a narrowing store per vector costs
// more than a 3x3's dot products.
struct Epilogue {
  NeonEpilogue::QuadBounds bounds;
  explicit Epilogue(const Q8DwEpilogue& e) : bounds(NeonEpilogue::quad_bounds(e.lo, e.hi, e.zero_point)) {}
  uint8x16_t bytes(const int32x4_t (&acc)[4], float32x4_t multiplier) const {
    const float32x4_t m[4] = {multiplier, multiplier, multiplier, multiplier};
    return NeonEpilogue::requantize4(acc, m, bounds);
  }
};

// Bytes 4i .. 4i + n - 1 of `bytes` to y + i * stride, i < R (n channels of R pixels).
template <int R>
inline void store_pixels(uint8x16_t bytes, uint8_t* y, size_t stride, size_t n) {
  if (R == kPixels && n == 4) {
    const uint32x4_t words = vreinterpretq_u32_u8(bytes);
    vst1q_lane_u32(reinterpret_cast<uint32_t*>(y), words, 0);
    vst1q_lane_u32(reinterpret_cast<uint32_t*>(y + stride), words, 1);
    vst1q_lane_u32(reinterpret_cast<uint32_t*>(y + 2 * stride), words, 2);
    vst1q_lane_u32(reinterpret_cast<uint32_t*>(y + 3 * stride), words, 3);
    return;
  }
  uint8_t lanes[16];
  vst1q_u8(lanes, bytes);
  for (int i = 0; i < R; ++i) std::memcpy(y + i * stride, lanes + 4 * i, n);
}

// One vector of a slot (4 channels, n of them real): its packed block ([bias][taps words]
// [multiplier], lanes 16 apart), the words in registers when their count is known (kTaps > 0).
template <int kTaps>
struct VectorWeights {
  static constexpr int kHeld = kTaps > 0 ? kTaps : 1;
  const int32_t* w;
  int taps;
  int32x4_t bias;
  float32x4_t multiplier;
  int8x16_t held[kHeld];
  VectorWeights(const int32_t* wk, int n_taps)
      : w(wk), taps(kTaps > 0 ? kTaps : n_taps), bias(vld1q_s32(wk)),
        multiplier(vld1q_f32(reinterpret_cast<const float*>(wk + (taps + 1) * kSlot))) {
    if constexpr (kTaps > 0) {
      for (int t = 0; t < kTaps; ++t) held[t] = word(t);
    }
  }
  int8x16_t word(int t) const { return vreinterpretq_s8_s32(vld1q_s32(w + (t + 1) * kSlot)); }
  int8x16_t operator[](int t) const {
    if constexpr (kTaps > 0) return held[t];
    return word(t);
  }
};

// R (<= kPixels) output pixels of one vector: word t of pixel i at qtaps[t] + at + i *
// pixel_bytes; n of its 4 channels stored.
template <int kTaps, int R>
inline void vector_pixels(const VectorWeights<kTaps>& wv, const uint8_t* const* qtaps, size_t at, size_t pixel_bytes,
                          const Epilogue& ep, uint8_t* y, size_t C, size_t n) {
  int32x4_t acc[kPixels];  // all four go through the epilogue; only R are stored
  for (int i = 0; i < kPixels; ++i) acc[i] = wv.bias;
  for (int t = 0; t < wv.taps; ++t) {
    const int8x16_t wt = wv[t];
    const uint8_t* p = qtaps[t] + at;
    for (int i = 0; i < R; ++i) acc[i] = vdotq_s32(acc[i], vreinterpretq_s8_u8(vld1q_u8(p + i * pixel_bytes)), wt);
  }
  store_pixels<R>(ep.bytes(acc, wv.multiplier), y, C, n);
}

// One output row from the words of its buffered input rows: `taps` words (word t read at
// qtaps[t]: kernel row t / row_words, word t % row_words). kTaps > 0 (== taps): the count
// known at compile time, the words in registers and the loops unrolled; 0: any count.
template <int kTaps>
void compute_row(const Q8DwImageRowsArgs& a, const uint8_t* const* qtaps, int taps, uint8_t* y) {
  const Conv2dShape& s = *a.shape;
  const int n_taps = kTaps > 0 ? kTaps : taps;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t pixel_bytes = dw_kw4_entry_bytes(C);
  const size_t slot_words = static_cast<size_t>(n_taps + 2) * kSlot;  // a slot's packed weights
  const Epilogue ep(a.ep);
  for_each_slot(a, [&](size_t c0, size_t n_slot) {
    const int32_t* w = a.packed + c0 / kSlot * slot_words;
    const size_t slot_byte = c0 / kSlot * kSlotBytes;
    for (size_t k = 0; 4 * k < n_slot; ++k) {  // vector k: channels c0 + 4k ..
      const VectorWeights<kTaps> wv(w + 4 * k, n_taps);
      const size_t n = std::min<size_t>(4, n_slot - 4 * k);
      for (int ox = 0; ox < s.out_w; ox += kPixels) {
        const size_t at = static_cast<size_t>(ox) * pixel_bytes + slot_byte + 16 * k;
        uint8_t* yo = y + static_cast<size_t>(ox) * C + c0 + 4 * k;
        switch (std::min(kPixels, s.out_w - ox)) {
          case 4: vector_pixels<kTaps, 4>(wv, qtaps, at, pixel_bytes, ep, yo, C, n); break;
          case 3: vector_pixels<kTaps, 3>(wv, qtaps, at, pixel_bytes, ep, yo, C, n); break;
          case 2: vector_pixels<kTaps, 2>(wv, qtaps, at, pixel_bytes, ep, yo, C, n); break;
          default: vector_pixels<kTaps, 1>(wv, qtaps, at, pixel_bytes, ep, yo, C, n); break;
        }
      }
    }
  });
}

#include "kernels/conv/dwconv_kw4_rows.inc"

}  // namespace

void q8_dwconv_c16kw4_image_rows(const Q8DwImageRowsArgs& a) { kw4_image_rows(a); }

}  // namespace octet::kernels::neondot
