// INT8 narrow-group convolution microkernels, AArch64 Advanced SIMD without the dot product: a
// chunk of 8 input channels sign-extended to int16 (u8 activations flipped on load, x ^ 0x80 =
// x - 128, folded by the packing), multiplied by int16 weights (|product| <= 128 * 128: exact in
// int16) and added pairwise into the int32 lanes (sadalp), so lane l sums input pair l, over the
// slot layout of kernels/conv/q8_gconv_list.h at KR 2 (two chunks a block; 8 slot vectors a block
// at G = 4, 16 at G = 8). The loops are kernels/conv/q8_gconv_loops.inc, the store the IGEMM's.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/conv/q8_gconv_list.h"

namespace octet::kernels::arm::neon {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

struct Ops : NeonEpilogue {
  static constexpr int kKr = 2;
  static constexpr int kRegisters = 32;
  static Vec zero() { return vdupq_n_s32(0); }
  static Vec madd(Vec acc, Vec x, Vec w) {
    return vpadalq_s16(acc, vmulq_s16(vreinterpretq_s16_s32(x), vreinterpretq_s16_s32(w)));
  }
  template <bool kFlip>
  static Vec widen(uint8x8_t x) {
    if (kFlip) x = veor_u8(x, vdup_n_u8(0x80));
    return vreinterpretq_s32_s16(vmovl_s8(vreinterpret_s8_u8(x)));
  }
  template <bool kFlip>
  static Vec chunk(const uint8_t* p) {
    return widen<kFlip>(vld1_u8(p));
  }
  template <bool kFlip>
  static Vec chunk_tail(const uint8_t* p, size_t n) {
    uint8_t bytes[8] = {};
    std::memcpy(bytes, p, n);
    return widen<kFlip>(vld1_u8(bytes));
  }
  // Per chunk c, slot vector m (of 4 at G = 4, of 8 at G = 8) holds output m of the chunk's
  // groups in parts: pairwise adds sum the parts, even / odd lanes split two groups.
  template <int G>
  static void natural(const Vec* s, Vec* out) {
    for (int c = 0; c < 2; ++c) {
      if constexpr (G == 4) {
        const Vec p = vpaddq_s32(s[4 * c], s[4 * c + 1]), q = vpaddq_s32(s[4 * c + 2], s[4 * c + 3]);
        out[2 * c] = vuzp1q_s32(p, q);
        out[2 * c + 1] = vuzp2q_s32(p, q);
      } else {
        static_assert(G == 8);
        const Vec* v = s + 8 * c;
        out[2 * c] = vpaddq_s32(vpaddq_s32(v[0], v[1]), vpaddq_s32(v[2], v[3]));
        out[2 * c + 1] = vpaddq_s32(vpaddq_s32(v[4], v[5]), vpaddq_s32(v[6], v[7]));
      }
    }
  }
};

#include "kernels/gemm/q8_igemm_store.inc"
#include "kernels/conv/q8_gconv_loops.inc"

}  // namespace

#undef OCTET_ROW_IF_neon
#define OCTET_ROW_IF_neon(...) __VA_ARGS__
#include "kernels/conv/q8_gconv_define.inc"

}  // namespace octet::kernels::arm::neon
