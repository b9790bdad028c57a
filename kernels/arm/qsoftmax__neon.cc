// QLinearSoftmax microkernels (kernels/qsoftmax_list.h), NEON: 4 lanes; NEON has no gather, so
// each lane's table entry is loaded into its lane.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/qsoftmax_list.h"

namespace octet::kernels::neon {
namespace {

struct Ops {
  using VI = int32x4_t;
  using VF = float32x4_t;
  static constexpr size_t kLanes = 4;
  static uint8x8_t load4(const void* p) {
    uint32_t bits;
    std::memcpy(&bits, p, 4);
    return vreinterpret_u8_u32(vdup_n_u32(bits));
  }
  static VI load(const uint8_t* p) { return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(load4(p))))); }
  static VI load(const int8_t* p) { return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(load4(p))))); }
  static VI set1(int32_t v) { return vdupq_n_s32(v); }
  static VI max(VI a, VI b) { return vmaxq_s32(a, b); }
  static VI min(VI a, VI b) { return vminq_s32(a, b); }
  static VI add(VI a, VI b) { return vaddq_s32(a, b); }
  static VI sub(VI a, VI b) { return vsubq_s32(a, b); }
  static VI bitand_(VI a, VI b) { return vandq_s32(a, b); }
  static VF set1f(float v) { return vdupq_n_f32(v); }
  static VF loadf(const float* p) { return vld1q_f32(p); }
  static VF add(VF a, VF b) { return vaddq_f32(a, b); }
  static VF mul(VF a, VF b) { return vmulq_f32(a, b); }
  static VF div(VF a, VF b) { return vdivq_f32(a, b); }
  static VF gather(const float* table, VI i) {
    VF v = vld1q_dup_f32(table + vgetq_lane_s32(i, 0));
    v = vld1q_lane_f32(table + vgetq_lane_s32(i, 1), v, 1);
    v = vld1q_lane_f32(table + vgetq_lane_s32(i, 2), v, 2);
    return vld1q_lane_f32(table + vgetq_lane_s32(i, 3), v, 3);
  }
  // fcvtns: half to even, saturating, as the scalar cast of nearbyint's result (fcvtzs) saturates.
  static VI round(VF v) { return vcvtnq_s32_f32(v); }
  // Narrowed twice without saturation: the low byte of each lane.
  static void store_bytes(void* p, VI v) {
    const uint16x4_t w = vmovn_u32(vreinterpretq_u32_s32(v));
    const uint8x8_t b = vmovn_u16(vcombine_u16(w, w));
    vst1_lane_u32(static_cast<uint32_t*>(p), vreinterpret_u32_u8(b), 0);
  }
  static void store(uint8_t* p, VI v) { store_bytes(p, v); }
  static void store(int8_t* p, VI v) { store_bytes(p, v); }
  static void store(float* p, VF v) { vst1q_f32(p, v); }
  static void store(int32_t* p, VI v) { vst1q_s32(p, v); }
};

}  // namespace

#include "kernels/qsoftmax_loop.inc"

}  // namespace octet::kernels::neon
