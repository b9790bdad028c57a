// Linear-resize microkernels (kernels/resize_list.h), NEON: 4 channels per step, with
// separate multiplies and adds (ONNX Runtime's x86 arithmetic, which octet reproduces on Arm:
// its own NEON path rounds differently).
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/resize_list.h"

namespace octet::kernels::neon {
namespace {

struct Lanes {
  using V = float32x4_t;
  static constexpr size_t lanes = 4;
  static V set1(float v) { return vdupq_n_f32(v); }
  static V mul(V a, V b) { return vmulq_f32(a, b); }
  static V add(V a, V b) { return vaddq_f32(a, b); }
  static V load(const float* p) { return vld1q_f32(p); }
  static uint8x8_t load4(const void* p) {
    uint32_t bits;
    std::memcpy(&bits, p, 4);
    return vreinterpret_u8_u32(vdup_n_u32(bits));
  }
  static V load(const uint8_t* p) { return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(load4(p))))); }
  static V load(const int8_t* p) {
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(load4(p))))));
  }
  static void store(float* p, V v) { vst1q_f32(p, v); }
  static int16x8_t words(V v) {
    const int16x4_t w = vqmovn_s32(vcvtq_s32_f32(v));  // truncation toward zero, then saturation
    return vcombine_s16(w, w);
  }
  static void store(uint8_t* p, V v) { vst1_lane_u32(reinterpret_cast<uint32_t*>(p), vreinterpret_u32_u8(vqmovun_s16(words(v))), 0); }
  static void store(int8_t* p, V v) { vst1_lane_u32(reinterpret_cast<uint32_t*>(p), vreinterpret_u32_s8(vqmovn_s16(words(v))), 0); }
};

}  // namespace

#include "kernels/resize_linear_loop.inc"

}  // namespace octet::kernels::neon
