// Element-wise and global-pooling microkernels, AArch64 Advanced SIMD, 4 lanes of float32 /
// int32. The FP32 kernels are kernels/eltwise_loops.inc over the Ops of kernels/arm/neon_ops.h
// (the x86 levels' template, so every path gives the same bits); tails go through small stack
// buffers, so no element outside [0, n) is read or written.
//
// The INT8 byte loops below repeat the x86 kernels' steps (kernels/x86/eltwise__avx2.cc) one for
// one: contraction is off for this file (a multiply then an add stay two roundings; the FMAs of
// QLinearAdd's recipe are written out), the clamps use the x86 operand rule on NaN, and rounding
// to integers is to nearest even.
#include "kernels/ref/fp_contract_off.h"

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/arm/neon_ops.h"
#include "kernels/elementwise/erf_coefficients.h"
#include "kernels/eltwise_list.h"
#include "kernels/ref/activation.h"  // kOneSixth, GELU's constants

namespace octet::kernels::neon {
namespace {

// ---- INT8 ----

template <class T>
constexpr bool is_unsigned() {
  return static_cast<T>(-1) > 0;
}

// 8 bytes -> two int32x4.
template <class T>
inline void widen8(const T* p, int32x4_t& lo, int32x4_t& hi) {
  if constexpr (is_unsigned<T>()) {
    const uint16x8_t w = vmovl_u8(vld1_u8(reinterpret_cast<const uint8_t*>(p)));
    lo = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(w)));
    hi = vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(w)));
  } else {
    const int16x8_t w = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(p)));
    lo = vmovl_s16(vget_low_s16(w));
    hi = vmovl_s16(vget_high_s16(w));
  }
}

// Two int32x4 already inside T's range -> 8 bytes (the low byte of each lane is the value).
inline uint8x8_t narrow8(int32x4_t lo, int32x4_t hi) {
  return vmovn_u16(vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(lo)), vmovn_u32(vreinterpretq_u32_s32(hi))));
}

// cvtps2dq(min(max(v, lo), hi)) in the x86 operand order.
inline int32x4_t clamp_round(float32x4_t v, float32x4_t lo, float32x4_t hi) {
  return vcvtnq_s32_f32(min_ps(max_ps(v, lo), hi));
}

template <class T, class Op>
void q8_binary(size_t rows, size_t cols, const void* a_bytes, size_t a_row_stride, const void* b_bytes,
               size_t b_row_stride, void* y_bytes, Op op) {
  const T* a = static_cast<const T*>(a_bytes);
  const T* b = static_cast<const T*>(b_bytes);
  T* y = static_cast<T*>(y_bytes);
  auto step8 = [&](const T* pa, const T* pb, T* py) {
    int32x4_t a0, a1, b0, b1;
    widen8(pa, a0, a1);
    widen8(pb, b0, b1);
    const int32x4_t y0 = op(vcvtq_f32_s32(a0), vcvtq_f32_s32(b0));
    const int32x4_t y1 = op(vcvtq_f32_s32(a1), vcvtq_f32_s32(b1));
    vst1_u8(reinterpret_cast<uint8_t*>(py), narrow8(y0, y1));
  };
  for (size_t r = 0; r < rows; ++r, a += a_row_stride, b += b_row_stride, y += cols) {
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) step8(a + c, b + c, y + c);
    if (c < cols) {
      T ta[8] = {}, tb[8] = {}, ty[8];
      std::memcpy(ta, a + c, cols - c);
      std::memcpy(tb, b + c, cols - c);
      step8(ta, tb, ty);
      std::memcpy(y + c, ty, cols - c);
    }
  }
}

template <class T>
void q8_gap(size_t hw, size_t channels, const void* x_bytes, void* y_bytes, const Q8GapParams& p) {
  const T* x = static_cast<const T*>(x_bytes);
  T* y = static_cast<T*>(y_bytes);
  const float32x4_t m = vdupq_n_f32(p.multiplier), lo = vdupq_n_f32(p.lo), hi = vdupq_n_f32(p.hi);
  const int32x4_t zy = vdupq_n_s32(p.y_zero_point);
  for (size_t c = 0; c < channels; c += 8) {
    const size_t width = channels - c >= 8 ? 8 : channels - c;
    int32x4_t s0 = vdupq_n_s32(p.bias), s1 = vdupq_n_s32(p.bias);
    for (size_t q = 0; q < hw; ++q) {
      const T* src = x + q * channels + c;
      T buf[8] = {};
      if (width < 8) {
        std::memcpy(buf, src, width);
        src = buf;
      }
      int32x4_t l, h;
      widen8(src, l, h);
      s0 = vaddq_s32(s0, l);
      s1 = vaddq_s32(s1, h);
    }
    const int32x4_t v0 = vaddq_s32(clamp_round(vmulq_f32(vcvtq_f32_s32(s0), m), lo, hi), zy);
    const int32x4_t v1 = vaddq_s32(clamp_round(vmulq_f32(vcvtq_f32_s32(s1), m), lo, hi), zy);
    uint8_t out[8];
    vst1_u8(out, narrow8(v0, v1));
    std::memcpy(y + c, out, width);
  }
}

}  // namespace

#include "kernels/eltwise_loops.inc"
#include "kernels/f32_act_softmax_loops.inc"

}  // namespace octet::kernels::neon
