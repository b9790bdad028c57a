// INT8 depthwise convolution, 8 channels per step (two int32x4 accumulators), any kernel size
// (kernels/conv/dwconv_list.h has the contract; weights packed Q8DwPacking::int32_taps).
//
// Exactness: each activation byte is widened to int16 (zero-extended for u8, sign-extended
// for s8) and multiplied with SMLAL against the weight, the low 16 bits of its packed int32
// lane: exact products summed in int32, like the x86 kernels. The padding reads a row of
// x_zero_point bytes and the zero point is folded into the bias. The epilogue is
// requantize_value() of kernels/ref/qmath.h lane by lane: float(acc) * multiplier, clamp in
// float to [qmin - zp, qmax - zp] (max then min, maxps / minps's operand rule), round half to
// even (FCVTNS), + zp; the result is inside the output type, so its low byte is stored.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/q8_dwconv_taps.h"

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"

constexpr int kTile = 8;

template <bool XSigned>
inline int16x8_t load_x(const uint8_t* p, size_t n) {
  uint8x8_t b;
  if (n == kTile) {
    b = vld1_u8(p);
  } else {
    uint8_t lanes[kTile] = {};
    std::memcpy(lanes, p, n);
    b = vld1_u8(lanes);
  }
  return XSigned ? vmovl_s8(vreinterpret_s8_u8(b)) : vreinterpretq_s16_u16(vmovl_u8(b));
}

struct Acc {
  int32x4_t lo, hi;
};

struct Epilogue {
  float32x4_t lo, hi;
  int32x4_t zp;
  explicit Epilogue(const Q8DwEpilogue& e) : lo(vdupq_n_f32(e.lo)), hi(vdupq_n_f32(e.hi)), zp(vdupq_n_s32(e.zero_point)) {}

  int32x4_t requantize(int32x4_t acc, const int32_t* multiplier) const {
    float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc), vld1q_f32(reinterpret_cast<const float*>(multiplier)));
    v = min_ps(max_ps(v, lo), hi);
    return vaddq_s32(vcvtnq_s32_f32(v), zp);
  }
  void store(uint8_t* y, Acc acc, const int32_t* multiplier, size_t n) const {
    const int32x4_t q_lo = requantize(acc.lo, multiplier), q_hi = requantize(acc.hi, multiplier + 4);
    const uint16x8_t halves = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(q_lo)), vmovn_u32(vreinterpretq_u32_s32(q_hi)));
    const uint8x8_t bytes = vmovn_u16(halves);
    if (n == kTile) {
      vst1_u8(y, bytes);
    } else {
      uint8_t lanes[kTile];
      vst1_u8(lanes, bytes);
      std::memcpy(y, lanes, n);
    }
  }
};

// P output pixels of one window, 8 channels (a tail of n): tap t of pixel i at tap[t] + off +
// i * pixel_step. The weights are narrowed once per tap for the P pixels.
template <bool XSigned, int P>
void window(const uint8_t* const* tap, int taps, size_t off, size_t pixel_step, size_t n, const int32_t* w,
            const Epilogue& ep, uint8_t* y, size_t y_step) {
  Acc acc[P];
  const Acc bias{vld1q_s32(w), vld1q_s32(w + 4)};
  for (int i = 0; i < P; ++i) acc[i] = bias;
  const int32_t* wt = w + kTile;
  for (int t = 0; t < taps; ++t, wt += kTile) {
    const int16x4_t w_lo = vmovn_s32(vld1q_s32(wt)), w_hi = vmovn_s32(vld1q_s32(wt + 4));
    const uint8_t* p = tap[t] + off;
    for (int i = 0; i < P; ++i) {
      const int16x8_t x = load_x<XSigned>(p + i * pixel_step, n);
      acc[i] = {vmlal_s16(acc[i].lo, vget_low_s16(x), w_lo), vmlal_s16(acc[i].hi, vget_high_s16(x), w_hi)};
    }
  }
  for (int i = 0; i < P; ++i) ep.store(y + i * y_step, acc[i], wt, n);
}

template <bool XSigned, int P>
void channels(const uint8_t* const* tap, int taps, size_t off, size_t pixel_step, size_t C, const int32_t* w,
              const Epilogue& ep, uint8_t* y) {
  for (size_t c0 = 0; c0 < C; c0 += kTile, w += (taps + 2) * kTile) {
    const size_t n = C - c0 < kTile ? C - c0 : kTile;
    window<XSigned, P>(tap, taps, off + c0, pixel_step, n, w, ep, y + c0, C);
  }
}

// Any kernel size: the flat tap list (kernels/conv/q8_dwconv_taps.h), 4 pixels at a time.
template <bool XSigned>
void row(const Q8DwRowArgs& a) {
  const Epilogue ep(a.ep);
  const Q8DwRowTaps taps(a);
  constexpr int kPixels = 4;
  size_t p = 0;
  for (; p + kPixels <= a.pixels; p += kPixels) {
    channels<XSigned, kPixels>(taps.data(), taps.size(), p * a.pixel_step, a.pixel_step, a.channels, a.packed, ep,
                               a.y + p * a.channels);
  }
  for (; p < a.pixels; ++p) {
    channels<XSigned, 1>(taps.data(), taps.size(), p * a.pixel_step, 0, a.channels, a.packed, ep, a.y + p * a.channels);
  }
}

template <bool XSigned>
void indirect(const Q8DwIndirectArgs& a) {
  const Epilogue ep(a.ep);
  for (size_t p = 0; p < a.pixels; ++p) {
    channels<XSigned, 1>(a.taps + p * a.kernel_size, a.kernel_size, 0, 0, a.channels, a.packed, ep,
                         a.y + p * a.channels);
  }
}

}  // namespace

void q8_dwconv_c8_row(const Q8DwRowArgs& a) { a.ep.x_signed ? row<true>(a) : row<false>(a); }

void q8_dwconv_c8_indirect(const Q8DwIndirectArgs& a) { a.ep.x_signed ? indirect<true>(a) : indirect<false>(a); }

}  // namespace octet::kernels::neon
