// QuantizeLinear (per tensor) and the range pass of DynamicQuantizeLinear on AArch64 Advanced
// SIMD, bit-exact with quantize_value() / f32_range__ref (kernels/ref/qmath.h, qlinear.h).
// AArch64 has a vector divide, so x / scale is computed exactly as the scalar rule does (no
// reciprocal shortcut to guard); the clamp keeps the scalar rule's NaN handling (a NaN
// quotient becomes the lower bound), FCVTNS rounds half to even.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/elementwise/quantize.h"

namespace octet::kernels::neon {

void q8_quantize(size_t n, const float* x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax, void* y) {
  const float l = static_cast<float>(qmin - zero_point), h = static_cast<float>(qmax - zero_point);
  const float32x4_t vscale = vdupq_n_f32(scale), lo = vdupq_n_f32(l), hi = vdupq_n_f32(h);
  const int32x4_t zp = vdupq_n_s32(zero_point);
  auto* out = static_cast<uint8_t*>(y);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    int32x4_t q[2];
    for (int half = 0; half < 2; ++half) {
      float32x4_t v = vdivq_f32(vld1q_f32(x + i + 4 * half), vscale);
      v = vbslq_f32(vcgeq_f32(v, lo), v, lo);  // !(v >= l): l, NaN included
      v = vbslq_f32(vcgtq_f32(v, hi), hi, v);
      q[half] = vaddq_s32(vcvtnq_s32_f32(v), zp);
    }
    const uint16x8_t halves = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(q[0])), vmovn_u32(vreinterpretq_u32_s32(q[1])));
    vst1_u8(out + i, vmovn_u16(halves));
  }
  for (; i < n; ++i) {
    float v = x[i] / scale;
    if (!(v >= l)) v = l;
    if (v > h) v = h;
    out[i] = static_cast<uint8_t>(static_cast<int32_t>(__builtin_nearbyintf(v)) + zero_point);
  }
}

// A NaN anywhere is tracked apart and returned for both bounds.
void f32_range(size_t n, const float* x, float* min, float* max) {
  float32x4_t lo = vdupq_n_f32(__builtin_inff()), hi = vdupq_n_f32(-__builtin_inff());
  uint32x4_t ordered = vdupq_n_u32(~0u);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    ordered = vandq_u32(ordered, vceqq_f32(v, v));
    lo = vminq_f32(lo, v);
    hi = vmaxq_f32(hi, v);
  }
  bool any_nan = vminvq_u32(ordered) == 0;
  float rmin = any_nan ? 0.0f : vminvq_f32(lo), rmax = any_nan ? 0.0f : vmaxvq_f32(hi);
  for (; i < n; ++i) {
    any_nan |= x[i] != x[i];
    rmin = x[i] < rmin ? x[i] : rmin;
    rmax = x[i] > rmax ? x[i] : rmax;
  }
  if (any_nan) rmin = rmax = __builtin_nanf("");
  *min = rmin;
  *max = rmax;
}

// Bytes widened to int32, the zero point subtracted (exact), converted (exact: |x - zp| <= 510)
// and multiplied: the ref's one rounding.
void q8_dequantize(size_t n, const void* x, bool is_signed, float scale, int32_t zero_point, float* y) {
  const auto* bytes = static_cast<const uint8_t*>(x);
  const int32x4_t zp = vdupq_n_s32(zero_point);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint8x8_t b = vld1_u8(bytes + i);
    const int16x8_t wide = is_signed ? vmovl_s8(vreinterpret_s8_u8(b)) : vreinterpretq_s16_u16(vmovl_u8(b));
    const int32x4_t lo = vsubq_s32(vmovl_s16(vget_low_s16(wide)), zp);
    const int32x4_t hi = vsubq_s32(vmovl_s16(vget_high_s16(wide)), zp);
    vst1q_f32(y + i, vmulq_n_f32(vcvtq_f32_s32(lo), scale));
    vst1q_f32(y + i + 4, vmulq_n_f32(vcvtq_f32_s32(hi), scale));
  }
  for (; i < n; ++i) {
    const int32_t q = is_signed ? int32_t(static_cast<int8_t>(bytes[i])) : int32_t(bytes[i]);
    y[i] = static_cast<float>(q - zero_point) * scale;
  }
}

}  // namespace octet::kernels::neon
