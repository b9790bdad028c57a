#pragma once
// The AArch64 Advanced SIMD vector of 4 float32 lanes that the shared loop templates are
// written over (kernels/elementwise/eltwise_loops.inc, f32_act_softmax_loops.inc, f32_dwconv_loops.inc,
// pool_loops.inc: each template's header lists what it uses), with the x86 levels' semantics
// so every path gives the same bits: min / max return the second operand on NaN (maxps /
// minps, kernels/arm/x86_minmax.inc), round goes to nearest even. A Mask is a lane count:
// lanes [0, n) are live, and a partial vector goes through a stack buffer of one vector, so no
// element outside [0, n) is read or written. With the byte vectors of the max pool. Included
// only by the NEON level's files (which then do not include x86_minmax.inc themselves):
// everything has internal linkage, so each file compiles its own copy with its own flags.
#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace octet::kernels::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"


struct Ops {
  using Vec = float32x4_t;
  using Mask = size_t;
  static constexpr int kLanes = 4;
  static constexpr bool kBufferedTail = true;
  static constexpr int kRegisters = 32;  // v0-v31

  static Mask tail_mask(size_t n) { return n; }
  static Mask first_lanes(size_t n) { return n >= 4 ? 4 : n; }
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec load_tail(const float* p, Mask n) {
    if (n == 4) return vld1q_f32(p);
    float lanes[4] = {};
    std::memcpy(lanes, p, n * sizeof(float));
    return vld1q_f32(lanes);
  }
  static void store_tail(float* p, Vec v, Mask n) {
    if (n == 4) return vst1q_f32(p, v);
    float lanes[4];
    vst1q_f32(lanes, v);
    std::memcpy(p, lanes, n * sizeof(float));
  }
  static Vec set1(float v) { return vdupq_n_f32(v); }
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static Vec sub(Vec a, Vec b) { return vsubq_f32(a, b); }
  static Vec mul(Vec a, Vec b) { return vmulq_f32(a, b); }
  static Vec div(Vec a, Vec b) { return vdivq_f32(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return vfmaq_f32(c, a, b); }
  // Element I of each group of G (2 or 4) lanes in all the group's lanes: a dup by lane, which
  // the compiler folds into the FMA that uses it (fmla by element), or a trn1 / trn2.
  template <int G, int I>
  static Vec dup_in_groups(Vec v) {
    static_assert((G == 2 || G == 4) && I >= 0 && I < G);
    if constexpr (G == 4) return vdupq_laneq_f32(v, I);
    else if constexpr (I == 0) return vtrn1q_f32(v, v);
    else return vtrn2q_f32(v, v);
  }
  static Vec min(Vec a, Vec b) { return min_ps(a, b); }
  static Vec max(Vec a, Vec b) { return max_ps(a, b); }
  static Vec round(Vec v) { return vrndnq_f32(v); }
  static Vec neg_abs(Vec v) {
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x80000000u)));
  }
  static Vec sqrt(Vec v) { return vsqrtq_f32(v); }
  static Vec abs(Vec v) { return vabsq_f32(v); }
  static Vec copy_sign(Vec magnitude, Vec sign) { return vbslq_f32(vdupq_n_u32(0x80000000u), sign, magnitude); }
  static Vec select_less(Vec x, Vec t, Vec a, Vec b) { return vbslq_f32(vcltq_f32(x, t), a, b); }
  static Vec select_negative(Vec x, Vec a, Vec b) { return vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), a, b); }
  static Vec select_gt(Vec a, Vec b, Vec x, Vec y) { return vbslq_f32(vcgtq_f32(a, b), x, y); }
  // A positive normal x as m * 2^k, m in [sqrt(1/2), sqrt(2)): returns m and sets k (a float).
  // Subtracting sqrt(1/2)'s bits moves the exponent boundary there, so the arithmetic shift of
  // the difference is k and the mantissa keeps x's bits less k in the exponent field.
  static Vec split_exponent(Vec x, Vec& k) {
    const int32x4_t bits = vreinterpretq_s32_f32(x);
    const int32x4_t e = vshrq_n_s32(vsubq_s32(bits, vdupq_n_s32(0x3f3504f3)), 23);
    k = vcvtq_f32_s32(e);
    return vreinterpretq_f32_s32(vsubq_s32(bits, vshlq_n_s32(e, 23)));
  }
  static Vec select_ge(Vec a, Vec b, Vec x, Vec y) { return vbslq_f32(vcgeq_f32(a, b), x, y); }
  // No gather instruction: lane i is loaded from p[i * stride] by itself.
  using Idx = size_t;
  static Idx lane_offsets(size_t stride) { return stride; }
  static Vec gather(const float* p, Idx stride, Mask n) {
    if (n == 4) {
      Vec v = vld1q_dup_f32(p);
      v = vld1q_lane_f32(p + stride, v, 1);
      v = vld1q_lane_f32(p + 2 * stride, v, 2);
      return vld1q_lane_f32(p + 3 * stride, v, 3);
    }
    float lanes[4] = {};
    for (size_t i = 0; i < n; ++i) lanes[i] = p[i * stride];
    return vld1q_f32(lanes);
  }
  // 2^n as two exact power-of-two factors 2^(n/2) and 2^(n - n/2), each a normal float for
  // n >= -150, so only the last multiply rounds (into subnormals too): the AVX2 level's slow
  // path, whose bits its fast path also gives. FCVTNS turns a NaN n into 0; the select returns
  // the NaN z instead.
  static Vec pow2_times(Vec p, Vec n, Vec z) {
    const int32x4_t ni = vcvtnq_s32_f32(n);
    const int32x4_t n1 = vshrq_n_s32(ni, 1);
    const int32x4_t n2 = vsubq_s32(ni, n1);
    const float32x4_t f1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    const float32x4_t f2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    return vbslq_f32(vceqq_f32(z, z), vmulq_f32(vmulq_f32(p, f1), f2), z);
  }
};

