// The two element-wise passes around the FP32 depthwise conv on the dynamic path
// (kernels/conv/dequantized_epilogue.h) on AArch64 Advanced SIMD, bit-exact with the scalar
// loops: float(x - zero_point) is exact, the epilogue rounds the multiply and the add apart
// (contraction off, no FMA) and clamps as std::min(std::max(v, lo), hi), a NaN passing.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/conv/dequantized_epilogue.h"

namespace octet::kernels::neon {

#include "kernels/arm/x86_minmax.inc"

void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(x);
  const int32x4_t zp = vdupq_n_s32(zero_point);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint8x8_t b = vld1_u8(bytes + i);
    const int16x8_t w = is_signed ? vmovl_s8(vreinterpret_s8_u8(b)) : vreinterpretq_s16_u16(vmovl_u8(b));
    vst1q_f32(out + i, vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(w)), zp)));
    vst1q_f32(out + i + 4, vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_high_s16(w)), zp)));
  }
  for (; i < n; ++i) {
    const int32_t v = is_signed ? int32_t(static_cast<int8_t>(bytes[i])) : int32_t(bytes[i]);
    out[i] = static_cast<float>(v - zero_point);
  }
}

void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo,
                          float hi) {
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  auto clamp = [&](float32x4_t v) {
    return min_ps(vhi, max_ps(vlo, v));  // std::min(std::max(v, lo), hi), a NaN passing
  };
  for (size_t p = 0; p < pixels; ++p, y += channels) {
    size_t c = 0;
    for (; c + 4 <= channels; c += 4) {
      float32x4_t v = vmulq_f32(vld1q_f32(y + c), vld1q_f32(scale + c));
      if (bias != nullptr) v = vaddq_f32(v, vld1q_f32(bias + c));
      vst1q_f32(y + c, clamp(v));
    }
    for (; c < channels; ++c) {
      float v = y[c] * scale[c];
      if (bias != nullptr) v = v + bias[c];
      v = v < lo ? lo : v;
      y[c] = hi < v ? hi : v;
    }
  }
}

}  // namespace octet::kernels::neon
