// INT8 narrow-group convolution microkernels, AArch64 dot product (ARMv8.2 SDOT): a 16-byte
// chunk is one vector, int32 lane l summing the s8 x s8 products of input quad l (u8 activations
// flipped on load, x ^ 0x80 = x - 128, folded by the packing), over the slot layout of
// kernels/conv/q8_gconv_list.h (4 slot vectors a block at G = 4, 8 at G = 8). The loops are
// kernels/conv/q8_gconv_loops.inc, the store the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::arm::neondot {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

struct Ops : NeonEpilogue {
  static constexpr int kKr = 4;
  static constexpr int kRegisters = 32;
  static Vec zero() { return vdupq_n_s32(0); }
  static Vec madd(Vec acc, Vec x, Vec w) { return vdotq_s32(acc, vreinterpretq_s8_s32(x), vreinterpretq_s8_s32(w)); }
  template <bool kFlip>
  static Vec chunk(const uint8_t* p) {
    uint8x16_t x = vld1q_u8(p);
    if (kFlip) x = veorq_u8(x, vdupq_n_u8(0x80));
    return vreinterpretq_s32_u8(x);
  }
  template <bool kFlip>
  static Vec bcast_quad(const uint8_t* p) {
    uint32_t quad;
    std::memcpy(&quad, p, 4);
    uint8x16_t x = vreinterpretq_u8_u32(vdupq_n_u32(quad));
    if (kFlip) x = veorq_u8(x, vdupq_n_u8(0x80));
    return vreinterpretq_s32_u8(x);
  }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    uint8_t bytes[16] = {};
    std::memcpy(bytes, p, n);
    return chunk<kFlip>(bytes);
  }
  // G = 4: slot vector m holds output m of the four groups: a 4x4 transpose. G = 8: vector m
  // holds output m of groups 0 and 1 in two parts each: pairwise adds, then even / odd lanes.
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    if constexpr (G == 4) {
      const int32x4x2_t a = vtrnq_s32(s[0], s[1]), b = vtrnq_s32(s[2], s[3]);
      out[0] = vcombine_s32(vget_low_s32(a.val[0]), vget_low_s32(b.val[0]));
      out[1] = vcombine_s32(vget_low_s32(a.val[1]), vget_low_s32(b.val[1]));
      out[2] = vcombine_s32(vget_high_s32(a.val[0]), vget_high_s32(b.val[0]));
      out[3] = vcombine_s32(vget_high_s32(a.val[1]), vget_high_s32(b.val[1]));
    } else {
      static_assert(G == 8);
      const Vec p0 = vpaddq_s32(s[0], s[1]), p1 = vpaddq_s32(s[2], s[3]);
      const Vec p2 = vpaddq_s32(s[4], s[5]), p3 = vpaddq_s32(s[6], s[7]);
      out[0] = vuzp1q_s32(p0, p1);
      out[1] = vuzp1q_s32(p2, p3);
      out[2] = vuzp2q_s32(p0, p1);
      out[3] = vuzp2q_s32(p2, p3);
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_neondot
#define OCTET_ROW_IF_neondot(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::arm::neondot