// A vector of 16 bytes of signedness E (int8_t or uint8_t), for the max pool; a Mask is a byte
// count, a partial vector goes through a stack buffer.
template <class E>
struct Bytes {
  using Vec = uint8x16_t;
  using Mask = size_t;
  static constexpr size_t kLanes = 16;
  static constexpr bool kBufferedTail = true;
  static Mask tail_mask(size_t n) { return n; }
  static Vec load(const uint8_t* p) { return vld1q_u8(p); }
  static void store(uint8_t* p, Vec v) { vst1q_u8(p, v); }
  static Vec load_tail(const uint8_t* p, Mask n) {
    uint8_t lanes[16] = {};
    std::memcpy(lanes, p, n);
    return vld1q_u8(lanes);
  }
  static void store_tail(uint8_t* p, Vec v, Mask n) {
    uint8_t lanes[16];
    vst1q_u8(lanes, v);
    std::memcpy(p, lanes, n);
  }
  static Vec lowest() { return vdupq_n_u8(static_cast<uint8_t>(std::numeric_limits<E>::lowest())); }
  static Vec max(Vec v, Vec best) {
    if constexpr (std::is_signed_v<E>) return vreinterpretq_u8_s8(vmaxq_s8(vreinterpretq_s8_u8(v), vreinterpretq_s8_u8(best)));
    else return vmaxq_u8(v, best);
  }
};
template <class E>
using BytesNarrow = Bytes<E>;

// kLanes bytes widened to int32 lanes (VI), beside kLanes floats (VF): the lanes of the INT8
// loops that compute in int32 or float (kernels/elementwise/qsoftmax_loop.inc, resize_linear_loop.inc).
struct I32Lanes {
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
  static VF loadf(const float* p) { return vld1q_f32(p); }
  static VF loadf(const uint8_t* p) { return vcvtq_f32_s32(load(p)); }
  static VF loadf(const int8_t* p) { return vcvtq_f32_s32(load(p)); }
  static VI set1(int32_t v) { return vdupq_n_s32(v); }
  static VI max(VI a, VI b) { return vmaxq_s32(a, b); }
  static VI min(VI a, VI b) { return vminq_s32(a, b); }
  static VI add(VI a, VI b) { return vaddq_s32(a, b); }
  static VI sub(VI a, VI b) { return vsubq_s32(a, b); }
  static VI bitand_(VI a, VI b) { return vandq_s32(a, b); }
  static VF set1f(float v) { return vdupq_n_f32(v); }
  static VF add(VF a, VF b) { return vaddq_f32(a, b); }
  static VF mul(VF a, VF b) { return vmulq_f32(a, b); }
  static VF div(VF a, VF b) { return vdivq_f32(a, b); }
  // No gather on NEON: each lane's entry is loaded into its lane.
  static VF gather(const float* table, VI i) {
    VF v = vld1q_dup_f32(table + vgetq_lane_s32(i, 0));
    v = vld1q_lane_f32(table + vgetq_lane_s32(i, 1), v, 1);
    v = vld1q_lane_f32(table + vgetq_lane_s32(i, 2), v, 2);
    return vld1q_lane_f32(table + vgetq_lane_s32(i, 3), v, 3);
  }
  // fcvtns: half to even, saturating, as the scalar cast of nearbyint's result (fcvtzs) saturates.
  static VI round(VF v) { return vcvtnq_s32_f32(v); }
  // Narrowed twice without saturation: the low byte of each lane.
  static void store_low_bytes(void* p, VI v) {
    const uint16x4_t w = vmovn_u32(vreinterpretq_u32_s32(v));
    const uint8x8_t b = vmovn_u16(vcombine_u16(w, w));
    vst1_lane_u32(static_cast<uint32_t*>(p), vreinterpret_u32_u8(b), 0);
  }
  static void store(float* p, VF v) { vst1q_f32(p, v); }
  static void store(int32_t* p, VI v) { vst1q_s32(p, v); }
  // Truncated toward zero to int32, then narrowed with saturation.
  static int16x8_t truncated_words(VF v) {
    const int16x4_t w = vqmovn_s32(vcvtq_s32_f32(v));
    return vcombine_s16(w, w);
  }
  static void store_truncated(uint8_t* p, VF v) {
    vst1_lane_u32(reinterpret_cast<uint32_t*>(p), vreinterpret_u32_u8(vqmovun_s16(truncated_words(v))), 0);
  }
  static void store_truncated(int8_t* p, VF v) {
    vst1_lane_u32(reinterpret_cast<uint32_t*>(p), vreinterpret_u32_s8(vqmovn_s16(truncated_words(v))), 0);
  }
  // kLanes values of T of which the first n (< kLanes) are read, the rest zero.
  template <class T>
  static VI load_part(const T* p, size_t n) {
    T buf[kLanes] = {};
    std::memcpy(buf, p, n);
    return load(buf);
  }
  static VF to_float(VI v) { return vcvtq_f32_s32(v); }
  // min(max(v, lo), hi) in the x86 operand order: lo when v is NaN.
  static VF clamp(VF v, VF lo, VF hi) { return min_ps(max_ps(v, lo), hi); }
  // 4 * kLanes int32 already inside T's range -> as many bytes (the low byte of each lane).
  template <class T>
  static void store_narrow4(T* p, VI v0, VI v1, VI v2, VI v3) {
    auto narrow8 = [](VI a, VI b) {
      return vmovn_u16(vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(a)), vmovn_u32(vreinterpretq_u32_s32(b))));
    };
    vst1q_u8(reinterpret_cast<uint8_t*>(p), vcombine_u8(narrow8(v0, v1), narrow8(v2, v3)));
  }
  // AArch64's vector divide is cheap enough that QuantizeLinear divides every vector, as its
  // definition does, with no reciprocal shortcut to guard.
  static constexpr bool kFastDivide = true;
  static VF sub(VF a, VF b) { return vsubq_f32(a, b); }
  // The second operand when either is NaN, as x86's vminps / vmaxps.
  static VF min(VF a, VF b) { return min_ps(a, b); }
  static VF max(VF a, VF b) { return max_ps(a, b); }
  static VF abs(VF v) { return vabsq_f32(v); }
  static VI bits(VF v) { return vreinterpretq_s32_f32(v); }
  static bool any_greater(VF a, VF b) { return vmaxvq_u32(vcgtq_f32(a, b)) != 0; }
};

}  // namespace
}  // namespace octet::kernels::neon
